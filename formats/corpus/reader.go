package corpus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// Step holds the counts of one time step, the input of the model.
type Step struct {
	T int
	// I, J, N are the non-zero positive counts n+_{ij} in COO form, sorted by (I, J).
	I, J []int32
	N    []float64
	// Unigram[i] is the (weighted) count of word i; Cooc[i] = sum_j n+_{ij}.
	Unigram, Cooc []float64
	// UnigramTotal = sum_i Unigram[i]; PosTotal = sum_ij n+_{ij}.
	UnigramTotal, PosTotal float64
}

// Len returns the number of stored non-zero counts.
func (s *Step) Len() int { return len(s.N) }

// CSR writes the row pointers of the counts into rowPtr (length V+1, reused) and returns it:
// row i holds the entries rowPtr[i]..rowPtr[i+1]-1 of J and N.
func (s *Step) CSR(rowPtr []int) []int {
	V := len(s.Unigram)
	rowPtr = resize(rowPtr, V+1)
	clear(rowPtr)
	for _, i := range s.I {
		rowPtr[i+1]++
	}
	for i := range V {
		rowPtr[i+1] += rowPtr[i]
	}
	return rowPtr
}

// Counts are all the steps of a counts file, in memory.
type Counts struct {
	V, Window int
	Scheme    Scheme
	Steps     []Step
}

// LoadCounts reads the counts and marginals files written by Counter.WriteCounts and
// Counter.WriteMarginals.
func LoadCounts(ctx context.Context, countsPath, marginalsPath string) (*Counts, error) {
	var c Counts
	var err error
	c.V, c.Window, c.Scheme, err = countsMeta(countsPath)
	if err != nil {
		return nil, err
	}
	err = ScanCounts(ctx, countsPath, marginalsPath, func(s *Step) error {
		c.Steps = append(c.Steps, Step{
			T: s.T, I: slices.Clone(s.I), J: slices.Clone(s.J), N: slices.Clone(s.N),
			Unigram: slices.Clone(s.Unigram), Cooc: slices.Clone(s.Cooc),
			UnigramTotal: s.UnigramTotal, PosTotal: s.PosTotal,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

func countsMeta(path string) (V, window int, scheme Scheme, err error) {
	m, err := lookupMeta(path, MetaVocabSize, MetaWindow, MetaScheme)
	if err == nil {
		V, err = metaInt(m, MetaVocabSize)
	}
	if err == nil {
		window, err = metaInt(m, MetaWindow)
	}
	if err == nil {
		scheme, err = ParseScheme(m[MetaScheme])
	}
	if err != nil {
		return 0, 0, 0, fmt.Errorf("open %s: %w", path, err)
	}
	return V, window, scheme, nil
}

// rowIter pulls rows from a parquet file.
type rowIter[T any] struct {
	f    *os.File
	r    *parquet.GenericReader[T]
	buf  []T
	k, n int
	eof  bool
	path string
}

func openRows[T any](path string) (*rowIter[T], error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &rowIter[T]{f: f, r: parquet.NewGenericReader[T](f), buf: make([]T, 4096), path: path}, nil
}

// peek returns the next row without consuming it, nil at the end.
func (it *rowIter[T]) peek() (*T, error) {
	for it.k == it.n {
		if it.eof {
			return nil, nil
		}
		n, err := it.r.Read(it.buf)
		it.k, it.n = 0, n
		if err == io.EOF {
			it.eof = true
		} else if err != nil {
			return nil, fmt.Errorf("read %s: %w", it.path, err)
		}
	}
	return &it.buf[it.k], nil
}

func (it *rowIter[T]) close() { it.r.Close(); it.f.Close() }

// ScanCounts streams the steps of a counts and a marginals file to fn in order t = 0, 1, ...,
// holding one step in memory. The Step is reused between calls.
func ScanCounts(ctx context.Context, countsPath, marginalsPath string, fn func(*Step) error) error {
	V, _, _, err := countsMeta(countsPath)
	if err != nil {
		return err
	}
	m, err := lookupMeta(marginalsPath, MetaVocabSize, MetaSteps)
	if err != nil {
		return err
	}
	mv, err := metaInt(m, MetaVocabSize)
	if err != nil {
		return err
	}
	T, err := metaInt(m, MetaSteps)
	if err != nil {
		return err
	}
	if mv != V {
		return fmt.Errorf("scan counts: %s has %d words, %s has %d", countsPath, V, marginalsPath, mv)
	}
	ci, err := openRows[countRow](countsPath)
	if err != nil {
		return err
	}
	defer ci.close()
	mi, err := openRows[marginalRow](marginalsPath)
	if err != nil {
		return err
	}
	defer mi.close()
	var s Step
	s.Unigram, s.Cooc = make([]float64, V), make([]float64, V)
	for t := range T {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.T, s.I, s.J, s.N = t, s.I[:0], s.J[:0], s.N[:0]
		for i := range V {
			r, err := mi.peek()
			if err != nil {
				return err
			}
			if r == nil || int(r.T) != t || int(r.I) != i {
				return fmt.Errorf("read %s: want row (t=%d, i=%d), got %+v", marginalsPath, t, i, r)
			}
			s.Unigram[i], s.Cooc[i], s.UnigramTotal, s.PosTotal = r.Count, r.Cooc, r.Total, r.CoocTotal
			mi.k++
		}
		for {
			r, err := ci.peek()
			if err != nil {
				return err
			}
			if r == nil || int(r.T) > t {
				break
			}
			if int(r.T) < t || r.I < 0 || int(r.I) >= V || r.J < 0 || int(r.J) >= V {
				return fmt.Errorf("read %s: row %+v out of order or range (step %d, %d words)", countsPath, *r, t, V)
			}
			s.I, s.J, s.N = append(s.I, r.I), append(s.J, r.J), append(s.N, r.N)
			ci.k++
		}
		if err := fn(&s); err != nil {
			return err
		}
	}
	if r, err := ci.peek(); err != nil || r != nil {
		if err == nil {
			err = errors.New("rows past the last step")
		}
		return fmt.Errorf("read %s: %w", countsPath, err)
	}
	return nil
}
