package dwe

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"goldstone/optim"
)

// Counts holds the training (or test) data of the dynamic skip-gram model:
// one sparse matrix of positive word-context co-occurrence counts per time
// step, and rank-one negative counts n-_ij = NegA[i]*NegB[j].
type Counts struct {
	V     int          // vocabulary size (words and contexts share it)
	Times []float64    // time stamp tau_t of every step, strictly increasing
	Steps []StepCounts // one per time step, len(Steps) == len(Times)
}

// StepCounts are the counts of one time step. Positive counts are a sparse
// COO matrix sorted by (I, J) without duplicates; negatives are the outer
// product NegA NegB^T and are never materialised.
type StepCounts struct {
	I, J []int32   // word and context index of each positive entry
	Pos  []float64 // n+_ij > 0
	NegA []float64 // len V, >= 0
	NegB []float64 // len V, >= 0

	rowPtr []int // CSR row pointers over I (len V+1), built by Validate
}

// T is the number of time steps.
func (c *Counts) T() int { return len(c.Steps) }

// Validate checks shapes, ordering and signs, and builds the row index each
// step needs. It must be called (NewMAP and NewVariational do) before use.
func (c *Counts) Validate() error {
	if c.V <= 0 {
		return fmt.Errorf("dwe counts: V=%d", c.V)
	}
	if len(c.Times) != len(c.Steps) || len(c.Steps) == 0 {
		return fmt.Errorf("dwe counts: %d times for %d steps", len(c.Times), len(c.Steps))
	}
	for t := range c.Times {
		if math.IsNaN(c.Times[t]) || math.IsInf(c.Times[t], 0) {
			return fmt.Errorf("dwe counts: step %d: time %v", t, c.Times[t])
		}
		if t > 0 && !(c.Times[t] > c.Times[t-1]) {
			return fmt.Errorf("dwe counts: step %d: time %v not after %v", t, c.Times[t], c.Times[t-1])
		}
	}
	for t := range c.Steps {
		if err := c.Steps[t].validate(c.V); err != nil {
			return fmt.Errorf("dwe counts: step %d: %w", t, err)
		}
	}
	return nil
}

func (s *StepCounts) validate(v int) error {
	if len(s.J) != len(s.I) || len(s.Pos) != len(s.I) {
		return fmt.Errorf("len(I)=%d len(J)=%d len(Pos)=%d", len(s.I), len(s.J), len(s.Pos))
	}
	if len(s.NegA) != v || len(s.NegB) != v {
		return fmt.Errorf("len(NegA)=%d len(NegB)=%d, want %d", len(s.NegA), len(s.NegB), v)
	}
	for k, a := range s.NegA {
		if !(a >= 0) || math.IsInf(a, 0) {
			return fmt.Errorf("NegA[%d]=%v", k, a)
		}
	}
	for k, b := range s.NegB {
		if !(b >= 0) || math.IsInf(b, 0) {
			return fmt.Errorf("NegB[%d]=%v", k, b)
		}
	}
	rp := make([]int, v+1)
	for k := range s.I {
		i, j := s.I[k], s.J[k]
		if i < 0 || int(i) >= v || j < 0 || int(j) >= v {
			return fmt.Errorf("entry %d: (%d,%d) out of range for V=%d", k, i, j, v)
		}
		if !(s.Pos[k] > 0) || math.IsInf(s.Pos[k], 0) {
			return fmt.Errorf("entry %d (%d,%d): n+=%v, want finite > 0", k, i, j, s.Pos[k])
		}
		if k > 0 && (i < s.I[k-1] || (i == s.I[k-1] && j <= s.J[k-1])) {
			return fmt.Errorf("entry %d (%d,%d): not sorted after (%d,%d) or duplicate", k, i, j, s.I[k-1], s.J[k-1])
		}
		rp[i+1]++
	}
	for i := 0; i < v; i++ {
		rp[i+1] += rp[i]
	}
	s.rowPtr = rp
	return nil
}

// Total is the number of data points of a step, sum_ij (n+_ij + n-_ij).
func (s *StepCounts) Total() float64 {
	var p, a, b float64
	for _, v := range s.Pos {
		p += v
	}
	for _, v := range s.NegA {
		a += v
	}
	for _, v := range s.NegB {
		b += v
	}
	return p + float64(a*b)
}

// Negatives sets the rank-one negative counts the way word2vec and the DWE
// reference code do: NegA[i] = sum_j n+_ij (word marginal) and
// NegB[j] = ratio * f_j^power / sum_k f_k^power with f_j = sum_i n+_ij the
// context marginal (power 0.75, ratio 1 in DWE). s.NegA and s.NegB are
// (re)allocated with length v.
func (s *StepCounts) Negatives(v int, ratio, power float64) {
	s.NegA = slices.Grow(s.NegA[:0], v)[:v]
	s.NegB = slices.Grow(s.NegB[:0], v)[:v]
	clear(s.NegA)
	clear(s.NegB)
	for k, p := range s.Pos {
		s.NegA[s.I[k]] += p
		s.NegB[s.J[k]] += p
	}
	var z float64
	for j, f := range s.NegB {
		s.NegB[j] = optim.Pow(f, power)
		z += s.NegB[j]
	}
	if z > 0 {
		for j := range s.NegB {
			s.NegB[j] *= ratio / z
		}
	}
}

// SortEntries sorts the positive entries by (I, J). Duplicates are kept
// (Validate rejects them).
func (s *StepCounts) SortEntries() {
	idx := make([]int, len(s.I))
	for k := range idx {
		idx[k] = k
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := idx[a], idx[b]
		if s.I[ka] != s.I[kb] {
			return s.I[ka] < s.I[kb]
		}
		return s.J[ka] < s.J[kb]
	})
	i, j, p := make([]int32, len(idx)), make([]int32, len(idx)), make([]float64, len(idx))
	for k, o := range idx {
		i[k], j[k], p[k] = s.I[o], s.J[o], s.Pos[o]
	}
	s.I, s.J, s.Pos = i, j, p
}
