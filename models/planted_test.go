package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"goldstone/optim"
)

func TestPlantedDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	b := optim.Blocks{T: 4, N: 7, D: 3}
	truth := randVec(rng, b.Len(), 1)
	for _, reflect := range []bool{false, true} {
		q := randOrthogonal(rng, b.D)
		if reflect { // make det(q) = -1 by flipping a row
			for j := 0; j < b.D; j++ {
				q[j] = -q[j]
			}
		}
		qs := make([][]float64, b.T)
		for i := range qs {
			qs[i] = q
		}
		// learned = Q^T truth, so R = Q recovers truth exactly.
		qt := make([]float64, len(q))
		for i := 0; i < b.D; i++ {
			for j := 0; j < b.D; j++ {
				qt[i*b.D+j] = q[j*b.D+i]
			}
		}
		for i := range qs {
			qs[i] = qt
		}
		learned := rotateBlocks(truth, b, qs)
		p := PlantedDistance(learned, truth, b)
		if p.RelErr > 1e-12 || math.Abs(p.MeanCos-1) > 1e-12 {
			t.Errorf("reflect=%v: RelErr %v MeanCos %v, want 0 and 1", reflect, p.RelErr, p.MeanCos)
		}
		for i := 0; i < b.D; i++ {
			for j := 0; j < b.D; j++ {
				if math.Abs(p.R[i*b.D+j]-q[i*b.D+j]) > 1e-12 {
					t.Fatalf("reflect=%v: R[%d,%d] = %v, want %v", reflect, i, j, p.R[i*b.D+j], q[i*b.D+j])
				}
			}
		}
	}

	// Unrelated vectors are far apart; scaling the learned vectors changes RelErr but not MeanCos.
	other := randVec(rng, b.Len(), 1)
	if p := PlantedDistance(other, truth, b); p.RelErr < 0.5 || p.MeanCos > 0.5 {
		t.Errorf("unrelated: RelErr %v MeanCos %v", p.RelErr, p.MeanCos)
	}
	half := append([]float64(nil), truth...)
	for i := range half {
		half[i] *= 0.5
	}
	if p := PlantedDistance(half, truth, b); math.Abs(p.RelErr-0.5) > 1e-12 || math.Abs(p.MeanCos-1) > 1e-12 {
		t.Errorf("half scale: RelErr %v MeanCos %v, want 0.5 and 1", p.RelErr, p.MeanCos)
	}
}

// TestPlantedDistanceOf: restricted to the kept vectors, the alignment is
// fitted to them alone, so garbage elsewhere does not spoil it.
func TestPlantedDistanceOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	b := optim.Blocks{T: 5, N: 6, D: 3}
	truth := randVec(rng, b.Len(), 1)
	q := randOrthogonal(rng, b.D)
	qs := make([][]float64, b.T)
	for i := range qs {
		qs[i] = q
	}
	learned := rotateBlocks(truth, b, qs)
	keep := make([]bool, b.T*b.N)
	garbage := randVec(rng, b.Len(), 3)
	nKeep := 0
	for c := range keep {
		keep[c] = c%3 != 1
		if keep[c] {
			nKeep++
			continue
		}
		copy(learned[c*b.D:(c+1)*b.D], garbage[c*b.D:(c+1)*b.D])
	}
	p := PlantedDistanceOf(learned, truth, b, keep)
	if p.RelErr > 1e-12 || math.Abs(p.MeanCos-1) > 1e-12 || p.Pairs != nKeep {
		t.Errorf("kept vectors: RelErr %v MeanCos %v Pairs %d, want 0, 1, %d", p.RelErr, p.MeanCos, p.Pairs, nKeep)
	}
	all := PlantedDistance(learned, truth, b)
	if all.MeanCos > 0.95 || all.Pairs != b.T*b.N {
		t.Errorf("all vectors: MeanCos %v Pairs %d, want < 0.95 and %d", all.MeanCos, all.Pairs, b.T*b.N)
	}
	if p := PlantedDistanceOf(learned, truth, b, make([]bool, b.T*b.N)); !math.IsNaN(p.MeanCos) || !math.IsNaN(p.RelErr) || p.Pairs != 0 {
		t.Errorf("nothing kept: %+v, want NaN, NaN, 0 pairs", p)
	}
}
