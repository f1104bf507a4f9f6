package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
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
		ubar[i] = rng.NormFloat64()
	}
	for i := range vbar {
		vbar[i] = rng.NormFloat64()
	}
	sd := math.Sqrt(noiseVar)
	x := make([]float64, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			var s float64
			for k := 0; k < rank; k++ {
				s += ubar[i*rank+k] * vbar[j*rank+k]
			}
			x[i*cols+j] = s + sd*rng.NormFloat64()
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
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(rows, cols, append([]float64(nil), x...)), mat.SVDNone) {
		panic("models: OptimalLoss: SVD failed")
	}
	var tail float64
	for k, s := range svd.Values(nil) {
		if k >= d {
			tail += s * s
		}
	}
	return float64(T) * 0.5 * tail
}
