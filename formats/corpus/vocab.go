package corpus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Unigrams holds per-step word counts, the input of BuildVocab.
type Unigrams struct {
	Counts []map[string]int64 // Counts[t][w]: weighted count of w in step t
	Totals []int64            // Totals[t]: weighted count of all tokens of step t but tag tokens
}

// NewUnigrams returns empty counts for steps steps.
func NewUnigrams(steps int) *Unigrams {
	u := &Unigrams{Counts: make([]map[string]int64, steps), Totals: make([]int64, steps)}
	for t := range u.Counts {
		u.Counts[t] = map[string]int64{}
	}
	return u
}

// Add adds n occurrences of w to step t. Tag tokens (IsTagToken) are not counted.
func (u *Unigrams) Add(t int, w string, n int64) {
	if IsTagToken(w) {
		return
	}
	u.Counts[t][w] += n
	u.Totals[t] += n
}

// StepUnigrams counts the words of the segment store at path per bin, each token weighted
// by its segment's weight. Segments whose year is in no bin are skipped.
func StepUnigrams(ctx context.Context, path string, bins *Bins) (*Unigrams, error) {
	u := NewUnigrams(bins.Len())
	err := ScanSegments(ctx, path, func(s *Segment) error {
		t, ok := bins.Of(int(s.Time))
		if !ok {
			return nil
		}
		for _, w := range s.Tokens {
			u.Add(t, w, s.Weight)
		}
		return nil
	})
	return u, err
}

// VocabOptions configures BuildVocab.
type VocabOptions struct {
	Size     int                    // V, the number of words kept; 0 keeps all
	MinCount int64                  // drop words whose count summed over steps is lower
	Exclude  func(word string) bool // drop words for which it returns true; nil drops none
}

// Vocab is a vocabulary: word i is Words[i], ordered by decreasing Score, ties by word.
type Vocab struct {
	Words []string
	Score []float64 // sum over steps t of count_t(w)/total_t
	Count []int64   // count summed over steps
	index map[string]int32
}

// NewVocab returns the vocabulary of words (in this order, no duplicates) with zero
// scores and counts.
func NewVocab(words []string) (*Vocab, error) {
	v := &Vocab{Words: words, Score: make([]float64, len(words)), Count: make([]int64, len(words))}
	return v, v.buildIndex()
}

func (v *Vocab) buildIndex() error {
	v.index = make(map[string]int32, len(v.Words))
	for i, w := range v.Words {
		if _, dup := v.index[w]; dup {
			return fmt.Errorf("vocabulary: duplicate word %q", w)
		}
		v.index[w] = int32(i)
	}
	return nil
}

// Len returns the number of words V.
func (v *Vocab) Len() int { return len(v.Words) }

// ID returns the index of word w.
func (v *Vocab) ID(w string) (int32, bool) {
	i, ok := v.index[w]
	return i, ok
}

// BuildVocab keeps the Size words of highest score sum_t count_t(w)/total_t, so that every
// step weighs the same whatever its size (modern years do not dominate); ties go to the
// smaller word (byte order). Tag tokens are never words. Steps with a zero total are skipped.
func BuildVocab(u *Unigrams, opt VocabOptions) (*Vocab, error) {
	if opt.Size < 0 || opt.MinCount < 0 {
		return nil, fmt.Errorf("build vocabulary: negative Size %d or MinCount %d", opt.Size, opt.MinCount)
	}
	type acc struct {
		score float64
		count int64
	}
	all := map[string]*acc{}
	for t, m := range u.Counts {
		if u.Totals[t] <= 0 {
			continue
		}
		tot := float64(u.Totals[t])
		for w, c := range m {
			a := all[w]
			if a == nil {
				a = &acc{}
				all[w] = a
			}
			a.score += float64(c) / tot // per word, steps are added in order t = 0, 1, ...
			a.count += c
		}
	}
	type entry struct {
		w string
		acc
	}
	var es []entry
	for w, a := range all {
		if a.count < opt.MinCount || a.count == 0 || IsTagToken(w) || (opt.Exclude != nil && opt.Exclude(w)) {
			continue
		}
		es = append(es, entry{w, *a})
	}
	slices.SortFunc(es, func(a, b entry) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.w, b.w)
	})
	if opt.Size > 0 && len(es) > opt.Size {
		es = es[:opt.Size]
	}
	if len(es) == 0 {
		return nil, errors.New("build vocabulary: no word left")
	}
	v := &Vocab{Words: make([]string, len(es)), Score: make([]float64, len(es)), Count: make([]int64, len(es))}
	for i, e := range es {
		v.Words[i], v.Score[i], v.Count[i] = e.w, e.score, e.count
	}
	return v, v.buildIndex()
}

type vocabRow struct {
	I     int32   `parquet:"word_index"`
	Word  string  `parquet:"word"`
	Score float64 `parquet:"score"`
	Count int64   `parquet:"count"`
}

// WriteVocab writes v to a Parquet file (word_index, word, score, count).
func WriteVocab(path string, v *Vocab) error {
	return writeParquet(path, map[string]string{MetaVocabSize: strconv.Itoa(v.Len())}, func(put func(vocabRow) error) error {
		for i, w := range v.Words {
			if err := put(vocabRow{I: int32(i), Word: w, Score: v.Score[i], Count: v.Count[i]}); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReadVocab reads a vocabulary written by WriteVocab.
func ReadVocab(ctx context.Context, path string) (*Vocab, error) {
	v := &Vocab{}
	err := scanParquet(ctx, path, func(r *vocabRow) error {
		if int(r.I) != len(v.Words) {
			return fmt.Errorf("read %s: row %d has index %d", path, len(v.Words), r.I)
		}
		v.Words = append(v.Words, r.Word)
		v.Score = append(v.Score, r.Score)
		v.Count = append(v.Count, r.Count)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := v.buildIndex(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return v, nil
}
