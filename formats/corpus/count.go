package corpus

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Scheme says which pairs of an n-gram are counted (see the package doc).
type Scheme int

const (
	// SchemeAll counts every pair within the window, as for running text.
	SchemeAll Scheme = iota
	// SchemeEnds (HistWords, context size 4) counts first -> later and last -> earlier tokens.
	SchemeEnds
	// SchemeCentre (HistWords, context size 2) counts middle -> other tokens; n-grams of
	// even length contribute nothing.
	SchemeCentre
)

func (s Scheme) String() string {
	switch s {
	case SchemeAll:
		return "all"
	case SchemeEnds:
		return "ends"
	case SchemeCentre:
		return "centre"
	}
	return fmt.Sprintf("Scheme(%d)", int(s))
}

// ParseScheme parses the String form of a Scheme.
func ParseScheme(s string) (Scheme, error) {
	for _, sc := range []Scheme{SchemeAll, SchemeEnds, SchemeCentre} {
		if sc.String() == s {
			return sc, nil
		}
	}
	return 0, fmt.Errorf("unknown counting scheme %q (want all, ends or centre)", s)
}

// DefaultWindow is cmax of the word2vec window: pairs up to 4 tokens apart count.
const DefaultWindow = 4

// CountOptions configures a Counter.
type CountOptions struct {
	Window int    // cmax; 0 means DefaultWindow
	Scheme Scheme // for n-grams (AddNgram); text always counts every pair
}

// Counter accumulates positive co-occurrence counts n+_{ij,t} and unigram counts per step,
// exactly, as integers in units of 1/Window. Memory is one hash map entry per distinct
// (t, i, j) with a non-zero count.
type Counter struct {
	v      *Vocab
	window int
	scheme Scheme
	pairs  []map[uint64]int64 // [t][i<<32|j] = sum of (Window-d+1)*weight
	uni    [][]int64          // [t][i] = weighted unigram count
	ids    []int32            // scratch: kept token ids
	raw    []int              // scratch: raw positions of kept tokens
}

// NewCounter returns a counter over vocabulary v for steps steps.
func NewCounter(v *Vocab, steps int, opt CountOptions) *Counter {
	w := opt.Window
	if w == 0 {
		w = DefaultWindow
	}
	if w < 0 || steps < 0 {
		panic(fmt.Sprintf("corpus: NewCounter with window %d, %d steps", w, steps))
	}
	c := &Counter{v: v, window: w, scheme: opt.Scheme, pairs: make([]map[uint64]int64, steps), uni: make([][]int64, steps)}
	for t := range c.pairs {
		c.pairs[t] = map[uint64]int64{}
		c.uni[t] = make([]int64, v.Len())
	}
	return c
}

// Steps returns the number of steps.
func (c *Counter) Steps() int { return len(c.pairs) }

// Window returns cmax.
func (c *Counter) Window() int { return c.window }

// keep maps tokens to vocabulary ids, dropping out-of-vocabulary tokens.
func (c *Counter) keep(tokens []string) {
	c.ids, c.raw = c.ids[:0], c.raw[:0]
	for p, w := range tokens {
		if id, ok := c.v.ID(w); ok {
			c.ids = append(c.ids, id)
			c.raw = append(c.raw, p)
		}
	}
}

func (c *Counter) add(t int, i, j int32, num int64) {
	c.pairs[t][uint64(uint32(i))<<32|uint64(uint32(j))] += num
}

// fromAnchor counts pairs (ids[a] -> ids[q]) for the kept tokens q within the window of a,
// on the side dir (-1, +1, or 0 for both).
func (c *Counter) fromAnchor(t, a, dir int, weight int64) {
	for q := max(a-c.window, 0); q < len(c.ids) && q <= a+c.window; q++ {
		d := q - a
		if d == 0 || (dir > 0 && d < 0) || (dir < 0 && d > 0) {
			continue
		}
		c.add(t, c.ids[a], c.ids[q], int64(c.window-abs(d)+1)*weight)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// AddText counts the tokens of running text in step t, every pair within the window, both
// directions, times weight.
func (c *Counter) AddText(t int, tokens []string, weight int64) {
	c.keep(tokens)
	c.all(t, weight)
}

func (c *Counter) all(t int, weight int64) {
	u := c.uni[t]
	for p, i := range c.ids {
		u[i] += weight
		for q := p + 1; q < len(c.ids) && q-p <= c.window; q++ {
			num := int64(c.window-(q-p)+1) * weight
			c.add(t, i, c.ids[q], num)
			c.add(t, c.ids[q], i, num)
		}
	}
}

// AddNgram counts one n-gram record of step t with its match count, by the Scheme.
func (c *Counter) AddNgram(t int, tokens []string, match int64) {
	c.keep(tokens)
	n := len(c.ids)
	switch c.scheme {
	case SchemeAll:
		c.all(t, match)
	case SchemeEnds:
		if n > 0 && c.raw[0] == 0 {
			c.uni[t][c.ids[0]] += match
			c.fromAnchor(t, 0, +1, match)
		}
		if n > 0 && c.raw[n-1] == len(tokens)-1 {
			c.fromAnchor(t, n-1, -1, match)
		}
	case SchemeCentre:
		if len(tokens)%2 == 0 {
			return
		}
		if a, ok := slices.BinarySearch(c.raw, len(tokens)/2); ok {
			c.uni[t][c.ids[a]] += match
			c.fromAnchor(t, a, 0, match)
		}
	default:
		panic(fmt.Sprintf("corpus: unknown Scheme %d", int(c.scheme)))
	}
}

// CountSegments adds the segments of the store at path to c, text or n-grams by the store's
// kind, in the step of their year (segments outside the bins are skipped).
func CountSegments(ctx context.Context, path string, bins *Bins, c *Counter) error {
	kind, err := SegmentKind(path)
	if err != nil {
		return err
	}
	if bins.Len() != c.Steps() {
		panic(fmt.Sprintf("corpus: CountSegments with %d bins, counter of %d steps", bins.Len(), c.Steps()))
	}
	return ScanSegments(ctx, path, func(s *Segment) error {
		t, ok := bins.Of(int(s.Time))
		if !ok {
			return nil
		}
		if kind == KindNgram {
			c.AddNgram(t, s.Tokens, s.Weight)
		} else {
			c.AddText(t, s.Tokens, s.Weight)
		}
		return nil
	})
}

// Step fills dst with step t: the non-zero n+_{ij,t} sorted by (i, j) and the marginals,
// reusing dst's slices, and returns it (a new Step when dst is nil).
func (c *Counter) Step(dst *Step, t int) *Step {
	if dst == nil {
		dst = &Step{}
	}
	V := c.v.Len()
	m := c.pairs[t]
	keys := slices.Sorted(maps.Keys(m))
	dst.T = t
	dst.I, dst.J, dst.N = resize(dst.I, len(keys)), resize(dst.J, len(keys)), resize(dst.N, len(keys))
	dst.Unigram, dst.Cooc = resize(dst.Unigram, V), resize(dst.Cooc, V)
	rows := make([]int64, V)
	var tot, utot int64
	w := float64(c.window)
	for k, key := range keys {
		i, j, num := int32(key>>32), int32(uint32(key)), m[key]
		dst.I[k], dst.J[k], dst.N[k] = i, j, float64(num)/w
		rows[i] += num
		tot += num
	}
	for i := range V {
		dst.Cooc[i] = float64(rows[i]) / w
		dst.Unigram[i] = float64(c.uni[t][i])
		utot += c.uni[t][i]
	}
	dst.PosTotal, dst.UnigramTotal = float64(tot)/w, float64(utot)
	return dst
}

// resize returns x with length n, reusing its array when it is large enough.
func resize[T any](x []T, n int) []T { return slices.Grow(x[:0], n)[:n] }

// countRow is one row of the counts file: the (weighted) positive
// co-occurrence count n+_{ij,t} of word i with context word j in time step
// t (indices into the vocabulary file's word_index).
type countRow struct {
	T int32   `parquet:"t"`
	I int32   `parquet:"word_index"`
	J int32   `parquet:"context_index"`
	N float64 `parquet:"cooc"`
}

// marginalRow is one row of the marginals file, per time step and word.
type marginalRow struct {
	T         int32   `parquet:"t"`
	I         int32   `parquet:"word_index"`
	Count     float64 `parquet:"count"`      // unigram count of word i in step t
	Cooc      float64 `parquet:"cooc"`       // sum_j n+_{ij,t}
	Total     float64 `parquet:"total"`      // sum_i count
	CoocTotal float64 `parquet:"cooc_total"` // sum_ij n+_{ij,t}
}

func (c *Counter) meta() map[string]string {
	return map[string]string{
		MetaVocabSize: strconv.Itoa(c.v.Len()),
		MetaSteps:     strconv.Itoa(c.Steps()),
		MetaWindow:    strconv.Itoa(c.window),
		MetaScheme:    c.scheme.String(),
	}
}

// WriteCounts writes the positive counts to Parquet, rows (t, i, j, n) sorted by (t, i, j).
func (c *Counter) WriteCounts(path string) error {
	return writeParquet(path, c.meta(), func(put func(countRow) error) error {
		var s *Step
		for t := range c.Steps() {
			s = c.Step(s, t)
			for k := range s.I {
				if err := put(countRow{T: int32(t), I: s.I[k], J: s.J[k], N: s.N[k]}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// WriteMarginals writes the per-step marginals to Parquet, rows (t, i, count, cooc, total,
// cooc_total) for every step t and word i, sorted by (t, i): count is the unigram count
// of word i, cooc = sum_j n+_ij, total = sum_i count and cooc_total = sum_ij n+_ij.
func (c *Counter) WriteMarginals(path string) error {
	return writeParquet(path, c.meta(), func(put func(marginalRow) error) error {
		var s *Step
		for t := range c.Steps() {
			s = c.Step(s, t)
			for i := range s.Unigram {
				r := marginalRow{T: int32(t), I: int32(i), Count: s.Unigram[i], Cooc: s.Cooc[i], Total: s.UnigramTotal, CoocTotal: s.PosTotal}
				if err := put(r); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// CountToFiles counts the segment store at path over bins and writes the counts and
// marginals files (as Counter.WriteCounts and WriteMarginals would), holding at most
// stepsPerPass steps in memory: it makes ceil(steps/stepsPerPass) passes over the store
// (stepsPerPass <= 0 means one pass). It returns the number of stored non-zero counts.
func CountToFiles(ctx context.Context, path string, bins *Bins, v *Vocab, opt CountOptions, stepsPerPass int, countsPath, marginalsPath string) (int64, error) {
	kind, err := SegmentKind(path)
	if err != nil {
		return 0, err
	}
	T := bins.Len()
	if stepsPerPass <= 0 || stepsPerPass > T {
		stepsPerPass = T
	}
	meta := NewCounter(v, 0, opt).meta()
	meta[MetaSteps] = strconv.Itoa(T)
	var pairs int64
	err = writeParquet(countsPath, meta, func(putC func(countRow) error) error {
		return writeParquet(marginalsPath, meta, func(putM func(marginalRow) error) error {
			for lo := 0; lo < T; lo += stepsPerPass {
				hi := min(lo+stepsPerPass, T)
				c := NewCounter(v, hi-lo, opt)
				err := ScanSegments(ctx, path, func(s *Segment) error {
					t, ok := bins.Of(int(s.Time))
					if !ok || t < lo || t >= hi {
						return nil
					}
					if kind == KindNgram {
						c.AddNgram(t-lo, s.Tokens, s.Weight)
					} else {
						c.AddText(t-lo, s.Tokens, s.Weight)
					}
					return nil
				})
				if err != nil {
					return err
				}
				var st *Step
				for k := range hi - lo {
					st = c.Step(st, k)
					pairs += int64(st.Len())
					if err := writeStep(int32(lo+k), st, putC, putM); err != nil {
						return err
					}
				}
			}
			return nil
		})
	})
	return pairs, err
}

func writeStep(t int32, s *Step, putC func(countRow) error, putM func(marginalRow) error) error {
	for k := range s.I {
		if err := putC(countRow{T: t, I: s.I[k], J: s.J[k], N: s.N[k]}); err != nil {
			return err
		}
	}
	for i := range s.Unigram {
		r := marginalRow{T: t, I: int32(i), Count: s.Unigram[i], Cooc: s.Cooc[i], Total: s.UnigramTotal, CoocTotal: s.PosTotal}
		if err := putM(r); err != nil {
			return err
		}
	}
	return nil
}
