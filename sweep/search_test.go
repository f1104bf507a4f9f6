package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/internal/fault"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/sweep"
	"goldstone/trialio"
)

// searchPipeline is a test pipeline of one node per trial whose stage
// scores its settings at once, (x-0.3)^2 plus 0.5 for shape b plus
// seed/1000, and appends the trial's name to the file that
// $GOLDSTONE_SEARCH_TEST_LOG names when it has written its outputs: how
// many times each trial ran to its end.
type searchPipeline struct{}

type searchSettings struct {
	settings.Seeded
	X     float64 `set:"x" default:"0.5" doc:"the searched float"`
	Shape string  `set:"shape" default:"a" oneof:"a b" doc:"the searched choice"`
}

func (searchPipeline) Name() string  { return "test-search" }
func (searchPipeline) Settings() any { return &searchSettings{} }
func (searchPipeline) Build(_ context.Context, b *experiment.Built, _ *experiment.Experiment, trials []experiment.Trial, _ experiment.Env) error {
	for _, tr := range trials {
		id := "score/" + tr.Slug()
		s := settings.MustDecode[searchSettings](tr.Settings)
		b.Add(&pipeline.Node{ID: id, Stage: &searchStage{s: s, name: tr.Name}, Outputs: []string{"result"}})
		b.AddTrial(tr, id, id)
	}
	return nil
}

func init() { experiment.Register(searchPipeline{}) }

type searchStage struct {
	s    searchSettings
	name string
}

func (s *searchStage) Name() string    { return "search-test" }
func (s *searchStage) Version() string { return "1" }
func (s *searchStage) Params() any {
	return map[string]any{"x": s.s.X, "shape": s.s.Shape, "seed": s.s.Seed}
}
func (s *searchStage) Run(ctx context.Context, io *pipeline.IO) error {
	fault.Point("test-search:stage")
	d := s.s.X - 0.3
	v := float64(d*d) + float64(s.s.Seed)/1000
	if s.s.Shape == "b" {
		v += 0.5
	}
	dir := io.Output("result")
	ser := &trialio.Series{}
	ser.Add("obj", 0, v)
	if err := trialio.WriteSeries(filepath.Join(dir, "series.arrow"), ser); err != nil {
		return err
	}
	if err := trialio.WriteSummary(filepath.Join(dir, "summary.json"), trialio.Summary{"obj": v}); err != nil {
		return err
	}
	if p := os.Getenv("GOLDSTONE_SEARCH_TEST_LOG"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, s.name); err != nil {
			return err
		}
	}
	return nil
}

const searchExperiment = `
[experiments.srch]
pipeline = "test-search"
[experiments.srch.grid]
seed = [1, 2]
[experiments.srch.search]
sampler = "tpe"
trials = 16
wave = 4
seed = 5
objective = "obj"
direction = "minimize"
[experiments.srch.search.space]
x = { uniform = [0.0, 1.0] }
shape = { choice = ["a", "b"] }
`

func searchExp(t *testing.T) *experiment.Experiment {
	t.Helper()
	cfg, err := experiment.ParseConfig("t.toml", []byte(searchExperiment))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Experiments["srch"]
}

// runSearch runs the test search in dir (results.db, work/).
func runSearch(ctx context.Context, dir string, jobs int) (*sweep.Outcome, error) {
	cfg, err := experiment.ParseConfig("t.toml", []byte(searchExperiment))
	if err != nil {
		return nil, err
	}
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return sweep.Search(ctx, st, cfg.Experiments["srch"], sweep.Local{}, sweep.RunOptions{WorkDir: filepath.Join(dir, "work"), Jobs: jobs, Cores: 2})
}

// TestSearchHelper is the search run as a separate process by
// TestSearchResumesAfterKill (it does nothing otherwise).
func TestSearchHelper(t *testing.T) {
	dir := os.Getenv("GOLDSTONE_SEARCH_HELPER")
	if dir == "" {
		t.Skip("run by TestSearchResumesAfterKill")
	}
	jobs := 2
	if os.Getenv("GOLDSTONE_SEARCH_HELPER_JOBS") == "1" {
		jobs = 1
	}
	if _, err := runSearch(context.Background(), dir, jobs); err != nil {
		t.Fatal(err)
	}
}

// searchResults are the trials of the latest run in dir: id -> status and
// summary, and the names of the suggestions' variants in order.
func searchResults(t *testing.T, dir string) (map[string]string, map[string]map[string]float64) {
	t.Helper()
	ctx := context.Background()
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	last, err := st.LatestRun(ctx, "srch", runs.KindRun)
	if err != nil || last == nil {
		t.Fatalf("latest run: %v %v", last, err)
	}
	ts, err := st.Trials(ctx, last.ID)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, tr := range ts {
		status[tr.ID] = tr.Status
	}
	sums, err := st.Summaries(ctx, last.ID)
	if err != nil {
		t.Fatal(err)
	}
	return status, sums
}

// TestSearchResumesAfterKill: a search killed with SIGKILL between waves or
// in the middle of one (a trial's stage) and run again ends with the same
// trials and values as one that ran uninterrupted (at --jobs 1; the
// resumed one at 2), and no trial ran to its end twice.
func TestSearchResumesAfterKill(t *testing.T) {
	ref := t.TempDir()
	out, err := runSearch(context.Background(), ref, 1)
	if err != nil {
		t.Fatal(err)
	}
	if out.Trials != 32 || out.Done != 32 || out.Status != runs.StatusFinished {
		t.Fatalf("reference search: %d trials, %d done, status %s; want 32, 32, finished", out.Trials, out.Done, out.Status)
	}
	wantStatus, wantSums := searchResults(t, ref)
	// The model's waves are not the random ones: after 12 random points
	// (startup 10, waves of 4), TPE proposes points near x = 0.3 with
	// shape a.
	e := searchExp(t)
	checkTPEWave(t, ref, e)

	for _, kill := range []string{"search:wave@1", "search:wave@3", "test-search:stage@7", "test-search:stage@29"} {
		t.Run(kill, func(t *testing.T) {
			dir := t.TempDir()
			log := filepath.Join(dir, "completed.log")
			cmd := exec.Command(os.Args[0], "-test.run=^TestSearchHelper$", "-test.count=1")
			// The killed search runs one trial at a time, so that no other
			// trial is between its log line and its cache entry when the
			// kill comes (that one would run again, rightly); the resumed
			// one runs two at a time.
			cmd.Env = append(os.Environ(), "GOLDSTONE_SEARCH_HELPER="+dir, "GOLDSTONE_SEARCH_HELPER_JOBS=1", fault.Env+"="+kill, "GOLDSTONE_SEARCH_TEST_LOG="+log)
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the search was not killed at %s: %v", kill, err)
			}
			cmd = exec.Command(os.Args[0], "-test.run=^TestSearchHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "GOLDSTONE_SEARCH_HELPER="+dir, "GOLDSTONE_SEARCH_TEST_LOG="+log)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("resumed search: %v\n%s", err, b)
			}
			gotStatus, gotSums := searchResults(t, dir)
			if !reflect.DeepEqual(gotStatus, wantStatus) || !reflect.DeepEqual(gotSums, wantSums) {
				t.Fatalf("resumed search differs from the uninterrupted one:\n got %v\nwant %v", gotSums, wantSums)
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			names := strings.Fields(strings.ReplaceAll(string(b), " seed=", "/seed="))
			slices.Sort(names)
			if d := len(names) - len(slices.Compact(slices.Clone(names))); d != 0 || len(names) != 32 {
				t.Fatalf("%d trial completions for 32 trials (%d repeated): %v", len(names), d, names)
			}
		})
	}
}

// checkTPEWave checks that the last wave (TPE's, from the first 12
// results) lies nearer the optimum than the random startup on average.
func checkTPEWave(t *testing.T, dir string, e *experiment.Experiment) {
	t.Helper()
	ctx := context.Background()
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	last, _ := st.LatestRun(ctx, "srch", runs.KindRun)
	params, err := st.TrialParams(ctx, last.ID)
	if err != nil {
		t.Fatal(err)
	}
	var startup, model []float64
	for _, p := range params {
		var idx int
		if _, err := fmt.Sscanf(strings.Trim(p["variant"], `"`), "s%d", &idx); err != nil {
			t.Fatalf("variant %q: %v", p["variant"], err)
		}
		var x float64
		fmt.Sscan(p["x"], &x)
		d := math.Abs(x - 0.3)
		if strings.Contains(p["shape"], "b") {
			d += 1
		}
		if idx < 12 {
			startup = append(startup, d)
		} else {
			model = append(model, d)
		}
	}
	mean := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	if len(model) != 8 || mean(model) >= mean(startup) {
		t.Fatalf("TPE wave: %d trials, mean distance %.3f; random startup %.3f: want nearer", len(model), mean(model), mean(startup))
	}
}
