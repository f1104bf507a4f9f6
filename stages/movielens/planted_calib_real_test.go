package movielens

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"goldstone/formats/ratings"

	"goldstone/internal/testdata"
	"goldstone/models"
)

// realSplit runs the data stages (ingest, binarize, 100 bins, split 0.5 /
// 0.2 / 0.3 with seed 1: the movielens-sweep settings) on ml-latest-small
// and returns the train and test ratings and the numbers of items and bins.
func realSplit(t *testing.T) (train, test *models.Ratings, items, T int) {
	t.Helper()
	if testing.Short() {
		t.Skip("reads ml-latest-small")
	}
	src := testdata.Path(t, "ml-latest-small/ratings.csv")
	ctx, dir := context.Background(), t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if _, err := ratings.Ingest(ctx, src, p("ratings.parquet"), ratings.IngestOptions{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := Binarize(ctx, p("ratings.parquet"), p("binary.parquet")); err != nil {
		t.Fatal(err)
	}
	res, err := Bin(ctx, p("binary.parquet"), p("binned.parquet"), 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Split(ctx, p("binned.parquet"), p("train.parquet"), p("valid.parquet"), p("test.parquet"), [3]float64{0.5, 0.2, 0.3}, 1); err != nil {
		t.Fatal(err)
	}
	if train, err = loadRatings(ctx, p("train.parquet"), models.Binary); err != nil {
		t.Fatal(err)
	}
	if test, err = loadRatings(ctx, p("test.parquet"), models.Binary); err != nil {
		t.Fatal(err)
	}
	return train, test, len(res.Items), res.T
}

// TestBiasGainSmall measures BiasGainSmall: the held-out gain over the base
// rate of the bias-only model (item and bin biases, gamma = 1, no
// embeddings) on ml-latest-small with the movielens-sweep data settings.
// RealGainSmall - BiasGainSmall is what the embeddings add on real data,
// the target of the planted data's signal (EmbeddingGainSmall).
func TestBiasGainSmall(t *testing.T) {
	train, test, items, T := realSplit(t)
	bi, bb, err := BiasOnlyFit(train, items, T, 1)
	if err != nil {
		t.Fatal(err)
	}
	ll := BiasOnlyLogLik(test, bi, bb)
	base := models.BaseRate(train, test).LogLik
	t.Logf("ml-latest-small, bias only (gamma 1): test_ll %.5f, base rate %.5f, gain %.5f (RealGainSmall %.4f with embeddings: they add %.4f)",
		ll, base, ll-base, RealGainSmall, RealGainSmall-(ll-base))
	if math.Abs((ll-base)-BiasGainSmall) > 5e-5 {
		t.Errorf("bias-only gain %.5f, BiasGainSmall says %.4f", ll-base, BiasGainSmall)
	}
}
