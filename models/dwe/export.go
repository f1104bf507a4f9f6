package dwe

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"goldstone/optim"
)

// EmbeddingRow is one row of the Parquet export: the word vector of one word
// at one time step.
type EmbeddingRow struct {
	Step      int32     `parquet:"t"` // time-step index 0..T-1 (column t, as in every Parquet output)
	Time      float64   `parquet:"time"`
	WordIndex int32     `parquet:"word_index"` // index in the vocabulary
	Word      string    `parquet:"word"`
	Vector    []float64 `parquet:"vector,list"`
}

// WriteParquet writes the word vectors u_{t,i} of every step (context vectors
// are not exported) as EmbeddingRow rows, step-major, to w. means has layout
// b with b.N = 2 len(vocab) and b.T = len(times).
func WriteParquet(w io.Writer, means []float64, b optim.Blocks, times []float64, vocab []string) error {
	if err := checkExport(b, times, vocab); err != nil {
		return err
	}
	pw := parquet.NewGenericWriter[EmbeddingRow](w)
	rows := make([]EmbeddingRow, len(vocab))
	for t := 0; t < b.T; t++ {
		for i, word := range vocab {
			rows[i] = EmbeddingRow{Step: int32(t), Time: times[t], WordIndex: int32(i), Word: word, Vector: wordVec(means, b, t, i)}
		}
		if _, err := pw.Write(rows); err != nil {
			return fmt.Errorf("write parquet step %d: %w", t, err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("write parquet: %w", err)
	}
	return nil
}

func checkExport(b optim.Blocks, times []float64, vocab []string) error {
	if b.N != 2*len(vocab) || b.T != len(times) {
		return fmt.Errorf("export: blocks %+v for %d words and %d times", b, len(vocab), len(times))
	}
	for i, word := range vocab {
		if word == "" || strings.ContainsAny(word, " \t\n\r") {
			return fmt.Errorf("export: word %d %q is empty or contains white space", i, word)
		}
	}
	return nil
}

// WriteWord2Vec writes the word vectors of step t in the word2vec text
// format: a header line "V d", then one line "word v1 ... vd" per word
// (shortest round-trip decimal form).
func WriteWord2Vec(w io.Writer, means []float64, b optim.Blocks, t int, vocab []string) error {
	if err := checkExport(b, make([]float64, b.T), vocab); err != nil {
		return err
	}
	if t < 0 || t >= b.T {
		return fmt.Errorf("word2vec: step %d of %d", t, b.T)
	}
	bw := bufio.NewWriter(w)
	buf := make([]byte, 0, 64)
	buf = strconv.AppendInt(buf, int64(len(vocab)), 10)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, int64(b.D), 10)
	buf = append(buf, '\n')
	bw.Write(buf)
	for i, word := range vocab {
		bw.WriteString(word)
		for _, v := range wordVec(means, b, t, i) {
			buf = append(buf[:0], ' ')
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
			bw.Write(buf)
		}
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write word2vec: %w", err)
	}
	return nil
}

// ReadWord2Vec parses the word2vec text format written by WriteWord2Vec and
// returns the words and their vectors (row i = word i, len(words)*d values).
func ReadWord2Vec(r io.Reader) (words []string, vecs []float64, d int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, nil, 0, fmt.Errorf("read word2vec: %w", err)
		}
		return nil, nil, 0, fmt.Errorf("read word2vec: line 1: missing header")
	}
	hdr := strings.Fields(sc.Text())
	if len(hdr) != 2 {
		return nil, nil, 0, fmt.Errorf("read word2vec: line 1: header %q, want \"V d\"", sc.Text())
	}
	v, err1 := strconv.Atoi(hdr[0])
	d, err2 := strconv.Atoi(hdr[1])
	if err1 != nil || err2 != nil || v < 0 || d <= 0 || v > 1<<26 || d > 1<<16 {
		return nil, nil, 0, fmt.Errorf("read word2vec: line 1: bad header %q", sc.Text())
	}
	words = make([]string, 0, min(v, 1<<16))
	for line := 2; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != d+1 {
			return nil, nil, 0, fmt.Errorf("read word2vec: line %d: %d fields, want %d", line, len(f), d+1)
		}
		if len(words) == v {
			return nil, nil, 0, fmt.Errorf("read word2vec: line %d: more than %d words", line, v)
		}
		words = append(words, f[0])
		for k, s := range f[1:] {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("read word2vec: line %d: field %d: %w", line, k+2, err)
			}
			vecs = append(vecs, x)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, 0, fmt.Errorf("read word2vec: %w", err)
	}
	if len(words) != v {
		return nil, nil, 0, fmt.Errorf("read word2vec: %d words, header says %d", len(words), v)
	}
	return words, vecs, d, nil
}
