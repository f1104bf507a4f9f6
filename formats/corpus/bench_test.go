package corpus

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"goldstone/internal/testdata"
)

var sinkInt int

func BenchmarkParseV2(b *testing.B) {
	path := filepath.Join(testdata.Path(b, "google-ngram-v2"), "googlebooks-eng-all-1gram-20120701-a.head200k.tsv")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	n := 0
	for b.Loop() {
		s := NewNgramScanner(bytes.NewReader(data), "bench", NgramOptions{})
		for s.Scan() {
			n++
		}
		if s.Err() != nil {
			b.Fatal(s.Err())
		}
	}
	sinkInt = n
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkTokenize(b *testing.B) {
	text := strings.Repeat("Fellow-Citizens of the Senate and House of Representatives: ", 2000)
	var tk Tokenizer
	var toks []string
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	n := 0
	for b.Loop() {
		toks = tk.Append(toks[:0], text)
		n += len(toks)
	}
	sinkInt = n
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
}

func BenchmarkCountText(b *testing.B) {
	for _, V := range []int{100, 10000} {
		b.Run("V="+strconv.Itoa(V), func(b *testing.B) {
			words := make([]string, V)
			for i := range words {
				words[i] = "w" + strconv.Itoa(i)
			}
			v, _ := NewVocab(words)
			rng := rand.New(rand.NewPCG(1, 1))
			doc := make([]string, 100000)
			for i := range doc {
				doc[i] = words[int(float64(V)*rng.Float64()*rng.Float64())] // skewed
			}
			c := NewCounter(v, 1, CountOptions{})
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				c.AddText(0, doc, 1)
				n += len(doc)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

func BenchmarkScanSegments(b *testing.B) {
	sotu := testdata.Path(b, "sotu")
	seg := filepath.Join(b.TempDir(), "s.parquet")
	if _, err := IngestDir(context.Background(), sotu, seg, Tokenizer{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		ScanSegments(context.Background(), seg, func(s *Segment) error { n += len(s.Tokens); return nil })
	}
	sinkInt = n
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
}
