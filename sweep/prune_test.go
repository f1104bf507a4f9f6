package sweep_test

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"goldstone/experiment"
	"goldstone/internal/fault"
	"goldstone/runs"
	"goldstone/sweep"
)

// prunedExperiment is a TPE search with ASHA on a tiny artificial chain:
// 9 points to step 3, the best third on to 9 and then 27 (rungs 27/3^k),
// in waves of 3.
const prunedExperiment = `
[experiments.pr]
pipeline = "artificial"
[experiments.pr.settings]
time_steps = 4
rows = 5
cols = 4
steps = 27
clip = 0.01
lr_s0 = 100.0
gauge_gap_every = 2
snapshots = [0, 5]
[experiments.pr.grid]
seed = [1]
[experiments.pr.search]
sampler = "tpe"
trials = 9
wave = 3
seed = 3
objective = "final_loss"
direction = "minimize"
pruner = "asha"
min_steps = 3
eta = 3
[experiments.pr.search.space]
lr = { log_uniform = [0.1, 3.0] }
gauge = { choice = ["none", "goldstone"] }
k1 = { int = [2, 6], when = { gauge = ["goldstone"] } }
`

func prunedExp(t testing.TB) *experiment.Experiment {
	t.Helper()
	cfg, err := experiment.ParseConfig("t.toml", []byte(prunedExperiment))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Experiments["pr"]
}

func runPruned(ctx context.Context, dir string, e *experiment.Experiment, jobs int) (*sweep.Outcome, error) {
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	opts := sweep.RunOptions{WorkDir: filepath.Join(dir, "work"), Jobs: jobs, Cores: 2, LogDir: filepath.Join(dir, "logs")}
	if e.Search != nil {
		return sweep.Search(ctx, st, e, sweep.Local{}, opts)
	}
	return sweep.Execute(ctx, st, e, sweep.Local{}, opts)
}

// TestPrunedSearchHelper is the pruned search run as a separate process by
// TestPrunedSearchResumesAfterKill (it does nothing otherwise).
func TestPrunedSearchHelper(t *testing.T) {
	dir := os.Getenv("GOLDSTONE_PRUNED_HELPER")
	if dir == "" {
		t.Skip("run by TestPrunedSearchResumesAfterKill")
	}
	jobs := 2
	if os.Getenv("GOLDSTONE_PRUNED_HELPER_JOBS") == "1" {
		jobs = 1
	}
	if _, err := runPruned(context.Background(), dir, prunedExp(t), jobs); err != nil {
		t.Fatal(err)
	}
}

// prunedRun is what a pruned search recorded: every trial's status, its
// summary metrics but timings, its series, and where the pruned ones
// stopped.
type prunedRun struct {
	status map[string]string
	sums   map[string]map[string]float64
	series map[string]map[string][]runs.Point
	pruned map[string]runs.Pruned
	names  map[string]string // trial id -> name ("s3@9 seed=1")
}

func readPruned(t *testing.T, dir, experiment string) *prunedRun {
	t.Helper()
	ctx := context.Background()
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	last, err := st.LatestRun(ctx, experiment, runs.KindRun)
	if err != nil || last == nil {
		t.Fatalf("latest run: %v %v", last, err)
	}
	r := &prunedRun{status: map[string]string{}, names: map[string]string{}}
	ts, err := st.TrialTable(ctx, last.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		r.status[tr.ID], r.names[tr.ID] = tr.Status, tr.Name
	}
	if r.sums, err = st.Summaries(ctx, last.ID); err != nil {
		t.Fatal(err)
	}
	for _, m := range r.sums {
		for k := range m {
			if strings.HasSuffix(k, "_seconds") {
				delete(m, k)
			}
		}
	}
	if r.series, err = st.RunSeries(ctx, last.ID); err != nil {
		t.Fatal(err)
	}
	if r.pruned, err = st.PrunedTrials(ctx, last.ID); err != nil {
		t.Fatal(err)
	}
	return r
}

// sameValues compares two recordings bit for bit (NaN equal to NaN).
func sameValues(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || math.Float64bits(v) != math.Float64bits(w) {
			return false
		}
	}
	return true
}

func samePruned(t *testing.T, got, want *prunedRun) {
	t.Helper()
	if !reflect.DeepEqual(got.status, want.status) || !reflect.DeepEqual(got.pruned, want.pruned) {
		t.Fatalf("trials or pruning decisions differ:\n got %v %v\nwant %v %v", got.status, got.pruned, want.status, want.pruned)
	}
	for id, m := range want.sums {
		if !sameValues(got.sums[id], m) {
			t.Fatalf("trial %s (%s): summary %v, want %v", id, want.names[id], got.sums[id], m)
		}
	}
	if !reflect.DeepEqual(got.series, want.series) {
		t.Fatal("series differ")
	}
}

// TestPrunedSearchResumesAfterKill: a pruned search killed with SIGKILL
// between waves, inside a trial's training, or between its last wave and
// the pruning marks, at --jobs 1 or 2, and run again, ends with the same
// trials, pruning decisions and values as one that ran uninterrupted.
func TestPrunedSearchResumesAfterKill(t *testing.T) {
	ref := t.TempDir()
	out, err := runPruned(context.Background(), ref, prunedExp(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != runs.StatusFinished {
		t.Fatalf("reference search: status %s", out.Status)
	}
	want := readPruned(t, ref, "pr")
	// 9 points to step 3; ASHA promotes the best third of the results at a
	// rung as they come (wave by wave), so at least 3 went to step 9 and 1
	// to 27; every point that stopped short of 27 is marked where.
	rung := map[string]int{}
	for _, n := range want.names {
		at, _, _ := strings.Cut(strings.TrimPrefix(strings.Fields(n)[0], "s"), " ")
		_, r, ok := strings.Cut(at, "@")
		if !ok {
			r = "27"
		}
		rung[r]++
	}
	if rung["3"] != 9 || rung["9"] < 3 || rung["27"] < 1 || len(want.pruned) != 9-rung["27"] {
		t.Fatalf("reference search: trials per rung %v, %d pruned: %v", rung, len(want.pruned), want.names)
	}
	for _, c := range []struct {
		kill string
		jobs string
	}{{"search:wave@1", "1"}, {"search:wave@3", "2"}, {"train:step@40", "1"}, {"train:step@60", "2"}, {"search:pruned@1", "2"}} {
		t.Run(c.kill+"/jobs"+c.jobs, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestPrunedSearchHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "GOLDSTONE_PRUNED_HELPER="+dir, "GOLDSTONE_PRUNED_HELPER_JOBS="+c.jobs, fault.Env+"="+c.kill)
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the search was not killed at %s: %v", c.kill, err)
			}
			cmd = exec.Command(os.Args[0], "-test.run=^TestPrunedSearchHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "GOLDSTONE_PRUNED_HELPER="+dir, "GOLDSTONE_PRUNED_HELPER_JOBS="+c.jobs)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("resumed search: %v\n%s", err, b)
			}
			samePruned(t, readPruned(t, dir, "pr"), want)
		})
	}
}

// TestPromotedTrialFromScratch: the trial of the point a pruned search
// promoted to the last rung (it went on from its shorter trials'
// checkpoints at steps 3 and 9) has the summary and series, bit for bit,
// of the same configuration run from step 0 to 27 steps in an empty
// workdir; and so has a trial it stopped at step 9 with one run to 9.
func TestPromotedTrialFromScratch(t *testing.T) {
	dir := t.TempDir()
	if _, err := runPruned(context.Background(), dir, prunedExp(t), 2); err != nil {
		t.Fatal(err)
	}
	got := readPruned(t, dir, "pr")
	var top, mid string
	for id, n := range got.names {
		switch {
		case !strings.Contains(n, "@") && got.status[id] == runs.StatusDone:
			top = id
		case strings.Contains(n, "@9 ") && got.status[id] == runs.StatusPruned:
			mid = id
		}
	}
	if top == "" || mid == "" {
		t.Fatalf("no promoted trial at the last rung or pruned one at step 9: %v %v", got.names, got.status)
	}
	// No step redone: each went on from the checkpoint of the rung below.
	for id, from := range map[string]string{top: "step 9 of 27", mid: "step 3 of 9"} {
		b, err := os.ReadFile(filepath.Join(dir, "logs", "pr", "run-1", id+".log"))
		if err != nil || !strings.Contains(string(b), "resumed from the checkpoint of "+from) {
			t.Fatalf("%s did not resume from the checkpoint of %s: %v\n%s", got.names[id], from, err, b)
		}
	}
	ctx := context.Background()
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	last, _ := st.LatestRun(ctx, "pr", runs.KindRun)
	params, err := st.TrialParams(ctx, last.ID)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{top, mid} {
		// The trial's own settings, as a plain experiment of one trial.
		e := prunedExp(t)
		e.Name, e.Search = "scratch", nil
		var sets []string
		for _, k := range []string{"lr", "gauge", "k1", "steps"} {
			sets = append(sets, k+"="+strings.Trim(params[id][k], `"`))
		}
		if err := e.Override(sets); err != nil {
			t.Fatal(err)
		}
		sdir := t.TempDir()
		if _, err := runPruned(ctx, sdir, e, 1); err != nil {
			t.Fatal(err)
		}
		ref := readPruned(t, sdir, "scratch")
		if _, ok := ref.sums[id]; !ok || len(ref.sums) != 1 {
			t.Fatalf("the run from scratch has trials %v, not %s (%s)", ref.names, id, got.names[id])
		}
		if !sameValues(got.sums[id], ref.sums[id]) {
			t.Fatalf("%s: summary %v, from scratch %v", got.names[id], got.sums[id], ref.sums[id])
		}
		if !reflect.DeepEqual(got.series[id], ref.series[id]) {
			t.Fatalf("%s: series differ from the run from scratch", got.names[id])
		}
	}
}
