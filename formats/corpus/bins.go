package corpus

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// TauMode says which time stamp a bin gets.
type TauMode int

const (
	// TauCentre stamps a bin with the centre of its year range, (Lo+Hi)/2 (default).
	TauCentre TauMode = iota
	// TauMean stamps a bin with the token-weighted mean year of the data in it.
	TauMean
)

// BinOptions configures MakeBins. The zero value makes one bin per year with data.
type BinOptions struct {
	// Width > 0 makes bins of Width consecutive years, starting at the first year with
	// data: [y0, y0+Width-1], [y0+Width, ...].
	Width int
	// Count > 0 splits [first, last] year into Count ranges of (nearly) equal width: year y
	// goes to range floor((y-first)*Count/(last-first+1)). Exclusive with Width.
	Count int
	Tau   TauMode
}

// Bins are the time steps: bin t covers the years Lo[t]..Hi[t] (inclusive) and has time
// stamp Tau[t] and Tokens[t] (weighted) tokens. Bins without data are dropped, so the
// years of consecutive bins need not be contiguous (the SOTU corpus has no 1933).
// First[t]..Last[t] are the first and last years with data in bin t (the last bin of
// a corpus ending in 2021 covers 2020..2029 but has data for 2020..2021 only).
type Bins struct {
	Lo, Hi      []int
	First, Last []int
	Tau         []float64
	Tokens      []int64
}

// Len returns the number of bins.
func (b *Bins) Len() int { return len(b.Lo) }

// Of returns the bin holding year y.
func (b *Bins) Of(y int) (int, bool) {
	t, found := slices.BinarySearch(b.Hi, y)
	if t == len(b.Hi) || (!found && y < b.Lo[t]) {
		return 0, false
	}
	return t, true
}

// YearTotals returns the weighted token count of every year of the segment store at path.
func YearTotals(ctx context.Context, path string) (map[int]int64, error) {
	out := map[int]int64{}
	err := ScanSegments(ctx, path, func(s *Segment) error {
		out[int(s.Time)] += s.Weight * int64(len(s.Tokens))
		return nil
	})
	return out, err
}

// MakeBins bins the years with a positive token count in yearTokens.
func MakeBins(yearTokens map[int]int64, opt BinOptions) (*Bins, error) {
	if opt.Width < 0 || opt.Count < 0 || (opt.Width > 0 && opt.Count > 0) {
		return nil, fmt.Errorf("make bins: want Width >= 0, Count >= 0, not both set; got %d and %d", opt.Width, opt.Count)
	}
	var years []int
	for y, n := range yearTokens {
		if n > 0 {
			years = append(years, y)
		}
	}
	if len(years) == 0 {
		return nil, errors.New("make bins: no year has data")
	}
	slices.Sort(years)
	first, last := years[0], years[len(years)-1]
	span := last - first + 1
	// rangeOf returns the index and year range of the range holding y.
	rangeOf := func(y int) (k, lo, hi int) {
		switch {
		case opt.Width > 0:
			k = (y - first) / opt.Width
			return k, first + k*opt.Width, first + (k+1)*opt.Width - 1
		case opt.Count > 0:
			k = int(int64(y-first) * int64(opt.Count) / int64(span))
			// lo_k = first + ceil(k*span/Count)
			start := func(k int) int {
				return first + int((int64(k)*int64(span)+int64(opt.Count)-1)/int64(opt.Count))
			}
			return k, start(k), start(k+1) - 1
		}
		return y - first, y, y
	}
	b := &Bins{}
	var wsum []float64
	prev := -1
	for _, y := range years {
		k, lo, hi := rangeOf(y)
		if k != prev {
			b.Lo, b.Hi = append(b.Lo, lo), append(b.Hi, hi)
			b.First, b.Last = append(b.First, y), append(b.Last, y)
			b.Tokens, wsum = append(b.Tokens, 0), append(wsum, 0)
			prev = k
		}
		t := len(b.Lo) - 1
		b.Last[t] = y
		b.Tokens[t] += yearTokens[y]
		wsum[t] += float64(float64(y) * float64(yearTokens[y]))
	}
	b.Tau = make([]float64, len(b.Lo))
	for t := range b.Tau {
		if opt.Tau == TauMean {
			b.Tau[t] = wsum[t] / float64(b.Tokens[t])
		} else {
			b.Tau[t] = float64(b.Lo[t]+b.Hi[t]) / 2
		}
	}
	return b, nil
}
