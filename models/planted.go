package models

import (
	"fmt"
	"math"

	"goldstone/optim"
)

// Planted compares learned embeddings with planted (true) ones.
type Planted struct {
	// R is the d x d orthogonal map (reflections allowed, row-major)
	// minimising ||R Z_learned - Z_true||_F over all time steps and columns
	// at once.
	R []float64
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
	m := make([]float64, d*d) // sum over vectors of z_true z_learned^T
	pairs := 0
	for c := 0; c < b.T*b.N; c++ {
		if !kept(c) {
			continue
		}
		pairs++
		a, t := zl[c*d:(c+1)*d], zt[c*d:(c+1)*d]
		for i, ti := range t {
			row := m[i*d : (i+1)*d]
			for j, aj := range a {
				row[j] += float64(ti * aj)
			}
		}
	}
	if pairs == 0 {
		r := make([]float64, d*d)
		for i := range d {
			r[i*d+i] = 1
		}
		return Planted{R: r, RelErr: math.NaN(), MeanCos: math.NaN()}
	}
	ut, s, vt := make([]float64, d*d), make([]float64, d), make([]float64, d*d)
	if !optim.SVD(ut, s, vt, m, d, d) {
		panic("models: PlantedDistance: SVD failed (NaN or infinite embeddings)")
	}
	r := make([]float64, d*d) // U V^T = sum_k u_k v_k^T
	for k := range d {
		uk, vk := ut[k*d:(k+1)*d], vt[k*d:(k+1)*d]
		for i, ui := range uk {
			row := r[i*d : (i+1)*d]
			for j, vj := range vk {
				row[j] += float64(ui * vj)
			}
		}
	}

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
				s += float64(r[i*d+j] * aj)
			}
			ra[i] = s
			e := s - t[i]
			errSq += float64(e * e)
			trueSq += float64(t[i] * t[i])
			dot += float64(s * t[i])
			na += float64(s * s)
			nt += float64(t[i] * t[i])
		}
		if na > 0 && nt > 0 {
			cosSum += dot / math.Sqrt(na*nt)
			nCos++
		}
	}
	return Planted{R: r, RelErr: math.Sqrt(errSq / trueSq), MeanCos: cosSum / float64(nCos), Pairs: pairs}
}
