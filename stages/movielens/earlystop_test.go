package movielens

import (
	"bytes"
	"context"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/pipeline"
	"goldstone/trialio"
)

// overfitDoc is a Gaussian trial on planted ratings that over-fits: a weak
// prior and many dimensions for few ratings, trained long.
const overfitDoc = `[experiments.p]
pipeline = "movielens"
[experiments.p.settings]
dataset = "planted"
planted_users = 60
planted_items = 30
planted_ratings = 6000
bins = 3
dim = 6
steps = 400
valid_every = 10
gamma = 0.3
lambda = 0.1
optimizer = "adagrad"
lr = 0.03
likelihood = "gaussian"
rating_noise_var = 0.7
`

// runTrial runs the one trial of doc (plus extra settings) in work and
// returns its summary and the pipeline's result.
func runTrial(t *testing.T, work, extra string) (trialio.Summary, *pipeline.Result, *experiment.Built) {
	t.Helper()
	c, err := experiment.ParseConfig("t.toml", []byte(overfitDoc+extra))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["p"]
	ctx := context.Background()
	b, err := experiment.Build(ctx, e, e.Trials(), experiment.Env{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := pipeline.Run(ctx, b.Graph, pipeline.Options{WorkDir: work, Jobs: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	nr := res.Nodes[b.Trials[0].Result]
	if nr.Err != nil {
		t.Fatal(nr.Err)
	}
	sum, err := trialio.ReadSummary(filepath.Join(nr.Outputs["result"], "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	return sum, res, b
}

// The situation on generated data: a Gaussian model whose
// validation RMSE bottoms early (step 21) and whose final state is worse on
// test than the bias-only predictor. With early stopping the summary gives
// the test metrics of the best-validation state (better than the final
// state's and the bias-only predictor's), the step, and the final state's
// under final_*, equal bit for bit to those of the same trial without early
// stopping; with a small patience the trial stops at the patience's end and
// reports the same best state.
func TestEarlyStoppingReportsBestValidationState(t *testing.T) {
	off, _, _ := runTrial(t, t.TempDir(), "")
	if off["test_rmse"] < off["ref_bias_test_rmse"] {
		t.Fatalf("the final state does not over-fit (test RMSE %v, bias-only %v): the test needs another setup", off["test_rmse"], off["ref_bias_test_rmse"])
	}
	on, res, b := runTrial(t, t.TempDir(), "early_stopping = true\npatience = 1000\n")
	if !(on["test_rmse"] < on["ref_bias_test_rmse"] && on["ref_bias_test_rmse"] < on["final_test_rmse"]) {
		t.Errorf("test RMSE at the best validation step %v, bias-only %v, final %v: want best < bias-only < final",
			on["test_rmse"], on["ref_bias_test_rmse"], on["final_test_rmse"])
	}
	for _, k := range []string{"test_rmse", "test_mae", "test_ll", "valid_rmse", "valid_ll"} {
		if on["final_"+k] != off[k] {
			t.Errorf("final_%s = %v, the trial without early stopping has %s = %v", k, on["final_"+k], k, off[k])
		}
	}
	series, err := trialio.ReadSeriesParquet(filepath.Join(res.Nodes[b.Trials[0].Result].Outputs["result"], "series.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	argmin, lowest := -1, math.Inf(1)
	for i, m := range series.Metric {
		if m == "valid_rmse" && series.Value[i] < lowest {
			argmin, lowest = int(series.Step[i]), series.Value[i]
		}
	}
	if on["best_valid_step"] != float64(argmin) || on["valid_rmse"] != lowest || on["best_valid_rmse"] != lowest {
		t.Errorf("best_valid_step %v, valid_rmse %v, best_valid_rmse %v; the series' lowest valid_rmse is %v at step %d",
			on["best_valid_step"], on["valid_rmse"], on["best_valid_rmse"], lowest, argmin)
	}
	if argmin <= 1 || argmin >= 400 || on["trained_steps"] != 400 {
		t.Errorf("best step %d, trained_steps %v: want a best state inside a run of 400 steps", argmin, on["trained_steps"])
	}
	// Patience 3: three checks (valid_every = 10) after the best one, then stop.
	short, _, _ := runTrial(t, t.TempDir(), "early_stopping = true\npatience = 3\n")
	if want := float64(argmin + 30); short["trained_steps"] != want {
		t.Errorf("patience 3: trained_steps %v, want %v", short["trained_steps"], want)
	}
	for _, k := range []string{"best_valid_step", "test_rmse", "test_ll", "valid_rmse"} {
		if short[k] != on[k] {
			t.Errorf("patience 3: %s = %v, patience 1000: %v", k, short[k], on[k])
		}
	}
}

// paramsFiles lists the params.npy files under a work directory's cache.
func paramsFiles(t *testing.T, work string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(filepath.Join(work, "cache"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == ParamsFile {
			got = append(got, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// The keep policies: keep = "none" leaves no parameters in the cache and
// the same result as keep = "final"; keep = "best" keeps the
// best-validation parameters only, those keep = "final" writes beside the
// final ones; a second run finds every node cached; contradictory choices
// stop at Build.
func TestKeepPolicies(t *testing.T) {
	const es = "early_stopping = true\npatience = 3\n"
	finalWork, noneWork, bestWork := t.TempDir(), t.TempDir(), t.TempDir()
	final, _, _ := runTrial(t, finalWork, es)
	none, _, _ := runTrial(t, noneWork, es+"keep = \"none\"\n")
	best, res, b := runTrial(t, bestWork, es+"keep = \"best\"\n")
	for _, sum := range []trialio.Summary{none, best} {
		if len(sum) != len(final) {
			t.Errorf("%d summary metrics, with keep = \"final\" %d", len(sum), len(final))
		}
		for k, v := range final {
			if !strings.HasSuffix(k, "_seconds") && sum[k] != v && !(math.IsNaN(v) && math.IsNaN(sum[k])) {
				t.Errorf("%s = %v, with keep = \"final\" %v", k, sum[k], v)
			}
		}
	}
	if got := paramsFiles(t, noneWork); len(got) != 0 {
		t.Errorf("keep = \"none\" left %v", got)
	}
	finals := paramsFiles(t, finalWork)
	bests := paramsFiles(t, bestWork)
	if len(finals) != 2 || len(bests) != 1 {
		t.Fatalf("params files: keep = final %v, keep = best %v", finals, bests)
	}
	var bestOfFinal string
	for _, p := range finals {
		if filepath.Base(filepath.Dir(p)) == BestDir {
			bestOfFinal = p
		}
	}
	if !bytes.Equal(readBytes(t, bestOfFinal), readBytes(t, bests[0])) {
		t.Errorf("keep = \"best\" kept other parameters than %s", bestOfFinal)
	}
	if model := res.Nodes[b.Trials[0].Result].Outputs["model"]; filepath.Dir(bests[0]) != model {
		t.Errorf("best parameters at %s, the trial's model output is %s", bests[0], model)
	}
	// Up to date: the second run of the keep = "none" trial runs nothing.
	_, again, _ := runTrial(t, noneWork, es+"keep = \"none\"\n")
	for id, nr := range again.Nodes {
		if !nr.Cached {
			t.Errorf("second run: %s not cached (%v)", id, nr.Status)
		}
	}
	for _, tc := range []struct{ extra, want string }{
		{"keep = \"best\"\n", "set early_stopping = true"},
		{"keep = \"none\"\nexport_embeddings = true\n", "keep = \"none\" keeps no parameters"},
	} {
		c, err := experiment.ParseConfig("t.toml", []byte(overfitDoc+tc.extra))
		if err != nil {
			t.Fatal(err)
		}
		e := c.Experiments["p"]
		_, err = experiment.Build(context.Background(), e, e.Trials(), experiment.Env{DataDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error saying %q", tc.extra, err, tc.want)
		}
	}
	if _, err := experiment.ParseConfig("t.toml", []byte(overfitDoc+"keep = \"snapshots\"\n")); err == nil || !strings.Contains(err.Error(), "t.toml:") {
		t.Errorf("keep = \"snapshots\": %v, want an error naming the file and line", err)
	}
}
