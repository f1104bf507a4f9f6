package report_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/report"
	"goldstone/report/figures"
	"goldstone/runs"
	_ "goldstone/stages/pipelines"
	"goldstone/sweep"
)

// tinySearch is a tiny artificial search: 5 random points in waves of 2,
// two seeds each, 30 steps a trial.
const tinySearch = `[experiments.s]
pipeline = "artificial"
[experiments.s.settings]
time_steps = 4
rows = 5
cols = 4
steps = 30
clip = 0.01
lr_s0 = 100.0
snapshots = [0, 30]
[experiments.s.grid]
seed = [1, 2]
[experiments.s.search]
sampler = "random"
trials = 5
wave = 2
seed = 4
objective = "final_loss"
direction = "minimize"
[experiments.s.search.space]
lr = { log_uniform = [0.05, 1.0] }
gauge = { choice = ["none", "goldstone"] }
k1 = { int = [5, 20], when = { gauge = ["goldstone"] } }
`

// runTinySearch runs tinySearch in dir and returns its store (open), its
// experiment and its run.
func runTinySearch(t *testing.T, dir string) (*runs.Store, *experiment.Experiment, int64) {
	t.Helper()
	cfg, err := experiment.ParseConfig("t.toml", []byte(tinySearch))
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Experiments["s"]
	st, err := runs.Open(context.Background(), filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	out, err := sweep.Search(context.Background(), st, e, sweep.Local{}, sweep.RunOptions{WorkDir: filepath.Join(dir, "work"), Jobs: 2})
	if err != nil || out.Status != runs.StatusFinished || out.Trials != 10 {
		t.Fatalf("search: %+v, %v", out, err)
	}
	return st, e, out.RunID
}

// TestSearchViews: a search run's views are drawn, with captions, the same
// bytes twice; every trial is a line of the parallel coordinates and adds
// its steps to the progress figure, and every point and trial is loaded.
func TestSearchViews(t *testing.T) {
	ctx := context.Background()
	st, e, run := runTinySearch(t, t.TempDir())
	d, err := report.LoadSearch(ctx, st, e, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Trials) != 10 || len(d.Points) != 5 || d.Curve != "loss" {
		t.Fatalf("loaded %d trials, %d points, curve %q; want 10, 5, loss", len(d.Trials), len(d.Points), d.Curve)
	}
	for i, tr := range d.Trials {
		if tr.Point != i/2 || tr.Steps != 30 || len(tr.CurveX) != 30 || report.Outcome(tr.Status) != "finished" {
			t.Fatalf("trial %d: point %d, %d steps, %d curve points, %s", i, tr.Point, tr.Steps, len(tr.CurveX), tr.Status)
		}
		if _, ok := tr.Searched["k1"]; ok != strings.Contains(tr.Searched["gauge"], "goldstone") {
			t.Fatalf("trial %s: k1 shown where gauge is %s", tr.Name, tr.Searched["gauge"])
		}
	}
	a, b := t.TempDir(), t.TempDir()
	pa, err := report.SearchViews(ctx, st, e, run, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := report.SearchViews(ctx, st, e, run, b); err != nil {
		t.Fatal(err)
	}
	for _, p := range pa {
		x, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, filepath.Base(p)))
		if err != nil || !bytes.Equal(x, y) {
			t.Fatalf("%s differs between two drawings of the same run (%v)", filepath.Base(p), err)
		}
	}
	caps, err := figures.ReadCaptions(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{report.SearchBestFile, report.SearchCurvesFile, report.SearchSettingsFile, report.SearchParallelFile} {
		if _, err := os.Stat(filepath.Join(a, f)); err != nil {
			t.Fatalf("no %s: %v", f, err)
		}
		if !strings.Contains(caps[f], "5 points of a random search, 10 trials") {
			t.Errorf("caption of %s: %q", f, caps[f])
		}
	}
	if c := caps[report.SearchBestFile]; !strings.Contains(c, "300 training steps in all") {
		t.Errorf("the progress figure does not count every trial's 30 steps: %q", c)
	}
	if c := caps[report.SearchCurvesFile]; !strings.Contains(c, "(10 finished)") {
		t.Errorf("the curves' caption does not count the trials by outcome: %q", c)
	}
	svg, err := os.ReadFile(filepath.Join(a, report.SearchParallelFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(svg, []byte(`class="trial"`)); n != 10 {
		t.Fatalf("the parallel coordinates draw %d trials, want 10", n)
	}
	for _, tr := range d.Trials {
		if !bytes.Contains(svg, []byte(`data-trial="`+tr.Name+`"`)) {
			t.Errorf("trial %s is not a line of the parallel coordinates", tr.Name)
		}
	}
	// A trial that failed keeps its line (grey, dashed, without the
	// objective), its point loses its value, and the captions count both.
	failed := d.Trials[3]
	if err := st.UpsertTrial(ctx, runs.Trial{RunID: run, ID: failed.ID, Params: paramsOf(t, st, run, failed.ID), Status: runs.StatusFailed, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	c := t.TempDir()
	if _, err := report.SearchViews(ctx, st, e, run, c); err != nil {
		t.Fatal(err)
	}
	caps, err = figures.ReadCaptions(c)
	if err != nil {
		t.Fatal(err)
	}
	if s := caps[report.SearchCurvesFile]; !strings.Contains(s, "(9 finished, 1 failed)") {
		t.Errorf("curves' caption with a failed trial: %q", s)
	}
	if s := caps[report.SearchBestFile]; !strings.Contains(s, "1 points have no finite value") {
		t.Errorf("progress caption with a failed trial: %q", s)
	}
	svg, err = os.ReadFile(filepath.Join(c, report.SearchParallelFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(svg, []byte(`class="trial"`)); n != 10 || !bytes.Contains(svg, []byte(failed.Name+" (failed)")) {
		t.Fatalf("with a failed trial the parallel coordinates draw %d trials, want 10 with %s failed", n, failed.Name)
	}
	// A run without a search has no views.
	e.Search = nil
	if p, err := report.SearchViews(ctx, st, e, run, t.TempDir()); err != nil || p != nil {
		t.Fatalf("views of a grid: %v, %v", p, err)
	}
}

// paramsOf is a recorded trial's params.
func paramsOf(t *testing.T, st *runs.Store, run int64, id string) map[string]string {
	t.Helper()
	ps, err := st.TrialParams(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	return ps[id]
}
