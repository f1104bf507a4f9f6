package movielens

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"goldstone/formats/ratings"

	"goldstone/experiment"
	"goldstone/models"
	"goldstone/pipeline"
	"goldstone/trialio"
)

// buildNodes builds the graph of a planted experiment with the given
// variants (TOML) and returns its node ids without the experiment prefix.
func buildNodes(t *testing.T, variants string) []string {
	t.Helper()
	doc := "[experiments.p]\npipeline = \"movielens\"\n[experiments.p.settings]\ndataset = \"planted\"\nplanted_users = 50\nplanted_items = 20\nplanted_ratings = 500\n" + variants
	c, err := experiment.ParseConfig("t.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["p"]
	b, err := experiment.Build(context.Background(), e, e.Trials(), experiment.Env{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range b.Graph.Nodes {
		ids = append(ids, strings.TrimPrefix(n.ID, "p/"))
	}
	return ids
}

// The likelihood decides the data path: binarize runs only for a
// binarized likelihood; explicit ratings go to bin-explicit and
// split-explicit straight from the ingested table; a sweep may mix both.
func TestLikelihoodDataPath(t *testing.T) {
	for _, tc := range []struct {
		name, variants string
		want, absent   []string
	}{
		{"logistic", "[[experiments.p.variants]]\nname = \"a\"\n",
			[]string{"binarize", "bin", "split"}, []string{"bin-explicit", "split-explicit"}},
		{"gaussian", "[[experiments.p.variants]]\nname = \"a\"\nlikelihood = \"gaussian\"\n",
			[]string{"bin-explicit", "split-explicit"}, []string{"binarize", "bin", "split"}},
		{"mixed", "[[experiments.p.variants]]\nname = \"a\"\n[[experiments.p.variants]]\nname = \"b\"\nlikelihood = \"gaussian\"\n",
			[]string{"binarize", "bin", "split", "bin-explicit", "split-explicit"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids := buildNodes(t, tc.variants)
			for _, w := range tc.want {
				if !slices.Contains(ids, w) {
					t.Errorf("no node %s in %v", w, ids)
				}
			}
			for _, a := range tc.absent {
				if slices.Contains(ids, a) {
					t.Errorf("node %s in %v", a, ids)
				}
			}
		})
	}
}

// Bin reads an ingested table of explicit ratings as it is: every rating
// (the median ones too) with its value and x = 0.
func TestBinExplicit(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, filepath.Join(dir, "r.csv"), []byte(ratings.CSVHeader+"\n1,1,2.0,5\n1,2,3.0,6\n2,1,4.5,7\n2,2,3.0,8\n"))
	ctx := context.Background()
	raw := filepath.Join(dir, "r.parquet")
	if _, err := ratings.Ingest(ctx, src, raw, ratings.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := Bin(ctx, raw, filepath.Join(dir, "binned.parquet"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ratings != 4 {
		t.Fatalf("%d ratings binned, want 4", res.Ratings)
	}
	c, err := ratings.LoadColumns(ctx, filepath.Join(dir, "binned.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{2, 3, 4.5, 3}; !slices.Equal(c.Rating, want) || !slices.Equal(c.X, []int8{0, 0, 0, 0}) {
		t.Errorf("ratings %v, x %v; want %v and zeros", c.Rating, c.X, want)
	}
	r, err := loadRatings(ctx, filepath.Join(dir, "binned.parquet"), models.Explicit)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Has(models.Explicit) || r.X != nil {
		t.Errorf("explicit ratings %+v", r)
	}
	// Binarized, the same table keeps the rating beside x.
	if _, err := Binarize(ctx, raw, filepath.Join(dir, "b.parquet")); err != nil {
		t.Fatal(err)
	}
	if _, err := Bin(ctx, filepath.Join(dir, "b.parquet"), filepath.Join(dir, "bb.parquet"), 2); err != nil {
		t.Fatal(err)
	}
	c, err = ratings.LoadColumns(ctx, filepath.Join(dir, "bb.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Rating, []float32{2, 4.5}) || !slices.Equal(c.X, []int8{-1, 1}) {
		t.Errorf("binarized: ratings %v, x %v", c.Rating, c.X)
	}
}

// A Gaussian trial runs through the seam: its model's arrays are written
// and listed in model.json, its summary holds its own metrics (RMSE, MAE,
// the global mean's and the bias-only predictor's) and none of the
// logistic model's; the same trial's model evaluated as logistic is
// refused.
func TestGaussianTrial(t *testing.T) {
	doc := `[experiments.p]
pipeline = "movielens"
[experiments.p.settings]
dataset = "planted"
planted_users = 60
planted_items = 30
planted_ratings = 3000
bins = 3
dim = 2
steps = 30
valid_every = 10
gamma = 1.0
optimizer = "adagrad"
lr = 0.3
likelihood = "gaussian"
rating_noise_var = 0.7
`
	c, err := experiment.ParseConfig("t.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["p"]
	ctx := context.Background()
	b, err := experiment.Build(ctx, e, e.Trials(), experiment.Env{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	res, err := pipeline.Run(ctx, b.Graph, pipeline.Options{WorkDir: work, Jobs: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	tn := b.Trials[0]
	nr := res.Nodes[tn.Result]
	if nr.Err != nil {
		t.Fatal(nr.Err)
	}
	sum, err := trialio.ReadSummary(filepath.Join(nr.Outputs["result"], "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"valid_ll", "valid_rmse", "valid_mae", "test_ll", "test_rmse", "test_mae",
		"baseline_test_ll", "baseline_test_rmse", "baseline_test_mae", "ref_bias_test_rmse", "ref_bias_test_mae"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %s", k)
		}
	}
	for _, k := range []string{"test_auc", "test_acc", "baseline_test_acc", "planted_oracle_test_ll"} {
		if _, ok := sum[k]; ok {
			t.Errorf("summary has the logistic model's %s", k)
		}
	}
	model := res.Nodes[tn.Nodes[0]].Outputs["model"]
	var meta modelMeta
	if err := trialio.ReadJSON(filepath.Join(model, "model.json"), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Labels != "explicit" || len(meta.Arrays) != 4 || meta.Arrays[3] != (models.Array{Name: "mean", Len: 1}) {
		t.Errorf("model.json %+v", meta)
	}
	for _, a := range meta.Arrays {
		if _, err := os.Stat(filepath.Join(model, a.Name+".npy")); err != nil {
			t.Error(err)
		}
	}
	series, err := trialio.ReadSeriesParquet(filepath.Join(nr.Outputs["result"], "series.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	// Steps 1, 11, 21: not the last (30), whose record a longer run of the
	// trial would not have (pruning).
	if n := strings.Count(strings.Join(series.Metric, " "), "valid_rmse"); n != 3 {
		t.Errorf("series: %d valid_rmse points, want 3", n)
	}
	// The model directory evaluated with the logistic likelihood: refused.
	out := func(id, name string) string { return res.Nodes["p/"+id].Outputs[name] }
	io := pipeline.NewIO(map[string]string{"model": model, "split": out("split-explicit", "split"), "binned": out("bin-explicit", "binned")},
		map[string]string{"result": filepath.Join(t.TempDir(), "r")}, 1, nil)
	err = (&EvaluateStage{Model: ModelSettings{Likelihood: models.LogisticSettings{}}}).Run(ctx, io)
	if err == nil || !strings.Contains(err.Error(), "explicit labels") {
		t.Errorf("logistic evaluation of a Gaussian model: %v", err)
	}
}
