package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"goldstone/optim"
)

// Artificial returns the paper's artificial data matrix, rows x cols
// row-major: X = Ubar^T Vbar + noise with Ubar (rank x rows) and Vbar
// (rank x cols) standard normal and independent N(0, noiseVar) noise. The
// paper uses rows = cols = 10, rank = 3, noiseVar = 1e-3.
func Artificial(seed uint64, rows, cols, rank int, noiseVar float64) []float64 {
	if rows <= 0 || cols <= 0 || rank <= 0 || !(noiseVar >= 0) {
		panic(fmt.Sprintf("models: Artificial(rows=%d, cols=%d, rank=%d, noiseVar=%v)", rows, cols, rank, noiseVar))
	}
	rng := rand.New(rand.NewPCG(seed, 0x61727469666963))
	ubar := make([]float64, rank*rows) // column i: ubar[i*rank:(i+1)*rank]
	vbar := make([]float64, rank*cols)
	for i := range ubar {
		ubar[i] = optim.NormFloat64(rng)
	}
	for i := range vbar {
		vbar[i] = optim.NormFloat64(rng)
	}
	sd := math.Sqrt(noiseVar)
	x := make([]float64, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			var s float64
			for k := 0; k < rank; k++ {
				s += float64(ubar[i*rank+k] * vbar[j*rank+k])
			}
			x[i*cols+j] = s + float64(sd*optim.NormFloat64(rng))
		}
	}
	return x
}

// OptimalLoss is the minimum of sum_t 1/2 ||X - U_t^T V_t||_F^2 over rank-d
// factors when the same rows x cols matrix X is used at all T steps:
// T * 1/2 * sum_{k>d} sigma_k(X)^2 (Eckart-Young). With a coupling the
// minimum is the same, reached by equal Z_t.
func OptimalLoss(x []float64, rows, cols, d, T int) float64 {
	if len(x) != rows*cols || d < 0 || T < 0 {
		panic(fmt.Sprintf("models: OptimalLoss: len(x)=%d rows=%d cols=%d d=%d T=%d", len(x), rows, cols, d, T))
	}
	// optim.SVD wants at least as many rows as columns: take X^T if needed.
	m, n, a := rows, cols, x
	if rows < cols {
		m, n, a = cols, rows, make([]float64, rows*cols)
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				a[j*rows+i] = x[i*cols+j]
			}
		}
	}
	ut, s, vt := make([]float64, n*m), make([]float64, n), make([]float64, n*n)
	if !optim.SVD(ut, s, vt, a, m, n) {
		panic("models: OptimalLoss: SVD failed (NaN or infinite data)")
	}
	var tail float64
	for k, v := range s {
		if k >= d {
			tail += float64(v * v)
		}
	}
	return float64(T) * 0.5 * tail
}
