package corpus

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"goldstone/internal/testdata"
)

func TestTokenizer(t *testing.T) {
	tests := []struct {
		name string
		tk   Tokenizer
		in   string
		want []string
	}{
		{"basic", Tokenizer{}, "The Nation's 'great' people—Fellow-Citizens!", []string{"the", "nation's", "great", "people", "fellow", "citizens"}},
		{"curly apostrophe", Tokenizer{}, "nation\u2019s", []string{"nation's"}},
		{"keep case", Tokenizer{KeepCase: true}, "The USA", []string{"The", "USA"}},
		{"extra", Tokenizer{Extra: "-0123456789"}, "fellow-citizens of 1790", []string{"fellow-citizens", "of", "1790"}},
		{"control and invalid bytes separate", Tokenizer{}, "abc\x02def gh\xffij\tkl", []string{"abc", "def", "gh", "ij", "kl"}},
		{"unicode letters", Tokenizer{}, "Éclair über naïve 東京", []string{"éclair", "über", "naïve", "東京"}},
		{"combining mark", Tokenizer{}, "cafe\u0301 \u0301x", []string{"cafe\u0301", "x"}},
		{"edge apostrophes kept", Tokenizer{KeepEdgeApostrophes: true}, "'tis peoples'", []string{"'tis", "peoples'"}},
		{"lone apostrophes", Tokenizer{}, "' '' a", []string{"a"}},
		{"empty", Tokenizer{}, "  42 !! ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.tk.Append(nil, tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzTokenize(f *testing.F) {
	f.Add("The Nation's 'great' people\u2014Fellow-Citizens!", "")
	f.Add("abc\x02def gh\xffij", "-0")
	f.Add("cafe\u0301 \u0301x", "\xff")
	f.Fuzz(func(t *testing.T, text, extra string) {
		for _, tk := range []Tokenizer{{}, {KeepCase: true, Extra: extra}, {Extra: extra, KeepEdgeApostrophes: true}} {
			for _, tok := range tk.Append(nil, text) {
				if tok == "" || !utf8.ValidString(tok) {
					t.Fatalf("bad token %q from %q", tok, text)
				}
				if !tk.KeepEdgeApostrophes && (tok[0] == '\'' || tok[len(tok)-1] == '\'') {
					t.Fatalf("token %q has edge apostrophes", tok)
				}
				for _, r := range tok {
					ok := unicode.IsLetter(r) || unicode.IsMark(r) || r == '\'' || strings.ContainsRune(extra, r)
					if !ok || unicode.IsControl(r) && !strings.ContainsRune(extra, r) || r == '\u2019' {
						t.Fatalf("token %q holds rune %q", tok, r)
					}
				}
			}
		}
	})
}

func TestSOTU(t *testing.T) {
	dir := testdata.Path(t, "sotu")
	perYear := map[int]int{}
	var names []string
	var words int
	tk := Tokenizer{Extra: "0123456789"}
	var harrison []string
	err := ScanDir(context.Background(), dir, func(d Document) error {
		perYear[d.Time]++
		names = append(names, d.Name)
		toks := tk.Append(nil, d.Text)
		words += len(toks)
		if d.Time == 1890 {
			harrison = toks
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 233 || !slices.IsSorted(names) {
		t.Fatalf("got %d documents (sorted %v), want 233 sorted", len(names), slices.IsSorted(names))
	}
	years := slices.Sorted(func(yield func(int) bool) {
		for y := range perYear {
			if !yield(y) {
				return
			}
		}
	})
	if years[0] != 1790 || years[len(years)-1] != 2021 || perYear[1953] != 2 || perYear[1961] != 2 || perYear[1933] != 0 {
		t.Errorf("years %d-%d, 1953: %d, 1961: %d, 1933: %d", years[0], years[len(years)-1], perYear[1953], perYear[1961], perYear[1933])
	}
	if words < 1_600_000 || words > 2_000_000 {
		t.Errorf("%d words, want about 1.8 million", words)
	}
	// The 0x02 byte in "4 and 4 1\x02 per cent bonds" separates tokens.
	want := []string{"4", "and", "4", "1", "per", "cent", "bonds"}
	found := false
	for i := range harrison {
		if slices.Equal(harrison[i:min(i+len(want), len(harrison))], want) {
			found = true
		}
		if strings.ContainsRune(harrison[i], 0x02) {
			t.Errorf("token %q holds 0x02", harrison[i])
		}
	}
	if !found {
		t.Errorf("1890 address lacks the tokens %q", want)
	}
}

func TestScanCSV(t *testing.T) {
	in := "id,text,time\n1,\"Hello, world\",1999\n2,second doc,2000\n"
	var got []Document
	err := ScanCSV(context.Background(), strings.NewReader(in), "d.csv", func(d Document) error {
		got = append(got, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Document{{1999, "d.csv:2", "Hello, world"}, {2000, "d.csv:3", "second doc"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, tc := range []struct{ in, want string }{
		{"time,text\n1999,a\nx,b\n", `d.csv:3: field time: "x" is neither an integer year nor a date`},
		{"when,text\n", "d.csv:1: header"},
		{"time,text\n1999,a,extra\n", "d.csv:2: wrong number of fields"},
	} {
		err := ScanCSV(context.Background(), strings.NewReader(tc.in), "d.csv", func(Document) error { return nil })
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ScanCSV(%q) err = %v, want prefix %q", tc.in, err, tc.want)
		}
	}
}

func TestScanDirSkipsUndated(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"2001_b.txt": "b", "1999_a.txt": "a", "LICENSE": "x", "sub2000": ""} {
		if name == "sub2000" {
			os.Mkdir(filepath.Join(dir, name), 0o755)
			continue
		}
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	var got []Document
	if err := ScanDir(context.Background(), dir, func(d Document) error { got = append(got, d); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []Document{{1999, "1999_a.txt", "a"}, {2001, "2001_b.txt", "b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
