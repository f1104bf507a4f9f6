package models

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"goldstone/optim"
)

// Planted compares learned embeddings with planted (true) ones.
type Planted struct {
	// R is the d x d orthogonal map (reflections allowed) minimising
	// ||R Z_learned - Z_true||_F over all time steps and columns at once.
	R *mat.Dense
	// RelErr is ||R Z_learned - Z_true||_F / ||Z_true||_F.
	RelErr float64
	// MeanCos is the mean over vectors (t, i) of the cosine between R z_learned
	// and z_true; pairs in which either vector is zero are left out (NaN if all are).
	MeanCos float64
	// Pairs is the number of vectors (t, i) compared (before zero vectors are
	// left out of MeanCos).
	Pairs int
}

// PlantedDistance finds the best single global orthogonal map R aligning the
// learned blocks to the true ones (orthogonal Procrustes: with the SVD
// sum_t Z_true,t Z_learned,t^T = U S V^T, R = U V^T) and reports the remaining
// relative error and mean cosine. Both vectors are laid out as b.
func PlantedDistance(learned, truth []float64, b optim.Blocks) Planted {
	return PlantedDistanceOf(learned, truth, b, nil)
}

// PlantedDistanceOf is PlantedDistance restricted to the vectors c = t*b.N + i
// with keep[c] true (nil keeps every vector): the alignment R is fitted to
// those vectors alone, and RelErr, MeanCos and Pairs are over them. With no
// vector kept, RelErr and MeanCos are NaN and R is the identity.
func PlantedDistanceOf(learned, truth []float64, b optim.Blocks, keep []bool) Planted {
	if len(learned) < b.Offset+b.Len() || len(truth) < b.Offset+b.Len() || b.D <= 0 || (keep != nil && len(keep) != b.T*b.N) {
		panic(fmt.Sprintf("models: PlantedDistance: len(learned)=%d len(truth)=%d len(keep)=%d blocks=%+v", len(learned), len(truth), len(keep), b))
	}
	kept := func(c int) bool { return keep == nil || keep[c] }
	d := b.D
	zl := learned[b.Offset : b.Offset+b.Len()]
	zt := truth[b.Offset : b.Offset+b.Len()]
	m := mat.NewDense(d, d, nil) // sum over vectors of z_true z_learned^T
	raw := m.RawMatrix()
	pairs := 0
	for c := 0; c < b.T*b.N; c++ {
		if !kept(c) {
			continue
		}
		pairs++
		a, t := zl[c*d:(c+1)*d], zt[c*d:(c+1)*d]
		for i, ti := range t {
			row := raw.Data[i*raw.Stride : i*raw.Stride+d]
			for j, aj := range a {
				row[j] += ti * aj
			}
		}
	}
	if pairs == 0 {
		r := mat.NewDense(d, d, nil)
		for i := range d {
			r.Set(i, i, 1)
		}
		return Planted{R: r, RelErr: math.NaN(), MeanCos: math.NaN()}
	}
	var svd mat.SVD
	if !svd.Factorize(m, mat.SVDFull) {
		panic("models: PlantedDistance: SVD failed")
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	r := mat.NewDense(d, d, nil)
	r.Mul(&u, v.T())
	rr := r.RawMatrix()

	ra := make([]float64, d)
	var errSq, trueSq, cosSum float64
	var nCos int
	for c := 0; c < b.T*b.N; c++ {
		if !kept(c) {
			continue
		}
		a, t := zl[c*d:(c+1)*d], zt[c*d:(c+1)*d]
		var dot, na, nt float64
		for i := range ra {
			var s float64
			for j, aj := range a {
				s += rr.Data[i*rr.Stride+j] * aj
			}
			ra[i] = s
			e := s - t[i]
			errSq += e * e
			trueSq += t[i] * t[i]
			dot += s * t[i]
			na += s * s
			nt += t[i] * t[i]
		}
		if na > 0 && nt > 0 {
			cosSum += dot / math.Sqrt(na*nt)
			nCos++
		}
	}
	return Planted{R: r, RelErr: math.Sqrt(errSq / trueSq), MeanCos: cosSum / float64(nCos), Pairs: pairs}
}
