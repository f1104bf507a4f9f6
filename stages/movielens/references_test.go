package movielens

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/formats/ratings"

	"goldstone/experiment"
	"goldstone/internal/testdata"
	"goldstone/models"
	"goldstone/report"
	"goldstone/train"
	"goldstone/trialio"
)

// TestReferencesSmall computes the static references on ml-latest-small
// with the movielens-sweep data settings: the user + item biases beat the
// item biases, which beat the base rate; static MF (dim 10, biases, AdaGrad
// lr 1, 300 steps) gives a finite value (measured: -0.7832, below the base
// rate: with gamma = 1 the single-bin MAP fit overfits); every value is the
// same on a second run.
func TestReferencesSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("reads ml-latest-small and trains a static model")
	}
	src := testdata.Path(t, "ml-latest-small/ratings.csv")
	ctx, dir := context.Background(), t.TempDir()
	binned, split := filepath.Join(dir, "binned"), filepath.Join(dir, "split")
	for _, d := range []string{binned, split} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	if _, err := ratings.Ingest(ctx, src, p("ratings.parquet"), ratings.IngestOptions{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := Binarize(ctx, p("ratings.parquet"), p("binary.parquet")); err != nil {
		t.Fatal(err)
	}
	res, err := Bin(ctx, p("binary.parquet"), filepath.Join(binned, "binned.parquet"), 100)
	if err != nil {
		t.Fatal(err)
	}
	info := binInfo{T: res.T, Users: len(res.Users), Items: len(res.Items), Ratings: res.Ratings}
	if err := trialio.WriteJSON(filepath.Join(binned, "info.json"), info); err != nil {
		t.Fatal(err)
	}
	if _, err := Split(ctx, filepath.Join(binned, "binned.parquet"), filepath.Join(split, "train.parquet"),
		filepath.Join(split, "valid.parquet"), filepath.Join(split, "test.parquet"), [3]float64{0.5, 0.2, 0.3}, 1); err != nil {
		t.Fatal(err)
	}
	rs := ReferenceSettings{Optim: train.OptimSettings{Method: train.AdaGradSettings{}.Defaults().(train.AdaGradSettings), LR: 1},
		Model: ModelSettings{Likelihood: models.LogisticSettings{Bias: true}}, Dim: 10, Seed: 1, Steps: 300, InitScale: 0.1, Gamma: 1}
	refs, err := References(ctx, rs, binned, split, nil)
	if err != nil {
		t.Fatal(err)
	}
	base, item, ui, mf := refs["baseline_test_ll"], refs["ref_item_test_ll"], refs["ref_user_item_test_ll"], refs["ref_static_mf_test_ll"]
	t.Logf("ml-latest-small test_ll: base rate %.4f, item biases %.4f, user + item biases %.4f, static MF (d 10, 300 steps) %.4f", base, item, ui, mf)
	if !(ui > item+0.01 && item > base+0.01) || math.IsNaN(mf) || math.IsInf(mf, 0) {
		t.Errorf("references base %.4f item %.4f user+item %.4f static MF %.4f: want user+item > item > base and a finite static MF", base, item, ui, mf)
	}
	again, err := References(ctx, rs, binned, split, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range refs {
		if again[k] != v {
			t.Errorf("%s: %v, then %v", k, v, again[k])
		}
	}
	table := ReferencesTable([]report.TrialResult{{Trial: experiment.Trial{Name: "x"}, Summary: trialio.Summary{"test_ll": max(ui, mf) + 0.01, "baseline_test_ll": base, "ref_item_test_ll": item, "ref_user_item_test_ll": ui, "ref_static_mf_test_ll": mf}}})
	if !strings.Contains(table, "| +0.0100 |") {
		t.Errorf("references table does not show the gain over the best static reference:\n%s", table)
	}
}
