package corpus

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func compress(t *testing.T, kind string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	switch kind {
	case "gzip":
		w := gzip.NewWriter(&b)
		w.Write(data)
		w.Close()
	case "zstd":
		w, err := zstd.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		w.Close()
	default:
		return data
	}
	return b.Bytes()
}

// JSON Lines: the date field as a number, a year string, an ISO date or an RFC 3339
// date-time; field names of one's own; other fields, blank lines, CRLF and a byte-order
// mark; plain, gzip or zstd.
func TestScanJSONL(t *testing.T) {
	text := "\ufeff{\"published\": 1999, \"body\": \"Hello, world\", \"id\": 7}\r\n" +
		"\n" +
		"{\"body\": \"second doc\", \"published\": \"2000\"}\n" +
		"{\"published\": \"2001-05-02\", \"body\": \"third\"}\n" +
		"   \n" +
		"{\"published\": \"1850-05-02T10:00:00-05:00\", \"body\": \"fourth \\u00e9t\\u00e9\"}"
	want := []Document{{1999, "d.jsonl:1", "Hello, world"}, {2000, "d.jsonl:3", "second doc"}, {2001, "d.jsonl:4", "third"}, {1850, "d.jsonl:6", "fourth été"}}
	for _, kind := range []string{"plain", "gzip", "zstd"} {
		var got []Document
		err := ScanJSONL(context.Background(), bytes.NewReader(compress(t, kind, []byte(text))), "d.jsonl", DocFields{Time: "published", Text: "body"}, func(d Document) error {
			got = append(got, d)
			return nil
		})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", kind, got, err, want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"{\"time\": 1999, \"text\": \"a\"}\n{\"date\": 2000, \"text\": \"b\"}\n", `d.jsonl:2: field time: missing (the object's fields: "date", "text"; set time_field)`},
		{"{\"time\": 1999}\n", `d.jsonl:1: field text: missing (the object's fields: "time"; set text_field)`},
		{"{\"time\": 1999.5, \"text\": \"a\"}\n", "d.jsonl:1: field time: 1999.5 is not an integer year"},
		{"{\"time\": \"May 1999\", \"text\": \"a\"}\n", `d.jsonl:1: field time: "May 1999" is neither an integer year nor a date`},
		{"{\"time\": null, \"text\": \"a\"}\n", "d.jsonl:1: field time: null is neither a number nor a string"},
		{"{\"time\": 1999, \"text\": [\"a\"]}\n", `d.jsonl:1: field text: ["a"] is not a string`},
		{"{\"time\": 1999, \"text\": \"a\"}\ntime,text\n", "d.jsonl:2: not a JSON object"},
		{"[1999, \"a\"]\n", "d.jsonl:1: not a JSON object"},
	} {
		err := ScanJSONL(context.Background(), strings.NewReader(tc.in), "d.jsonl", DocFields{}, func(Document) error { return nil })
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ScanJSONL(%q) err = %v, want prefix %q", tc.in, err, tc.want)
		}
	}
}

// A JSON Lines corpus and the same documents as CSV make the same segments; CSV times may
// be dates too.
func TestIngestJSONLMatchesCSV(t *testing.T) {
	dir := t.TempDir()
	var js, cs strings.Builder
	cs.WriteString("date,text\n")
	for i := range 50 {
		y := 1900 + i%7
		txt := fmt.Sprintf("the %d cats sat on mat %c and the dog ran", i, 'a'+i%5)
		fmt.Fprintf(&js, "{\"date\": \"%d-03-0%d\", \"text\": %q}\n", y, 1+i%9, txt)
		fmt.Fprintf(&cs, "%d-03-0%d,%q\n", y, 1+i%9, txt)
	}
	jp := filepath.Join(dir, "c.jsonl.zst")
	os.WriteFile(jp, compress(t, "zstd", []byte(js.String())), 0o644)
	cp := filepath.Join(dir, "c.csv")
	os.WriteFile(cp, []byte(cs.String()), 0o644)
	f := DocFields{Time: "date"}
	ctx := context.Background()
	if _, err := IngestJSONL(ctx, jp, filepath.Join(dir, "j.parquet"), f, Tokenizer{}, ReadLimits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := IngestCSVFields(ctx, cp, filepath.Join(dir, "c.parquet"), f, Tokenizer{}, ReadLimits{}); err != nil {
		t.Fatal(err)
	}
	read := func(p string) []string {
		var out []string
		if err := ScanSegments(ctx, p, func(s *Segment) error {
			out = append(out, fmt.Sprint(s.Time, s.Doc, s.Weight, s.Tokens))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	j, c := read(filepath.Join(dir, "j.parquet")), read(filepath.Join(dir, "c.parquet"))
	if len(j) != 50 || !reflect.DeepEqual(j, c) || !strings.HasPrefix(j[0], "1900 0 1 [the cats sat on mat a and the dog ran]") {
		t.Errorf("jsonl %q\ncsv %q", j[:2], c[:2])
	}
}

// The checks plan runs: a wrong header, a missing field, a file for a folder, a folder
// without dated files, a bad n-gram line; good inputs pass.
func TestChecks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	good := write("good.csv", "time,text\n1999,a b c\n")
	if err := CheckCSV(ctx, good, DocFields{}); err != nil {
		t.Error(err)
	}
	if err := CheckCSV(ctx, write("bad.csv", "year,body\n1999,a\n"), DocFields{}); err == nil || !strings.Contains(err.Error(), `bad.csv:1: header "year,body" lacks columns "time" and "text"`) {
		t.Errorf("csv with a wrong header: %v", err)
	}
	if err := CheckCSV(ctx, write("bad2.csv", "year,body\n1999,a\n"), DocFields{Time: "year", Text: "body"}); err != nil {
		t.Errorf("csv with its fields named: %v", err)
	}
	if err := CheckJSONL(ctx, write("a.jsonl", "{\"date\": 1999, \"text\": \"a\"}\n"), DocFields{}); err == nil || !strings.Contains(err.Error(), "a.jsonl:1: field time: missing") {
		t.Errorf("jsonl without the time field: %v", err)
	}
	if err := CheckJSONL(ctx, write("b.jsonl", "{\"date\": 1999, \"text\": \"a\"}\n"), DocFields{Time: "date"}); err != nil {
		t.Errorf("jsonl: %v", err)
	}
	if err := CheckDir(good); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("text format on a file: %v", err)
	}
	write("undated/notes.txt", "x")
	if err := CheckDir(filepath.Join(dir, "undated")); err == nil || !strings.Contains(err.Error(), "no file name starts with a year") {
		t.Errorf("folder without dated files: %v", err)
	}
	write("dated/1999_a.txt", "x")
	if err := CheckDir(filepath.Join(dir, "dated")); err != nil {
		t.Error(err)
	}
	if err := CheckNgrams(ctx, []string{good}, CountingNgramOptions); err == nil {
		t.Error("a CSV passed as n-grams")
	}
	if err := CheckNgrams(ctx, []string{write("g.tsv", "the cat\t1999\t4\t1\n")}, CountingNgramOptions); err != nil {
		t.Error(err)
	}
}

// FuzzJSONLine: one line never panics the reader; an error is a *ParseError.
func FuzzJSONLine(f *testing.F) {
	for _, s := range []string{`{"time": 1999, "text": "a"}`, `{"time": "1999-01-02", "text": ""}`, `{"time": -5, "text": "x"}`, `{"time": 1e3, "text": "x"}`, `{}`, `[`, `{"time": {}, "text": 1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		err := ScanJSONL(context.Background(), strings.NewReader(line), "f", DocFields{}, func(Document) error { return nil })
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("%q: %v is not a *ParseError", line, err)
		}
	})
}
