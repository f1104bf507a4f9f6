package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// narrow rounds x to float32.
func narrow(x []float64) []float32 {
	n := make([]float32, len(x))
	for i, v := range x {
		n[i] = float32(v)
	}
	return n
}

// sparseModels32 are the three likelihoods (logistic with and without
// biases, gaussian, poisson) on the gradient tests' data at dimension d.
func sparseModels32(d int) []struct {
	name string
	m    *SparseMF
} {
	lb := newLogisticTest(11, 80, 9, 6, d, 3)
	lb.Bias = true
	return []struct {
		name string
		m    *SparseMF
	}{
		{"logistic", &newLogisticTest(11, 80, 9, 6, d, 3).SparseMF},
		{"logistic-bias", &lb.SparseMF},
		{"gaussian", &newGaussianTest(11, 80, 9, 6, d, 3).SparseMF},
		{"poisson", &newPoissonTest(11, 80, 9, 6, d, 3).SparseMF},
	}
}

// TestFloat32Gradient checks the float32 mode's local loss and gradient
// (full batch and minibatch, one block per bin and bins cut into grids, d
// = 3 and 6): against central differences of the float32 loss (steps of
// 2^-8 on float32 parameters, divided by the exact float64 distance of the
// two points; within 2e-4 of the largest gradient entry), and against the
// float64 mode at the same (float32) point: loss within 1e-12 relative (the
// predictors are the same exact products), gradient within 2e-6 of the
// largest entry (float32 rounding of each accumulated term).
func TestFloat32Gradient(t *testing.T) {
	for _, tc := range []struct {
		name      string
		batch     int
		chunkCost int
	}{{"full", 0, 0}, {"full/chunks", 0, 20}, {"minibatch/chunks", 25, 20}} {
		for _, d := range []int{3, 6} {
			for _, sm := range sparseModels32(d) {
				t.Run(fmt.Sprintf("%s/%s/d=%d", sm.name, tc.name, d), func(t *testing.T) {
					m := sm.m
					m.MinibatchSize, m.chunkCost = tc.batch, tc.chunkCost
					x32 := narrow(randVec(rand.New(rand.NewPCG(1, 1)), m.NumParams(), 0.7))
					x64 := Widen(x32)
					g32 := make([]float32, len(x32))
					for i := range g32 {
						g32[i] = float32(math.NaN()) // LocalLoss32 overwrites it
					}
					g64 := make([]float64, len(x64))
					m.SetBatch(7)
					l32 := m.LocalLoss32(g32, x32)
					l64 := m.BatchLoss(g64, x64, 7)
					var gmax float64
					for _, v := range g64 {
						gmax = max(gmax, math.Abs(v))
					}
					if math.Abs(l32-l64) > 1e-12*math.Abs(l64) {
						t.Errorf("loss %v, float64 mode %v", l32, l64)
					}
					for i := range g32 {
						if e := math.Abs(float64(g32[i]) - g64[i]); !(e <= 2e-6*gmax) {
							t.Fatalf("grad[%d] = %v, float64 mode %v", i, g32[i], g64[i])
						}
					}
					const h = 1.0 / 256
					scratch := make([]float32, len(x32))
					for i := range x32 {
						xp, xm := slices.Clone(x32), slices.Clone(x32)
						xp[i] += h
						xm[i] -= h
						m.SetBatch(7)
						lp := m.LocalLoss32(scratch, xp)
						m.SetBatch(7)
						lm := m.LocalLoss32(scratch, xm)
						fd := (lp - lm) / (float64(xp[i]) - float64(xm[i]))
						if e := math.Abs(fd - float64(g32[i])); !(e <= 2e-4*gmax) {
							t.Errorf("grad[%d] = %v, central difference %v", i, g32[i], fd)
						}
					}
				})
			}
		}
	}
}
