package corpus

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func mustVocab(t testing.TB, words ...string) *Vocab {
	t.Helper()
	v, err := NewVocab(words)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// dense returns step 0 of c as a map "i j" -> n, plus the unigram counts.
func dense(c *Counter, t int) (map[string]float64, []float64) {
	s := c.Step(nil, t)
	m := map[string]float64{}
	for k := range s.I {
		m[fmt.Sprintf("%s %s", c.v.Words[s.I[k]], c.v.Words[s.J[k]])] = s.N[k]
	}
	return m, s.Unigram
}

func TestCountHand(t *testing.T) {
	abcde := mustVocab(t, "a", "b", "c", "d", "e")
	tests := []struct {
		name    string
		opt     CountOptions
		ngram   bool
		tokens  string
		weight  int64
		want    map[string]float64
		wantUni []float64
	}{
		{"text", CountOptions{}, false, "a b c a", 1,
			map[string]float64{"a a": 1, "a b": 1.75, "b a": 1.75, "a c": 1.75, "c a": 1.75, "b c": 1, "c b": 1},
			[]float64{2, 1, 1, 0, 0}},
		{"text OOV removed, window cut", CountOptions{}, false, "a x y b c d e a", 2,
			map[string]float64{ // kept: a b c d e a (positions 0..5)
				"a b": 2 + 0.5, "b a": 2.5, // d=1 and d=4 (b..a)
				"a c": 1.5 + 1, "c a": 2.5, // a0-c2 d=2; c2-a5 d=3
				"a d": 1 + 1.5, "d a": 2.5, // a0-d3 d=3; d3-a5 d=2
				"a e": 0.5 + 2, "e a": 2.5, // a0-e4 d=4; e4-a5 d=1
				"b c": 2, "c b": 2, "b d": 1.5, "d b": 1.5, "b e": 1, "e b": 1,
				"c d": 2, "d c": 2, "c e": 1.5, "e c": 1.5, "d e": 2, "e d": 2,
			},
			[]float64{4, 2, 2, 2, 2}},
		{"ngram all", CountOptions{Scheme: SchemeAll}, true, "a b c d e", 10,
			map[string]float64{"a b": 10, "b a": 10, "a c": 7.5, "c a": 7.5, "a d": 5, "d a": 5, "a e": 2.5, "e a": 2.5,
				"b c": 10, "c b": 10, "b d": 7.5, "d b": 7.5, "b e": 5, "e b": 5,
				"c d": 10, "d c": 10, "c e": 7.5, "e c": 7.5, "d e": 10, "e d": 10},
			[]float64{10, 10, 10, 10, 10}},
		{"ngram ends", CountOptions{Scheme: SchemeEnds}, true, "a b c d e", 10,
			map[string]float64{"a b": 10, "a c": 7.5, "a d": 5, "a e": 2.5, "e d": 10, "e c": 7.5, "e b": 5, "e a": 2.5},
			[]float64{10, 0, 0, 0, 0}},
		{"ngram ends, OOV inside", CountOptions{Scheme: SchemeEnds}, true, "a x c d e", 4,
			map[string]float64{"a c": 4, "a d": 3, "a e": 2, "e d": 4, "e c": 3, "e a": 2},
			[]float64{4, 0, 0, 0, 0}},
		{"ngram ends, marker first", CountOptions{Scheme: SchemeEnds}, true, "_START_ b c d e", 4,
			map[string]float64{"e d": 4, "e c": 3, "e b": 2},
			[]float64{0, 0, 0, 0, 0}},
		{"ngram centre", CountOptions{Scheme: SchemeCentre}, true, "a b c d e", 10,
			map[string]float64{"c b": 10, "c d": 10, "c a": 7.5, "c e": 7.5},
			[]float64{0, 0, 10, 0, 0}},
		{"ngram centre OOV middle", CountOptions{Scheme: SchemeCentre}, true, "a b x d e", 10,
			map[string]float64{}, []float64{0, 0, 0, 0, 0}},
		{"ngram all window 2", CountOptions{Window: 2}, true, "a b c", 3,
			map[string]float64{"a b": 3, "b a": 3, "b c": 3, "c b": 3, "a c": 1.5, "c a": 1.5},
			[]float64{3, 3, 3, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCounter(abcde, 2, tc.opt)
			toks := strings.Fields(tc.tokens)
			if tc.ngram {
				c.AddNgram(1, toks, tc.weight)
			} else {
				c.AddText(1, toks, tc.weight)
			}
			got, uni := dense(c, 1)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("counts\n got %v\nwant %v", got, tc.want)
			}
			if fmt.Sprint(uni) != fmt.Sprint(tc.wantUni) {
				t.Errorf("unigrams %v, want %v", uni, tc.wantUni)
			}
			if s := c.Step(nil, 0); s.Len() != 0 || s.UnigramTotal != 0 {
				t.Errorf("step 0 not empty: %+v", s)
			}
			s := c.Step(nil, 1)
			var tot float64
			for _, n := range got {
				tot += n
			}
			if s.PosTotal != tot {
				t.Errorf("PosTotal %g, want %g", s.PosTotal, tot)
			}
		})
	}
}

// fiveGrams returns the 5-grams of a sentence padded with four markers on each side, as
// the Google data has them.
func fiveGrams(sentence []string) [][]string {
	pad := append(append([]string{"_START_", "_START_", "_START_", "_START_"}, sentence...), "_END_", "_END_", "_END_", "_END_")
	var out [][]string
	for s := 0; s+5 <= len(pad); s++ {
		out = append(out, pad[s:s+5])
	}
	return out
}

// TestSchemesAgainstText checks that SchemeEnds on the 5-grams of a text counts exactly as
// running text with window 4, SchemeCentre as running text with window 2, and that
// SchemeAll over-counts a pair at distance d by 5-d.
func TestSchemesAgainstText(t *testing.T) {
	v := mustVocab(t, "a", "b", "c", "d", "e", "f")
	rng := rand.New(rand.NewPCG(1, 2))
	var sentence []string
	for range 200 {
		sentence = append(sentence, v.Words[rng.IntN(v.Len())])
	}
	grams := fiveGrams(sentence)
	for _, tc := range []struct {
		scheme Scheme
		window int
	}{{SchemeEnds, 4}, {SchemeCentre, 2}} {
		text := NewCounter(v, 1, CountOptions{Window: tc.window})
		text.AddText(0, sentence, 3)
		ng := NewCounter(v, 1, CountOptions{Window: tc.window, Scheme: tc.scheme})
		for _, g := range grams {
			ng.AddNgram(0, g, 3)
		}
		a, b := text.Step(nil, 0), ng.Step(nil, 0)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%v: 5-gram counts differ from text counts\ntext %v\nngram %v", tc.scheme, a, b)
		}
	}
	// SchemeAll: one occurrence of the pair (a,b) at distance d lies in 5-d 5-grams.
	for d := 1; d <= 4; d++ {
		sent := []string{"a"}
		for range d - 1 {
			sent = append(sent, "x")
		}
		sent = append(sent, "b")
		c := NewCounter(mustVocab(t, "a", "b", "x"), 1, CountOptions{Scheme: SchemeAll})
		for _, g := range fiveGrams(sent) {
			c.AddNgram(0, g, 1)
		}
		got, _ := dense(c, 0)
		want := float64(5-d) * (1 - float64(d-1)/4)
		if got["a b"] != want || got["b a"] != want {
			t.Errorf("d=%d: n(a,b)=%g n(b,a)=%g, want %g", d, got["a b"], got["b a"], want)
		}
	}
}

func TestNegFactors(t *testing.T) {
	uni := []float64{5, 0, 2, 9, 1}
	const pos, eta = 37.5, 1.5
	a, b := NegFactors(nil, nil, uni, pos, eta)
	var tot, z float64
	for _, u := range uni {
		tot += u
	}
	for _, u := range uni {
		z += math.Pow(u/tot, 0.75)
	}
	var sum float64
	for i := range uni {
		for j := range uni {
			want := eta * pos * (uni[i] / tot) * math.Pow(uni[j]/tot, 0.75) / z
			if got := a[i] * b[j]; !near(got, want, 1e-12*math.Max(1, want)) {
				t.Errorf("n-(%d,%d) = %g, want %g", i, j, got, want)
			}
			sum += a[i] * b[j]
		}
	}
	if !near(sum, eta*pos, 1e-9) {
		t.Errorf("sum of negative counts %g, want eta*sum n+ = %g", sum, eta*pos)
	}
	// Reuse and the empty step.
	a2, b2 := NegFactors(a, b, make([]float64, 5), pos, eta)
	if &a2[0] != &a[0] || &b2[0] != &b[0] {
		t.Error("NegFactors did not reuse its destinations")
	}
	for i := range a2 {
		if a2[i] != 0 || b2[i] != 0 {
			t.Errorf("empty step: a=%v b=%v", a2, b2)
		}
	}
}

func TestCSR(t *testing.T) {
	c := NewCounter(mustVocab(t, "a", "b", "c", "d"), 1, CountOptions{})
	c.AddText(0, strings.Fields("a c a d"), 1)
	s := c.Step(nil, 0)
	rp := s.CSR(nil)
	if fmt.Sprint(rp) != "[0 3 3 5 7]" {
		t.Fatalf("rowPtr %v, I %v", rp, s.I)
	}
	for i := range 4 {
		var row float64
		for k := rp[i]; k < rp[i+1]; k++ {
			if s.I[k] != int32(i) {
				t.Errorf("entry %d in row %d has I=%d", k, i, s.I[k])
			}
			row += s.N[k]
		}
		if row != s.Cooc[i] {
			t.Errorf("row %d sums to %g, Cooc %g", i, row, s.Cooc[i])
		}
	}
}
