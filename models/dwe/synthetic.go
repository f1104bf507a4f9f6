package dwe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"goldstone/optim"
)

// Planted describes synthetic counts drawn from known embeddings.
type Planted struct {
	V, T, Dim int
	Scale     float64 // std of the planted vectors at the first step; default 0.7
	Drift     float64 // std of each random-walk increment per step; default 0.03
	K         float64 // negatives per pair: n-_ij = K for all i,j; default 20
	Gap       float64 // time between consecutive steps; default 1
}

// Generate returns counts whose expected positives are n+_ij = K exp(u_i.v_j)
// with n-_ij = K, so the likelihood is maximised exactly at x_ij = u_i.v_j,
// and the planted means (layout of MAP) with U_t = V_t, a balanced
// factorisation that MAP recovers up to one orthogonal map. Counts are
// dense (every pair positive); meant for small V.
func (p Planted) Generate(rng *rand.Rand) (*Counts, []float64, error) {
	if p.V <= 0 || p.T <= 0 || p.Dim <= 0 {
		return nil, nil, fmt.Errorf("dwe planted: V=%d T=%d Dim=%d", p.V, p.T, p.Dim)
	}
	if p.Scale == 0 {
		p.Scale = 0.7
	}
	if p.Drift == 0 {
		p.Drift = 0.03
	}
	if p.K == 0 {
		p.K = 20
	}
	if p.Gap == 0 {
		p.Gap = 1
	}
	v, d := p.V, p.Dim
	s := 2 * v * d
	z := make([]float64, p.T*s)
	u := make([]float64, v*d)
	for i := range u {
		u[i] = p.Scale * optim.NormFloat64(rng)
	}
	c := &Counts{V: v, Times: make([]float64, p.T), Steps: make([]StepCounts, p.T)}
	sk := math.Sqrt(p.K)
	for t := 0; t < p.T; t++ {
		if t > 0 {
			for i := range u {
				u[i] += float64(p.Drift * optim.NormFloat64(rng))
			}
		}
		copy(z[t*s:], u)
		copy(z[t*s+v*d:], u)
		c.Times[t] = float64(t) * p.Gap
		st := StepCounts{NegA: make([]float64, v), NegB: make([]float64, v)}
		for i := 0; i < v; i++ {
			st.NegA[i], st.NegB[i] = sk, sk
			for j := 0; j < v; j++ {
				var x float64
				for k := 0; k < d; k++ {
					x += float64(u[i*d+k] * u[j*d+k])
				}
				st.I = append(st.I, int32(i))
				st.J = append(st.J, int32(j))
				st.Pos = append(st.Pos, p.K*optim.Exp(x))
			}
		}
		c.Steps[t] = st
	}
	return c, z, c.Validate()
}

// RandomCounts returns sparse counts for benchmarks: per step, every word
// co-occurs with up to nnz random contexts (duplicates dropped; count
// 1 + 10 Exp(1)), and
// negatives are set by StepCounts.Negatives(v, 1, 0.75). Times are 0..T-1.
func RandomCounts(rng *rand.Rand, v, t, nnz int) *Counts {
	c := &Counts{V: v, Times: make([]float64, t), Steps: make([]StepCounts, t)}
	var js []int
	for k := 0; k < t; k++ {
		c.Times[k] = float64(k)
		st := StepCounts{}
		for i := 0; i < v; i++ {
			js = js[:0]
			for range min(nnz, v) {
				js = append(js, rng.IntN(v))
			}
			slices.Sort(js)
			for k, j := range js {
				if k > 0 && js[k-1] == j {
					continue
				}
				st.I = append(st.I, int32(i))
				st.J = append(st.J, int32(j))
				st.Pos = append(st.Pos, 1+float64(10*optim.ExpFloat64(rng)))
			}
		}
		st.Negatives(v, 1, 0.75)
		c.Steps[k] = st
	}
	if err := c.Validate(); err != nil {
		panic(err)
	}
	return c
}
