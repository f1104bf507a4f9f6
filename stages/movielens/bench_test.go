package movielens

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"goldstone/formats/ratings"
)

// benchRatings returns the benchmark size: GOLDSTONE_BENCH_RATINGS, default 1,000,000.
func benchRatings(b *testing.B) int64 {
	b.Helper()
	n := int64(1_000_000)
	if s := os.Getenv("GOLDSTONE_BENCH_RATINGS"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 200 {
			b.Fatalf("GOLDSTONE_BENCH_RATINGS=%q: want an integer >= 200", s)
		}
		n = v
	}
	return n
}

// benchConfig is ml-20m-shaped: 138,000 users, 27,000 items, 100 bins, d = 30.
func benchConfig(n int64) PlantedConfig {
	return PlantedConfig{
		Users: 138000, Items: 27000, Ratings: n, Bins: 100, D: 30, Seed: 1, Drift: 0.05,
		Start: time.Date(1995, 1, 9, 0, 0, 0, 0, time.UTC), End: time.Date(2015, 3, 31, 0, 0, 0, 0, time.UTC),
	}
}

var benchSink ratings.Stats

func BenchmarkIngest(b *testing.B) {
	n := benchRatings(b)
	dir := b.TempDir()
	src := filepath.Join(dir, "ratings.csv")
	if _, err := GenerateFile(context.Background(), src, "", benchConfig(n)); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(src)
	if err != nil {
		b.Fatal(err)
	}
	dst := filepath.Join(dir, "ratings.parquet")
	b.ReportAllocs()
	b.SetBytes(st.Size())
	b.ResetTimer()
	for b.Loop() {
		s, err := ratings.Ingest(context.Background(), src, dst, ratings.IngestOptions{})
		if err != nil {
			b.Fatal(err)
		}
		benchSink = s
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(n)/sec, "ratings/s")
	b.ReportMetric(float64(st.Size())/sec/1e6, "MB/s")
}

var benchGenSink GenStats

func BenchmarkGenerate(b *testing.B) {
	n := benchRatings(b)
	cfg := benchConfig(n)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		s, err := Generate(context.Background(), &buf, nil, cfg)
		if err != nil {
			b.Fatal(err)
		}
		benchGenSink = s
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(n)/sec, "ratings/s")
	b.ReportMetric(float64(buf.Len())/sec/1e6, "MB/s")
}
