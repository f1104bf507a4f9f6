package optim

import (
	"math"
	"testing"
)

// TestCompleteBasisNearlyFull completes a basis whose missing direction is
// spread over every coordinate: with m - 1 orthonormal rows orthogonal to
// (1, ..., 1)/sqrt(m), every standard basis vector keeps only 1/m of its
// norm squared (below the 1/4 of the first choice for m > 4), and the
// completion must still be that missing direction, up to sign.
func TestCompleteBasisNearlyFull(t *testing.T) {
	for _, m := range []int{2, 5, 16, 100} {
		u := make([]float64, m*m)
		// Rows 0..m-2: an orthonormal basis of the complement of 1/sqrt(m)
		// (Helmert contrasts).
		for k := 0; k < m-1; k++ {
			row := u[k*m : (k+1)*m]
			n := float64(k + 1)
			c := 1 / math.Sqrt(n*(n+1))
			for i := 0; i <= k; i++ {
				row[i] = c
			}
			row[k+1] = -n * c
		}
		completeBasis(u, m-1, m)
		last := u[(m-1)*m:]
		want := 1 / math.Sqrt(float64(m))
		for i, x := range last {
			if math.Abs(math.Abs(x)-want) > 1e-12 {
				t.Fatalf("m=%d: entry %d of the completed row is %g, want +-%g", m, i, x, want)
			}
		}
	}
}

// TestJacobiSVDRankDeficientWide is the case that panicked in a DWE trial:
// a d x d matrix of rank 1 with a direction spread over every coordinate,
// so that completing U needs d - 1 new rows.
func TestJacobiSVDRankDeficientWide(t *testing.T) {
	const d = 64
	a := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			a[i*d+j] = 1 // rank 1: ones
		}
	}
	s := make([]float64, d)
	u := make([]float64, d*d)
	vt := make([]float64, d*d)
	if !SVD(u, s, vt, a, d, d) {
		t.Fatal("SVD failed on a finite rank-1 matrix")
	}
	if math.Abs(s[0]-d) > 1e-9 {
		t.Fatalf("largest singular value %g, want %d", s[0], d)
	}
	for i := 1; i < d; i++ {
		if math.Abs(s[i]) > 1e-9 {
			t.Fatalf("singular value %d is %g, want 0", i, s[i])
		}
	}
}
