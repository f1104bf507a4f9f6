package ratings

import (
	"math/bits"
	"slices"
)

// IDSet counts distinct int32 ids: bitmaps for ids in (-1<<26, 1<<26) (text ids have
// negative codes), a map beyond.
type IDSet struct {
	bits, neg []uint64 // id, and -id for negative ids
	other     map[int32]struct{}
	n         int
}

// IDSetDense bounds the ids an IDSet keeps in bitmaps: |id| < IDSetDense.
const IDSetDense = 1 << 26

// NewIDSet returns an empty set.
func NewIDSet() *IDSet { return &IDSet{other: map[int32]struct{}{}} }

// Add adds id to the set.
func (s *IDSet) Add(id int32) {
	if id <= -IDSetDense || id >= IDSetDense {
		if _, ok := s.other[id]; !ok {
			s.other[id] = struct{}{}
			s.n++
		}
		return
	}
	b := &s.bits
	if id < 0 {
		b, id = &s.neg, -id
	}
	w := int(id) >> 6
	if w >= len(*b) {
		n := max(2*len(*b), w+1, 1024)
		*b = append(*b, make([]uint64, n-len(*b))...)
	}
	m := uint64(1) << (uint(id) & 63)
	if (*b)[w]&m == 0 {
		(*b)[w] |= m
		s.n++
	}
}

// Len is the number of distinct ids added.
func (s *IDSet) Len() int { return s.n }

// Sorted returns the ids of the set in ascending order.
func (s *IDSet) Sorted() []int32 {
	out := make([]int32, 0, s.n)
	for id := range s.other {
		if id < 0 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	for w := len(s.neg) - 1; w >= 0; w-- {
		for word := s.neg[w]; word != 0; {
			b := 63 - bits.LeadingZeros64(word)
			out = append(out, -int32(w<<6+b))
			word &^= 1 << uint(b)
		}
	}
	for w, word := range s.bits {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, int32(w<<6+b))
			word &= word - 1
		}
	}
	k := len(out)
	for id := range s.other {
		if id >= 0 {
			out = append(out, id)
		}
	}
	slices.Sort(out[k:])
	return out
}
