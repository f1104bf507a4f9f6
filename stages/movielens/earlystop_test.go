package movielens

import (
	"context"
	"math"
	"path/filepath"
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
planted_ratings = 3000
bins = 3
dim = 8
steps = 400
valid_every = 10
gamma = 0.3
lambda = 0.1
optimizer = "adagrad"
lr = 0.02
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

func TestOverfitProbe(t *testing.T) {
	sum, res, b := runTrial(t, t.TempDir(), "early_stopping = true\npatience = 1000\n")
	se, _ := trialio.ReadSeriesParquet(filepath.Join(res.Nodes[b.Trials[0].Result].Outputs["result"], "series.parquet"))
	for i, m := range se.Metric {
		if m == "valid_rmse" {
			t.Logf("%d %v", se.Step[i], se.Value[i])
		}
	}
	for _, k := range []string{"test_rmse", "final_test_rmse", "best_valid_step", "best_valid_rmse", "valid_rmse", "final_valid_rmse", "ref_bias_test_rmse", "trained_steps"} {
		t.Logf("%s = %v", k, sum[k])
	}
	_ = math.NaN
}
