package movielens

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"goldstone/formats/ratings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

func TestIngestLayout(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var text bytes.Buffer
	cfg := smallPlanted()
	if _, err := Generate(ctx, &text, nil, cfg); err != nil {
		t.Fatal(err)
	}
	src := writeFile(t, filepath.Join(dir, "ratings.csv"), text.Bytes())
	dst := filepath.Join(dir, "ratings.parquet")
	if _, err := ratings.Ingest(ctx, src, dst, ratings.IngestOptions{RowGroupSize: 7000, BlockBytes: 10000}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata()
	if want := int((cfg.Ratings + 6999) / 7000); len(md.RowGroups) != want || md.NumRows != cfg.Ratings {
		t.Fatalf("%d row groups of %d rows, want %d", len(md.RowGroups), md.NumRows, want)
	}
	for _, rg := range md.RowGroups {
		if rg.NumRows > 7000 {
			t.Fatalf("row group of %d rows", rg.NumRows)
		}
		for _, c := range rg.Columns {
			if c.MetaData.Codec != format.Zstd {
				t.Fatalf("column %v codec %v, want zstd", c.MetaData.PathInSchema, c.MetaData.Codec)
			}
		}
	}
	wantTypes := map[string]parquet.Kind{"user": parquet.Int32, "item": parquet.Int32, "rating": parquet.Float, "timestamp": parquet.Int64}
	for _, fld := range pf.Schema().Fields() {
		if k, ok := wantTypes[fld.Name()]; !ok || fld.Type().Kind() != k || fld.Optional() {
			t.Errorf("column %s: %v optional=%v", fld.Name(), fld.Type(), fld.Optional())
		}
	}
	if n, err := ratings.NumRows(dst); err != nil || n != cfg.Ratings {
		t.Fatalf("NumRows = %d, %v", n, err)
	}
}

func TestCancelledLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	var text bytes.Buffer
	if _, err := Generate(context.Background(), &text, nil, smallPlanted()); err != nil {
		t.Fatal(err)
	}
	src := writeFile(t, filepath.Join(dir, "ratings.csv"), text.Bytes())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ratings.Ingest(ctx, src, filepath.Join(dir, "out.parquet"), ratings.IngestOptions{BlockBytes: 4096}); err == nil {
		t.Fatal("cancelled ingest succeeded")
	}
	if _, err := Generate(ctx, &bytes.Buffer{}, nil, smallPlanted()); err == nil {
		t.Fatal("cancelled generate succeeded")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "out.parquet*")); len(m) != 0 {
		t.Fatalf("left %v", m)
	}
}
