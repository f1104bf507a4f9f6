package movielens_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"goldstone/formats/ratings"
	"goldstone/stages/movielens"
)

func ExampleBinOf() {
	// Four bins of equal duration over [0, 100]; the last is closed at 100.
	for _, ts := range []int64{0, 24, 25, 99, 100} {
		fmt.Print(movielens.BinOf(ts, 0, 100, 4), " ")
	}
	first, last := movielens.BinRange(3, 0, 100, 4)
	fmt.Println(first, last)
	// Output: 0 0 1 3 3 75 100
}

func ExampleSplitCounts() {
	st, _ := movielens.SplitCounts(17, [3]float64{0.5, 0.2, 0.3})
	fmt.Printf("%+v\n", st)
	// Output: {Train:8 Valid:3 Test:6}
}

// Example runs the whole chain on a small planted data set.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "movielens-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p := func(name string) string { return filepath.Join(dir, name) }

	cfg := movielens.PlantedConfig{
		Users: 100, Items: 50, Ratings: 5000, Bins: 5, D: 3, Seed: 1, Drift: 0.1,
		Start: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	gen, err := movielens.GenerateFile(ctx, p("ratings.csv"), p("planted.npy"), cfg)
	if err != nil {
		log.Fatal(err)
	}
	st, err := ratings.Ingest(ctx, p("ratings.csv"), p("ratings.parquet"), ratings.IngestOptions{})
	if err != nil {
		log.Fatal(err)
	}
	bst, err := movielens.Binarize(ctx, p("ratings.parquet"), p("binary.parquet"))
	if err != nil {
		log.Fatal(err)
	}
	res, err := movielens.Bin(ctx, p("binary.parquet"), p("binned.parquet"), cfg.Bins)
	if err != nil {
		log.Fatal(err)
	}
	sp, err := movielens.Split(ctx, p("binned.parquet"), p("train.parquet"), p("valid.parquet"), p("test.parquet"), [3]float64{0.5, 0.2, 0.3}, 7)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("generated per bin:", gen.PerBin)
	fmt.Println("ingested:", st.Ratings, st.Format)
	fmt.Println("median:", bst.Median, "dropped:", bst.Dropped == gen.Mid)
	fmt.Println("same span:", res.MinTime == cfg.Start.Unix(), res.MaxTime == cfg.End.Unix())
	fmt.Println("split:", sp.Train+sp.Valid+sp.Test == res.Ratings, sp.Train == res.Ratings/2)
	// Output:
	// generated per bin: [233 413 733 1304 2317]
	// ingested: 5000 ratings.csv
	// median: 3.5 dropped: true
	// same span: true true
	// split: true true
}
