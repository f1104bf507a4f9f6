package corpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Round 3, item 9: a corpus reader's error quotes at most safetext.MaxEcho bytes of the
// input and says how long it was: a 10 MB CSV header, a JSON Lines object with 100,000
// fields, a 1 MB year or count.
func TestLongInputErrorsAreCut(t *testing.T) {
	long := strings.Repeat("x", 10<<20)
	big := strings.Repeat("9", 1<<20)
	var many strings.Builder
	many.WriteString(`{"t": 1999`)
	for i := range 100000 {
		fmt.Fprintf(&many, `, "field%d": 1`, i)
	}
	many.WriteString("}\n")
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"csv header", CheckCSV(ctx, write("h.csv", "time,"+long+"\n1999,a\n"), DocFields{}), `header "time,xxx`},
		{"csv year", CheckCSV(ctx, write("y.csv", "time,text\n"+big+"x,a\n"), DocFields{}), `field time: "999`},
		{"jsonl fields", CheckJSONL(ctx, write("f.jsonl", many.String()), DocFields{}), `field time: missing (the object's fields: "field0"`},
		{"jsonl year", CheckJSONL(ctx, write("y.jsonl", `{"time": `+big+`1.5, "text": "a"}`+"\n"), DocFields{}), `field time: 999`},
		{"ngram count", CheckNgrams(ctx, []string{write("n.tsv", "a\t1999\t"+big+"\t1\n")}, NgramOptions{}), `field match_count: "999`},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		msg := tc.err.Error()
		if len(msg) > 1000 || !strings.Contains(msg, tc.want) || !strings.Contains(msg, " bytes)") {
			t.Errorf("%s: a %d-byte error, want one under 1000 bytes saying %q and the input's length: %.400s", tc.name, len(msg), tc.want, msg)
		}
	}
}

// Round 3, item 7: a gzip or zstd corpus file that decompresses to more than
// max_input_bytes stops with an error naming the file and the setting, in every format,
// and writes no store; the same file within the limit ingests.
func TestIngestByteLimit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	line := map[string]string{"csv": "1999,the same words again\n", "jsonl": `{"time": 1999, "text": "the same words again"}` + "\n", "ngram": "the same\t1999\t3\t1\n"}
	head := map[string]string{"csv": "time,text\n"}
	for _, format := range []string{"csv", "jsonl", "ngram"} {
		for _, kind := range []string{"gzip", "zstd"} {
			text := head[format] + strings.Repeat(line[format], (4<<20)/len(line[format]))
			src := filepath.Join(dir, format+"."+kind)
			if err := os.WriteFile(src, compress(t, kind, []byte(text)), 0o644); err != nil {
				t.Fatal(err)
			}
			ingest := func(lim ReadLimits) error {
				dst := filepath.Join(t.TempDir(), "s.parquet")
				var err error
				switch format {
				case "csv":
					_, err = IngestCSVFields(ctx, src, dst, DocFields{}, Tokenizer{}, lim)
				case "jsonl":
					_, err = IngestJSONL(ctx, src, dst, DocFields{}, Tokenizer{}, lim)
				default:
					_, err = IngestNgrams(ctx, []string{src}, dst, CountingNgramOptions, lim)
				}
				if ents, _ := os.ReadDir(filepath.Dir(dst)); err != nil && len(ents) != 0 {
					t.Errorf("%s %s: left behind %v", format, kind, ents)
				}
				return err
			}
			err := ingest(ReadLimits{Bytes: 1 << 20})
			if err == nil || !strings.Contains(err.Error(), src) || !strings.Contains(err.Error(), "larger than 1048576 bytes") || !strings.Contains(err.Error(), "raise max_input_bytes") {
				t.Errorf("%s %s: %v; want an error naming the file, the limit and max_input_bytes", format, kind, err)
			}
			if err := ingest(ReadLimits{Bytes: 8 << 20}); err != nil {
				t.Errorf("%s %s within the limit: %v", format, kind, err)
			}
		}
	}
}
