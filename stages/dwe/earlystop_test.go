package dwe_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/pipeline"
	_ "goldstone/stages/pipelines"
	"goldstone/trialio"
)

// esDoc is the golden experiment's MAP trial with a larger learning rate,
// trained long enough to over-fit the training years.
const esDoc = `[experiments.p]
pipeline = "dwe"
[experiments.p.settings]
corpus = "golden-corpus.csv"
corpus_format = "csv"
bin_years = 1
heldout = 1
valid_steps = 1
vocab = 30
window = 2
dim = 2
steps = 60
optimizer = "adam"
lr = 0.3
queries = ["car"]
`

func runDWE(t *testing.T, extra string) (trialio.Summary, *trialio.Series) {
	t.Helper()
	c, err := experiment.ParseConfig("t.toml", []byte(esDoc+extra))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["p"]
	ctx := context.Background()
	b, err := experiment.Build(ctx, e, e.Trials(), experiment.Env{DataDir: "testdata"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := pipeline.Run(ctx, b.Graph, pipeline.Options{WorkDir: t.TempDir(), Jobs: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	nr := res.Nodes[b.Trials[0].Result]
	if nr.Err != nil {
		t.Fatal(nr.Err)
	}
	dir := nr.Outputs["result"]
	sum, err := trialio.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	series, err := trialio.ReadSeries(filepath.Join(dir, trialio.SeriesArrow))
	if err != nil {
		t.Fatal(err)
	}
	return sum, series
}

// TestEarlyStoppingDWE: with early_stopping the summary gives the held-out
// metrics of the best-validation state (valid_ll equal bit for bit to the
// best check's best_valid_ll, the best of the valid_ll series) and the
// step, and the final state's under final_*, equal bit for bit to those of
// the same trial without early stopping (whose keys, and so id, are
// unchanged); with a small patience the trial stops patience checks after
// its best one. Without validation steps it is refused at build.
func TestEarlyStoppingDWE(t *testing.T) {
	off, _ := runDWE(t, "")
	if _, ok := off["best_valid_step"]; ok {
		t.Fatal("a trial without early stopping has best_valid_step")
	}
	on, series := runDWE(t, "early_stopping = true\npatience = 1000\nvalid_every = 5\n")
	for _, k := range []string{"test_ll", "valid_ll"} {
		if math.Float64bits(on["final_"+k]) != math.Float64bits(off[k]) {
			t.Errorf("final_%s = %v, the trial without early stopping has %s = %v", k, on["final_"+k], k, off[k])
		}
	}
	step := on["best_valid_step"]
	steps, values := series.Of("valid_ll")
	if len(steps) != 12 || on["trained_steps"] != 60 {
		t.Fatalf("valid_ll recorded at %v, trained_steps %v: want every 5 steps of 60", steps, on["trained_steps"])
	}
	best, at := math.Inf(-1), 0.0
	for i, v := range values {
		if v > best {
			best, at = v, steps[i]
		}
	}
	if at != step {
		t.Errorf("best valid_ll %v at step %v, best_valid_step %v", best, at, step)
	}
	if math.Float64bits(on["valid_ll"]) != math.Float64bits(best) || on["best_valid_ll"] != best {
		t.Fatalf("valid_ll %v, best_valid_ll %v: want the best check's %v", on["valid_ll"], on["best_valid_ll"], best)
	}
	if step == 60 || on["test_ll"] == off["test_ll"] {
		t.Fatalf("the validation log-likelihood peaks at step %v (test_ll %v, final %v): the test needs a trial that over-fits", step, on["test_ll"], off["test_ll"])
	}
	t.Logf("best valid_ll %v at step %v: test_ll %v there, %v at step 60", best, step, on["test_ll"], off["test_ll"])
	short, _ := runDWE(t, "early_stopping = true\npatience = 2\nvalid_every = 5\n")
	if short["trained_steps"] != step+10 || math.Float64bits(short["valid_ll"]) != math.Float64bits(on["valid_ll"]) || math.Float64bits(short["test_ll"]) != math.Float64bits(on["test_ll"]) {
		t.Fatalf("patience 2: trained_steps %v (want %v), valid_ll %v test_ll %v (want %v %v)", short["trained_steps"], step+10, short["valid_ll"], short["test_ll"], on["valid_ll"], on["test_ll"])
	}
	c, err := experiment.ParseConfig("t.toml", []byte(strings.Replace(esDoc, "valid_steps = 1", "valid_steps = 0", 1)+"early_stopping = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["p"]
	if _, err := experiment.Build(context.Background(), e, e.Trials(), experiment.Env{DataDir: "testdata"}); err == nil || !strings.Contains(err.Error(), "set valid_steps > 0") {
		t.Fatalf("early stopping without validation steps: %v", err)
	}
}
