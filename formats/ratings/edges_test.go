package ratings

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Rough edges of issue 9: blank leading lines and a byte-order mark are
// accepted in every format, a file without ratings is an error naming it,
// and a directory holding a gzipped ratings file is found.
func TestIngestEdges(t *testing.T) {
	csv := "userId,movieId,rating,timestamp\n1,31,2.5,1260759144\n1,1029,3.0,1260759179\n7,10,5.0,881250949\n"
	dat := "1::31::2.5::1260759144\n1::1029::3::1260759179\n7::10::5::881250949\n"
	udata := "1\t31\t2.5\t1260759144\n1\t1029\t3\t1260759179\n7\t10\t5\t881250949\n"
	for _, tc := range []struct{ name, text string }{
		{"csv blank first lines", "\n \r\n" + csv},
		{"dat blank first line", "\n" + dat},
		{"udata bom", "\xEF\xBB\xBF" + udata},
		{"dat bom crlf", "\xEF\xBB\xBF" + strings.ReplaceAll(dat, "\n", "\r\n")},
		{"csv bom blank line", "\xEF\xBB\xBF\n" + csv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := writeFile(t, filepath.Join(dir, "r"), []byte(tc.text))
			dst := filepath.Join(dir, "out.parquet")
			st, err := Ingest(context.Background(), src, dst, IngestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Ratings != 3 || st.Bytes != int64(len(tc.text)) {
				t.Errorf("stats %+v", st)
			}
			got, err := ReadAll[Rating](context.Background(), dst)
			if err != nil || !reflect.DeepEqual(got, sampleRatings) {
				t.Errorf("rows %v, %v", got, err)
			}
		})
	}
	for _, text := range []string{"userId,movieId,rating,timestamp\n", "userId,movieId,rating,timestamp\r\n\r\n", "", "\n\n"} {
		dir := t.TempDir()
		src := writeFile(t, filepath.Join(dir, "ratings.csv"), []byte(text))
		_, err := Ingest(context.Background(), src, filepath.Join(dir, "out.parquet"), IngestOptions{})
		if err == nil || !strings.Contains(err.Error(), src) || !strings.Contains(err.Error(), "no ratings") {
			t.Errorf("Ingest of %q: %v, want an error naming %s and 'no ratings'", text, err, src)
		}
	}
}

// A directory holding a zstd-compressed or a Parquet ratings file is found, and a relative
// path is also looked up under the data directory.
// Issue "failure paths, round 3" (6): a table with a header and Windows line ends is read
// whatever becomes of its "\r\n": kept ("\r\n"), or doubled by a second LF-to-CRLF
// conversion ("\r\r\n", which failed in the header with `CSV header
// "userId,movieId,rating,timestamp\r"`), plain or gzip, by the check at plan time and by the
// ingest, with the MovieLens header recognised, named by a preset or read as a custom table.
func TestCRLFHeader(t *testing.T) {
	csv := "userId,movieId,rating,timestamp\n1,31,2.5,1260759144\n1,1029,3.0,1260759179\n7,10,5.0,881250949\n"
	custom := TableSettings{Layout: "auto", User: "userId", Item: "movieId", Rating: "rating", Time: "timestamp", Delimiter: ",", Header: true, TimeFormat: TimeUnix}
	preset := DefaultTableSettings
	preset.Layout = "ratings.csv"
	for _, eol := range []string{"\r\n", "\r\r\n"} {
		for _, gz := range []bool{false, true} {
			for name, ts := range map[string]TableSettings{"auto": DefaultTableSettings, "preset": preset, "custom": custom} {
				t.Run(fmt.Sprintf("%q gzip=%v %s", eol, gz, name), func(t *testing.T) {
					text := []byte(strings.ReplaceAll(csv, "\n", eol))
					if gz {
						text = gzipBytes(t, text)
					}
					dir := t.TempDir()
					src := writeFile(t, filepath.Join(dir, "ratings.csv"), text)
					l, err := ts.Resolve()
					if err != nil {
						t.Fatal(err)
					}
					if err := CheckTable(context.Background(), src, l); err != nil {
						t.Fatalf("CheckTable: %v", err)
					}
					dst := filepath.Join(dir, "out.parquet")
					if _, err := Ingest(context.Background(), src, dst, IngestOptions{Layout: l}); err != nil {
						t.Fatalf("Ingest: %v", err)
					}
					got, err := ReadAll[Rating](context.Background(), dst)
					if err != nil || !reflect.DeepEqual(got, sampleRatings) {
						t.Errorf("rows %v, %v", got, err)
					}
				})
			}
		}
	}
}

// Round 3, item 9: an error that echoes its input quotes at most safetext.MaxEcho bytes of
// it and says how long it was. A 10 MB header line made a 131 KB error line (the first
// 64 KiB, echoed twice); a 500 KB rating or time, a 500 KB line of its own.
func TestLongInputErrorsAreCut(t *testing.T) {
	long := strings.Repeat("x", 10<<20)
	big := strings.Repeat("9", 500<<10)
	own := TableSettings{Layout: "auto", User: "user", Item: "item", Rating: "stars", Time: "date", Delimiter: ",", Header: true, TimeFormat: TimeUnix}
	for _, tc := range []struct {
		name, text string
		ts         TableSettings
		want       string
	}{
		{"a 10 MB header line, own columns", "user,item,stars," + long + "\n1,2,3,4\n", own, `has no column "date"`},
		{"a 10 MB MovieLens header", "userId,movieId," + long + "\n1,2,3,4\n", DefaultTableSettings, "detect format: CSV header"},
		{"a 10 MB first line", long + "\n1,2,3,4\n", DefaultTableSettings, "detect format: first line"},
		{"a 500 KB rating", "userId,movieId,rating,timestamp\n1,2," + big + "x,4\n", DefaultTableSettings, "field rating: \"999"},
		{"a 500 KB time", "userId,movieId,rating,timestamp\n1,2,3," + big + "\n", DefaultTableSettings, "field timestamp: \"999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := writeFile(t, filepath.Join(dir, "ratings.csv"), []byte(tc.text))
			l, err := tc.ts.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			check := CheckTable(context.Background(), src, l)
			_, ingest := Ingest(context.Background(), src, filepath.Join(dir, "out.parquet"), IngestOptions{Layout: l, BlockBytes: 4 << 20})
			for what, err := range map[string]error{"CheckTable": check, "Ingest": ingest} {
				if err == nil {
					if what == "CheckTable" && strings.Contains(tc.name, "500 KB") {
						continue // past the lines the check reads
					}
					t.Fatalf("%s: no error", what)
				}
				msg, want := err.Error(), tc.want
				if what == "Ingest" && strings.Contains(msg, "line longer than") {
					want = "ratings.csv:1: line longer than" // the ingest reads lines of up to BlockBytes
				}
				if len(msg) > 1000 || !strings.Contains(msg, want) || !strings.Contains(msg, " bytes") {
					t.Errorf("%s: a %d-byte error, want one under 1000 bytes saying %q and the input's length: %.400s", what, len(msg), want, msg)
				}
			}
		})
	}
}
