package corpus

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"goldstone/internal/testdata"
)

func TestIngestNgramsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "x.tsv")
	os.WriteFile(src, []byte("_START_ the cat sat on\t1999\t4\t1\nthe_DET cat\t1999\t3\t1\nthe cat sat on mat\t2000\t2\t1\n"), 0o644)
	dst := filepath.Join(dir, "seg.parquet")
	st, err := IngestNgrams(context.Background(), []string{src}, dst, CountingNgramOptions, ReadLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Segments != 2 || st.Tokens != 10 {
		t.Errorf("stats %+v", st)
	}
	if k, err := SegmentKind(dst); err != nil || k != KindNgram {
		t.Errorf("kind %q, %v", k, err)
	}
	var got []string
	err = ScanSegments(context.Background(), dst, func(s *Segment) error {
		got = append(got, fmt.Sprint(s.Time, s.Doc, s.Weight, s.Tokens))
		return nil
	})
	want := []string{"1999 0 4 [_START_ the cat sat on]", "2000 0 2 [the cat sat on mat]"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q (%v), want %q", got, err, want)
	}
}

// TestBuildSOTU runs the whole pipeline on the State of the Union addresses and checks the
// written files against an in-memory recount.
func TestBuildSOTU(t *testing.T) {
	sotu := testdata.Path(t, "sotu")
	ctx := context.Background()
	dir := t.TempDir()
	seg := filepath.Join(dir, "sotu.parquet")
	st, err := IngestDir(ctx, sotu, seg, Tokenizer{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Segments != 233 {
		t.Fatalf("%d segments, want 233", st.Segments)
	}
	cfg := BuildConfig{
		Segments: seg, OutDir: dir,
		Bins:  BinOptions{Width: 10},
		Vocab: VocabOptions{Size: 300},
		Split: SplitOptions{Test: 3, Valid: 2, Seed: 1},
	}
	res, err := Build(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bins.Len() != 24 || res.Bins.Lo[0] != 1790 || res.Bins.Hi[23] != 2029 || res.Vocab.Len() != 300 {
		t.Fatalf("bins %d (%d-%d), vocab %d", res.Bins.Len(), res.Bins.Lo[0], res.Bins.Hi[23], res.Vocab.Len())
	}
	if res.Vocab.Words[0] != "the" {
		t.Errorf("top word %q, want the", res.Vocab.Words[0])
	}
	v, err := ReadVocab(ctx, filepath.Join(dir, VocabFile))
	if err != nil || !reflect.DeepEqual(v.Words, res.Vocab.Words) || !reflect.DeepEqual(v.Score, res.Vocab.Score) {
		t.Fatalf("vocab round trip: %v", err)
	}
	bins, sp, err := ReadSteps(ctx, filepath.Join(dir, StepsFile))
	if err != nil || !reflect.DeepEqual(bins, res.Bins) || !reflect.DeepEqual(sp, res.Split) {
		t.Fatalf("steps round trip: %v\n%+v\n%+v", err, sp, res.Split)
	}
	counts, err := LoadCounts(ctx, filepath.Join(dir, CountsFile), filepath.Join(dir, MarginalsFile))
	if err != nil {
		t.Fatal(err)
	}
	if counts.V != 300 || counts.Window != 4 || len(counts.Steps) != 24 {
		t.Fatalf("counts V=%d window=%d steps=%d", counts.V, counts.Window, len(counts.Steps))
	}
	var pairs int64
	for _, s := range counts.Steps {
		pairs += int64(s.Len())
	}
	if pairs != res.Pairs {
		t.Errorf("%d stored pairs, Build says %d", pairs, res.Pairs)
	}

	// Independent recount of one step: words of the 1860s, OOV removed, window 4.
	const step = 7
	if res.Bins.Lo[step] != 1860 {
		t.Fatalf("step %d starts in %d", step, res.Bins.Lo[step])
	}
	want := map[[2]int32]float64{}
	var uni float64
	ScanDir(ctx, sotu, func(d Document) error {
		if d.Time < 1860 || d.Time > 1869 {
			return nil
		}
		var ids []int32
		for _, w := range (&Tokenizer{}).Append(nil, d.Text) {
			if id, ok := v.ID(w); ok {
				ids = append(ids, id)
			}
		}
		uni += float64(len(ids))
		for p := range ids {
			for q := range ids {
				if d := math.Abs(float64(p - q)); d >= 1 && d <= 4 {
					want[[2]int32{ids[p], ids[q]}] += 1 - (d-1)/4
				}
			}
		}
		return nil
	})
	s := counts.Steps[step]
	if s.Len() != len(want) || s.UnigramTotal != uni {
		t.Fatalf("step %d: %d pairs, %g tokens; recount %d, %g", step, s.Len(), s.UnigramTotal, len(want), uni)
	}
	for k := range s.I {
		if w := want[[2]int32{s.I[k], s.J[k]}]; s.N[k] != w {
			t.Fatalf("n(%s,%s) = %g, recount %g", v.Words[s.I[k]], v.Words[s.J[k]], s.N[k], w)
		}
		if k > 0 && (s.I[k] < s.I[k-1] || s.I[k] == s.I[k-1] && s.J[k] <= s.J[k-1]) {
			t.Fatalf("entries %d, %d not sorted", k-1, k)
		}
	}

	// Determinism: two builds over 1900-1930, in one pass and one step per pass, write
	// identical files.
	cfg.FromYear, cfg.ToYear = 1900, 1930
	cfg.Split = SplitOptions{Test: 1, Seed: 1}
	var files [2][][]byte
	for k := range files {
		cfg.OutDir = t.TempDir()
		cfg.StepsPerPass = k
		r, err := Build(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 && (r.Bins.Len() != 4 || r.Bins.Lo[0] != 1900 || r.Bins.Hi[3] != 1939 || r.Bins.Tokens[3] == 0) {
			t.Errorf("bins 1900-1930: %+v", r.Bins)
		}
		for _, f := range []string{VocabFile, StepsFile, CountsFile, MarginalsFile} {
			b, _ := os.ReadFile(filepath.Join(cfg.OutDir, f))
			files[k] = append(files[k], b)
		}
	}
	if !reflect.DeepEqual(files[0], files[1]) || len(files[0][2]) == 0 {
		t.Error("identical builds wrote different files")
	}
	for _, e := range mustReadDir(t, dir) {
		if strings.Contains(e, ".tmp") {
			t.Errorf("temporary file %s left", e)
		}
	}
}

func mustReadDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestIngestCSV(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "d.csv")
	os.WriteFile(src, []byte("time,text\n2001,\"Hello, World\"\n2000,!!\n2002,a b\n"), 0o644)
	dst := filepath.Join(dir, "seg.parquet")
	st, err := IngestCSV(context.Background(), src, dst, Tokenizer{})
	if err != nil || st.Segments != 2 || st.Skipped != 1 || st.Tokens != 4 {
		t.Fatalf("stats %+v, %v", st, err)
	}
	yt, err := YearTotals(context.Background(), dst)
	if err != nil || !reflect.DeepEqual(yt, map[int]int64{2001: 2, 2002: 2}) {
		t.Errorf("year totals %v, %v", yt, err)
	}
}

func TestCounterWriteLoad(t *testing.T) {
	v := mustVocab(t, "a", "b", "c")
	c := NewCounter(v, 3, CountOptions{Window: 3, Scheme: SchemeEnds})
	c.AddNgram(0, strings.Fields("a b c a"), 3)
	c.AddNgram(2, strings.Fields("c c x b"), 5)
	dir := t.TempDir()
	cp, mp := filepath.Join(dir, "c.parquet"), filepath.Join(dir, "m.parquet")
	if err := c.WriteCounts(cp); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMarginals(mp); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCounts(context.Background(), cp, mp)
	if err != nil {
		t.Fatal(err)
	}
	if got.V != 3 || got.Window != 3 || got.Scheme != SchemeEnds || len(got.Steps) != 3 {
		t.Fatalf("loaded %+v", got)
	}
	for s := range 3 {
		want := c.Step(nil, s)
		if g := got.Steps[s]; fmt.Sprint(g) != fmt.Sprint(*want) {
			t.Errorf("step %d: loaded %v, counted %v", s, g, *want)
		}
	}
	if got.Steps[1].Len() != 0 || got.Steps[0].Len() == 0 {
		t.Errorf("steps %+v", got.Steps)
	}
	if err := ScanCounts(context.Background(), cp, cp, func(*Step) error { return nil }); err == nil {
		t.Error("ScanCounts accepted a counts file as marginals")
	}
}
