package movielens

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"goldstone/formats/ratings"

	"github.com/parquet-go/parquet-go"
)

// BenchmarkIngestLayouts ingests the same ratings (ml-20m-shaped, benchRatings of them)
// written in three ways: the MovieLens ratings.csv preset, a table of its own with text
// ids and ISO dates, and Parquet with text ids and a TIMESTAMP column.
func BenchmarkIngestLayouts(b *testing.B) {
	n := benchRatings(b)
	dir := b.TempDir()
	ctx := context.Background()
	src := filepath.Join(dir, "ratings.csv")
	if _, err := GenerateFile(ctx, src, "", benchConfig(n)); err != nil {
		b.Fatal(err)
	}
	raw := filepath.Join(dir, "raw.parquet")
	if _, err := ratings.Ingest(ctx, src, raw, ratings.IngestOptions{}); err != nil {
		b.Fatal(err)
	}
	rows, err := ratings.ReadAll[ratings.Rating](ctx, raw)
	if err != nil {
		b.Fatal(err)
	}
	own := filepath.Join(dir, "own.csv")
	f, err := os.Create(own)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "item,user,stars,date")
	type pq struct {
		User  string    `parquet:"user"`
		Item  string    `parquet:"item"`
		Stars float32   `parquet:"stars"`
		Date  time.Time `parquet:"date,timestamp(millisecond)"`
	}
	pqRows := make([]pq, len(rows))
	for i, r := range rows {
		t := time.Unix(r.Timestamp, 0).UTC()
		fmt.Fprintf(w, "film-%d,user-%d,%g,%s\n", r.Item, r.User, r.Rating, t.Format(time.DateOnly))
		pqRows[i] = pq{fmt.Sprintf("user-%d", r.User), fmt.Sprintf("film-%d", r.Item), r.Rating, t}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	pqPath := filepath.Join(dir, "own.parquet")
	if f, err = os.Create(pqPath); err != nil {
		b.Fatal(err)
	}
	if err := parquet.Write(f, pqRows); err != nil {
		b.Fatal(err)
	}
	f.Close()
	ownLayout := &ratings.Layout{Name: ratings.LayoutCustom, Delimiter: ",", Header: true, User: ratings.Column{Name: "user"}, Item: ratings.Column{Name: "item"},
		Rating: ratings.Column{Name: "stars"}, Time: ratings.Column{Name: "date"}, TimeFormat: "2006-01-02"}
	for _, bc := range []struct {
		name, src string
		layout    *ratings.Layout
	}{{"movielens-csv", src, nil}, {"text-ids-iso-dates", own, ownLayout}, {"parquet-text-ids", pqPath, ownLayout}} {
		b.Run(bc.name, func(b *testing.B) {
			st, err := os.Stat(bc.src)
			if err != nil {
				b.Fatal(err)
			}
			dst := filepath.Join(b.TempDir(), "ratings.parquet")
			b.ReportAllocs()
			b.SetBytes(st.Size())
			for b.Loop() {
				s, err := ratings.Ingest(ctx, bc.src, dst, ratings.IngestOptions{Layout: bc.layout})
				if err != nil {
					b.Fatal(err)
				}
				benchSink = s
			}
			b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "ratings/s")
		})
	}
}
