package corpus_test

import (
	"fmt"
	"strings"

	"goldstone/formats/corpus"
)

func ExampleTokenizer() {
	var tk corpus.Tokenizer
	fmt.Printf("%q\n", tk.Append(nil, "Fellow-Citizens of the Senate\x02and the House's 'own'"))
	// Output: ["fellow" "citizens" "of" "the" "senate" "and" "the" "house's" "own"]
}

func ExampleNgramScanner() {
	in := "_START_ burnt_VERB toast\t1999\t12\t3\nburnt toast\t1999,40,9\t2000,50,8\n"
	s := corpus.NewNgramScanner(strings.NewReader(in), "in.tsv", corpus.NgramOptions{})
	for s.Scan() {
		g := s.Ngram()
		fmt.Println(g.Tokens, g.Year, g.Match, g.Volumes)
	}
	fmt.Println(s.Err())
	// Output:
	// [burnt toast] 1999 12 3
	// [burnt toast] 1999 40 9
	// [burnt toast] 2000 50 8
	// <nil>
}

func ExampleCounter() {
	v, _ := corpus.NewVocab([]string{"a", "b", "c"})
	c := corpus.NewCounter(v, 1, corpus.CountOptions{}) // window 4: weights 1, .75, .5, .25
	c.AddText(0, []string{"a", "x", "b", "c"}, 1)       // x is out of vocabulary: removed
	s := c.Step(nil, 0)
	var out []string
	for k := range s.I {
		out = append(out, fmt.Sprintf("n(%s,%s)=%g", v.Words[s.I[k]], v.Words[s.J[k]], s.N[k]))
	}
	fmt.Println(strings.Join(out, " "))
	// n-_ij = sum(n+) P(i) P(j)^.75 / sum_j P(j)^.75 = 5.5 * 1/3 * 1/3 here.
	a, b := s.NegFactors(nil, nil, 1)
	fmt.Printf("n-(a,b)=%.4f\n", a[0]*b[1])
	// Output:
	// n(a,b)=1 n(a,c)=0.75 n(b,a)=1 n(b,c)=1 n(c,a)=0.75 n(c,b)=1
	// n-(a,b)=0.6111
}

func ExampleSplitSteps() {
	sp, _ := corpus.SplitSteps(209, corpus.SplitOptions{Test: 21, Seed: 1})
	fmt.Println(len(sp.Train), len(sp.Test), sp.Role(0), sp.Role(208))
	// Output: 188 21 train train
}
