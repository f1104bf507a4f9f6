package corpus

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"goldstone/internal/testdata"
)

func scanAll(t *testing.T, in string, opt NgramOptions) ([]Ngram, error) {
	t.Helper()
	var out []Ngram
	err := ScanNgrams(context.Background(), strings.NewReader(in), "in.tsv", opt, func(g *Ngram) error {
		c := *g
		c.Tokens = append([]string(nil), g.Tokens...)
		out = append(out, c)
		return nil
	})
	return out, err
}

func TestNgramParse(t *testing.T) {
	ng := func(year int, match, vol int64, toks ...string) Ngram {
		return Ngram{Tokens: toks, Year: year, Match: match, Volumes: vol}
	}
	tests := []struct {
		name string
		in   string
		opt  NgramOptions
		want []Ngram
	}{
		{"v2", "the cat\t1999\t12\t3\nthe cat\t2000\t5\t2\n", NgramOptions{},
			[]Ngram{ng(1999, 12, 3, "the", "cat"), ng(2000, 5, 2, "the", "cat")}},
		{"v2 crlf blank", "a b\t1800\t1\t1\r\n\r\n\nc\t1801\t2\t1", NgramOptions{Format: FormatV2},
			[]Ngram{ng(1800, 1, 1, "a", "b"), ng(1801, 2, 1, "c")}},
		{"v2 cr cr lf", "a b\t1800\t1\t1\r\r\nc\t1801\t2\t1\r\r\n", NgramOptions{},
			[]Ngram{ng(1800, 1, 1, "a", "b"), ng(1801, 2, 1, "c")}},
		{"v3 cr cr lf", "a b\t1800,1,1\t1801,2,2\r\r\n", NgramOptions{},
			[]Ngram{ng(1800, 1, 1, "a", "b"), ng(1801, 2, 2, "a", "b")}},
		{"v3", "the cat\t1999,12,3\t2000,5,2\n", NgramOptions{},
			[]Ngram{ng(1999, 12, 3, "the", "cat"), ng(2000, 5, 2, "the", "cat")}},
		{"v3 forced", "x\t1999,1,1\n", NgramOptions{Format: FormatV3}, []Ngram{ng(1999, 1, 1, "x")}},
		{"strip suffix drop tags", "_START_ burnt_VERB the_DET toast _END_\t1900\t7\t1\n_NOUN_\t1900\t9\t9\nA112_.\t1901\t1\t1\n",
			NgramOptions{},
			[]Ngram{ng(1900, 7, 1, "burnt", "the", "toast"), ng(1901, 1, 1, "A112")}},
		{"keep suffix and tags", "_START_ burnt_VERB _NOUN_\t1900\t7\t1\n", NgramOptions{KeepSuffixes: true, KeepTagTokens: true},
			[]Ngram{ng(1900, 7, 1, "_START_", "burnt_VERB", "_NOUN_")}},
		{"skip tagged", "_START_ the cat\t1900\t7\t1\nthe_DET cat\t1900\t3\t1\n_DET_ cat\t1900\t2\t1\nthe cat_NOUN\t1900\t1\t1\n",
			CountingNgramOptions, []Ngram{ng(1900, 7, 1, "_START_", "the", "cat")}},
		{"not tags", "AFFECTS_ a_b _x_ _\t1900\t1\t1\n", NgramOptions{},
			[]Ngram{ng(1900, 1, 1, "AFFECTS_", "a_b", "_x_", "_")}},
		{"lower", "The CAT_NOUN\t1900\t1\t1\n", NgramOptions{Lower: true}, []Ngram{ng(1900, 1, 1, "the", "cat")}},
		{"only tags dropped", "_START_ _END_\t1900\t1\t1\n", NgramOptions{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scanAll(t, tc.in, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestNgramMalformed(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opt  NgramOptions
		want string // error message
	}{
		{"v2 year", "ok\t1999\t1\t1\nbad\t19x9\t1\t1\n", NgramOptions{}, `in.tsv:2: field year: "19x9" is not an integer`},
		{"v2 match", "bad\t1999\t\t1\n", NgramOptions{}, "in.tsv:1: field match_count: empty"},
		{"v2 negative volumes", "bad\t1999\t1\t-1\n", NgramOptions{}, "in.tsv:1: field volume_count: negative"},
		{"v2 fields", "a\t1\t2\n", NgramOptions{}, "in.tsv:1: want ngram TAB year"},
		{"v2 no tab", "\n\nabc\n", NgramOptions{}, "in.tsv:3: want ngram TAB year"},
		{"v2 empty ngram", " \t1999\t1\t1\n", NgramOptions{}, "in.tsv:1: field ngram: empty"},
		{"v2 year range", "a\t99999999999\t1\t1\n", NgramOptions{}, "in.tsv:1: field year: \"99999999999\" out of range"},
		{"v3 short", "a\t1999,1,1\t2000,1\n", NgramOptions{}, "in.tsv:1: field counts[1]: want year,match_count,volume_count"},
		{"v3 match", "a\t1999,1,1\n\nb\t1999,x,1\n", NgramOptions{}, `in.tsv:3: field counts[0].match_count: "x" is not an integer`},
		{"v3 forced on v2", "a\t1999\t1\t1\n", NgramOptions{Format: FormatV3}, "in.tsv:1: field counts[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scanAll(t, tc.in, tc.opt)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %q, want prefix %q", err, tc.want)
			}
		})
	}
}

func TestNgramGzipAndLongLine(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("long")
	for y := 1500; y < 9000; y++ { // a line far longer than the reader's buffer
		sb.WriteString("\t")
		sb.WriteString(strings.Repeat("1", 0) + itoa(y) + ",2,1")
	}
	sb.WriteString("\n")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(sb.String()))
	zw.Close()
	n := 0
	var sum int64
	err := ScanNgrams(context.Background(), &z, "x.gz", NgramOptions{}, func(g *Ngram) error {
		n++
		sum += g.Match
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 7500 || sum != 15000 {
		t.Errorf("got %d records, match sum %d; want 7500, 15000", n, sum)
	}
}

func itoa(x int) string {
	var b []byte
	for ; x > 0; x /= 10 {
		b = append([]byte{byte('0' + x%10)}, b...)
	}
	return string(b)
}

func TestRealV2Excerpt(t *testing.T) {
	path := filepath.Join(testdata.Path(t, "google-ngram-v2"), "googlebooks-eng-all-1gram-20120701-a.head200k.tsv")
	ctx := context.Background()
	n, minY, maxY := 0, 1<<30, -1
	var match int64
	err := ScanNgramFile(ctx, path, NgramOptions{KeepSuffixes: true, KeepTagTokens: true}, func(g *Ngram) error {
		n++
		minY, maxY = min(minY, g.Year), max(maxY, g.Year)
		match += g.Match
		if len(g.Tokens) != 1 {
			t.Fatalf("1-gram with %d tokens: %q", len(g.Tokens), g.Tokens)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 200000 || minY != 1505 || maxY != 2008 {
		t.Errorf("got %d records, years %d-%d; want 200000, 1505-2008", n, minY, maxY)
	}
	if match != 72895844 {
		t.Errorf("match sum %d, want 72895844", match)
	}

	// Vocabulary per year, suffixes stripped; compare the top word's score with a direct
	// computation from the lines.
	u := NewUnigrams(2009)
	raw := map[int]map[string]int64{}
	err = ScanNgramFile(ctx, path, NgramOptions{}, func(g *Ngram) error {
		u.Add(g.Year, g.Tokens[0], g.Match)
		if raw[g.Year] == nil {
			raw[g.Year] = map[string]int64{}
		}
		raw[g.Year][g.Tokens[0]] += g.Match
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := BuildVocab(u, VocabOptions{Size: 20, MinCount: 10})
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 20 {
		t.Fatalf("vocabulary of %d words, want 20", v.Len())
	}
	for i := 1; i < v.Len(); i++ {
		if v.Score[i] > v.Score[i-1] || (v.Score[i] == v.Score[i-1] && v.Words[i] < v.Words[i-1]) {
			t.Errorf("words %d, %d out of order: %q %g, %q %g", i-1, i, v.Words[i-1], v.Score[i-1], v.Words[i], v.Score[i])
		}
	}
	for _, i := range []int{0, 19} {
		w := v.Words[i]
		var score float64
		for y := 1505; y <= 2008; y++ {
			var tot int64
			for _, c := range raw[y] {
				tot += c
			}
			if tot > 0 {
				score += float64(raw[y][w]) / float64(tot)
			}
		}
		if !near(score, v.Score[i], 1e-9*score) {
			t.Errorf("score of %q = %g, direct %g", w, v.Score[i], score)
		}
	}
	t.Logf("top words: %q", v.Words)
}

func TestTotals(t *testing.T) {
	got, err := ParseTotals(strings.NewReader(" 1505,32059,231,1\t1507,49586,477,1 \n1508,1,2,3\n"), "t.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []YearTotal{{1505, 32059, 231, 1}, {1507, 49586, 477, 1}, {1508, 1, 2, 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, tc := range []struct{ in, want string }{
		{"1505,1,2,3\n1506,1,x,3\n", `t.txt:2: field page_count (record 1): "x" is not an integer`},
		{"1505,1,2\n", "t.txt:1: record 1: want year,match_count,page_count,volume_count"},
		{"1505,1,2,3 1506,-1,2,3", "t.txt:1: field match_count (record 2): negative"},
	} {
		if _, err := ParseTotals(strings.NewReader(tc.in), "t.txt"); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ParseTotals(%q) err = %v, want %q", tc.in, err, tc.want)
		}
	}
	path := filepath.Join(testdata.Path(t, "google-ngram-v2"), "googlebooks-eng-all-totalcounts-20120701.one-record-per-line.csv")
	real, err := ReadTotalsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(real) != 425 || real[0] != (YearTotal{1505, 32059, 231, 1}) || real[len(real)-1].Year != 2008 {
		t.Errorf("got %d records, first %v, last %v", len(real), real[0], real[len(real)-1])
	}
}

func checkNgramInvariants(t *testing.T, data []byte, format NgramFormat) {
	for _, opt := range []NgramOptions{{Format: format}, {Format: format, KeepSuffixes: true, KeepTagTokens: true}, {Format: format, SkipTagged: true, Lower: true}} {
		s := NewNgramScanner(bytes.NewReader(data), "fuzz", opt)
		for s.Scan() {
			g := s.Ngram()
			if len(g.Tokens) == 0 || g.Match < 0 || g.Volumes < 0 {
				t.Fatalf("bad record %+v", *g)
			}
			for _, tok := range g.Tokens {
				if tok == "" || strings.ContainsAny(tok, " \t\n") {
					t.Fatalf("bad token %q", tok)
				}
				if !opt.KeepTagTokens && IsTagToken(tok) {
					t.Fatalf("tag token %q kept", tok)
				}
			}
		}
		var pe *ParseError
		if err := s.Err(); err != nil && !errors.As(err, &pe) {
			t.Fatalf("error %v is not a *ParseError", err)
		}
		if err := s.Err(); err != nil && !utf8.ValidString(err.Error()) {
			t.Fatalf("error message is not UTF-8: %q", err.Error())
		}
	}
}

func FuzzParseV2(f *testing.F) {
	f.Add([]byte("the cat\t1999\t12\t3\n_START_ burnt_VERB\t2000\t1\t1\n"))
	f.Add([]byte("a\t-1\t9223372036854775807\t0\r\n\n"))
	f.Add([]byte("bad\t19x9\t1\t1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { checkNgramInvariants(t, data, FormatV2) })
}

func FuzzParseV3(f *testing.F) {
	f.Add([]byte("the cat\t1999,12,3\t2000,5,2\n"))
	f.Add([]byte("_NOUN_\t1,1,1\t\n"))
	f.Add([]byte("a\t1999,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkNgramInvariants(t, data, FormatV3)
		checkNgramInvariants(t, data, FormatAuto)
	})
}
