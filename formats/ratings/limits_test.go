package ratings

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bombRows returns a ratings.csv of n identical rows (the bomb: 50M of them
// gzip to 2.3 MB).
func bombRows(n int) []byte {
	var b bytes.Buffer
	b.Grow(17*n + 40)
	b.WriteString("userId,movieId,rating,timestamp\n")
	for range n {
		b.WriteString("1,1,5,1000000000\n")
	}
	return b.Bytes()
}

// Round 3, item 7: a gzip bomb stops at max_input_bytes and a table with too many rows
// at max_input_rows, each with an error naming the file and the setting, and no
// output left behind; within the limits the same table ingests.
func TestIngestLimits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	text := bombRows(1 << 19) // 8.9 MB of text, 18 KB of gzip
	bomb := writeFile(t, filepath.Join(dir, "bomb.csv.gz"), gzipBytes(t, text))
	plain := writeFile(t, filepath.Join(dir, "many.csv"), text[:32+17*5000])
	for _, tc := range []struct {
		name, src string
		opts      IngestOptions
		want      string
	}{
		{"bytes", bomb, IngestOptions{MaxBytes: 1 << 20}, "gzip content larger than 1048576 bytes"},
		{"default bytes", writeFile(t, filepath.Join(dir, "small.csv.gz"), gzipBytes(t, text[:32+17*60000])), IngestOptions{}, ""}, // under 64 MiB
		{"rows", plain, IngestOptions{MaxRows: 1000}, "more than 1000 ratings: raise max_input_rows"},
		{"rows of a gzip", bomb, IngestOptions{MaxRows: 1000}, "more than 1000 ratings: raise max_input_rows"},
		{"rows at the limit", plain, IngestOptions{MaxRows: 5000}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out.parquet")
			st, err := Ingest(ctx, tc.src, dst, tc.opts)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if st.Ratings == 0 {
					t.Errorf("no ratings")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.src) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Ingest: %v; want an error naming %s and saying %q", err, tc.src, tc.want)
			}
			if tc.name == "bytes" && !strings.Contains(err.Error(), "raise max_input_bytes") {
				t.Errorf("%v does not name max_input_bytes", err)
			}
			if ents, _ := os.ReadDir(filepath.Dir(dst)); len(ents) != 0 {
				t.Errorf("left behind: %v", ents)
			}
		})
	}
}
