package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// checkSVD verifies a = U diag(s) V^T, the orthonormality of U's columns and
// V, and the descending order of s.
func checkSVD(t *testing.T, name string, a []float64, m, n int) (ut, s, vt []float64) {
	t.Helper()
	ut, s, vt = make([]float64, n*m), make([]float64, n), make([]float64, n*n)
	if !SVD(ut, s, vt, a, m, n) {
		t.Fatalf("%s: SVD failed", name)
	}
	scale := 1.0
	for _, v := range a {
		scale = max(scale, math.Abs(v))
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var r float64
			for k := 0; k < n; k++ {
				r += ut[k*m+i] * s[k] * vt[k*n+j]
			}
			if math.Abs(r-a[i*n+j]) > 1e-13*scale*float64(n) {
				t.Fatalf("%s: (U S V^T)[%d,%d] = %v, a %v", name, i, j, r, a[i*n+j])
			}
		}
	}
	for _, q := range []struct {
		rows []float64
		len  int
	}{{ut, m}, {vt, n}} {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var d float64
				for k := 0; k < q.len; k++ {
					d += q.rows[i*q.len+k] * q.rows[j*q.len+k]
				}
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(d-want) > 1e-13*float64(m) {
					t.Fatalf("%s: singular vectors %d, %d: dot %v, want %v", name, i, j, d, want)
				}
			}
		}
	}
	for k := 1; k < n; k++ {
		if s[k] > s[k-1] || s[k] < 0 {
			t.Fatalf("%s: singular values not descending and >= 0: %v", name, s)
		}
	}
	return ut, s, vt
}

// TestSVD: the one-sided Jacobi SVD reconstructs its matrix with orthonormal
// singular vectors, and its singular values agree with gonum's, on square,
// tall, rank-deficient, zero and badly scaled matrices; NaN fails.
func TestSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 1))
	for _, sz := range []struct{ m, n int }{{1, 1}, {3, 3}, {10, 10}, {30, 30}, {12, 5}, {100, 3}, {64, 64}} {
		a := randVec(rng, sz.m*sz.n, 1)
		_, s, _ := checkSVD(t, "random", a, sz.m, sz.n)
		var g mat.SVD
		if !g.Factorize(mat.NewDense(sz.m, sz.n, slices.Clone(a)), mat.SVDNone) {
			t.Fatal("gonum SVD failed")
		}
		for k, v := range g.Values(nil) {
			if math.Abs(v-s[k]) > 1e-13*s[0] {
				t.Fatalf("%dx%d: sigma_%d = %v, gonum %v", sz.m, sz.n, k, s[k], v)
			}
		}
	}
	// Rank 1 (a u v^T), zero, one zero column, and scales far from 1.
	d := 6
	u, v := randVec(rng, d, 1), randVec(rng, d, 1)
	r1 := make([]float64, d*d)
	for i := range d {
		for j := range d {
			r1[i*d+j] = u[i] * v[j]
		}
	}
	_, s, _ := checkSVD(t, "rank 1", r1, d, d)
	if s[1] > 1e-14*s[0] {
		t.Errorf("rank 1: sigma_2 = %v", s[1])
	}
	checkSVD(t, "zero", make([]float64, d*d), d, d)
	zc := randVec(rng, d*d, 1)
	for i := range d {
		zc[i*d+2] = 0
	}
	checkSVD(t, "zero column", zc, d, d)
	for _, sc := range []float64{1e-150, 1e150} {
		a := randVec(rng, d*d, sc)
		checkSVD(t, "scaled", a, d, d)
	}
	a := randVec(rng, 9, 1)
	a[4] = math.NaN()
	if SVD(make([]float64, 9), make([]float64, 3), make([]float64, 9), a, 3, 3) {
		t.Error("SVD of a matrix with a NaN succeeded")
	}
	a = randVec(rng, 900, 1)
	ut, s, vt := make([]float64, 900), make([]float64, 30), make([]float64, 900)
	if n := testing.AllocsPerRun(3, func() { SVD(ut, s, vt, a, 30, 30) }); n != 0 {
		t.Errorf("SVD allocates %v times", n)
	}
}

// TestCholesky: L L^T = A and the solve inverts A for random positive
// definite A; a matrix that is not positive definite is refused.
func TestCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(52, 1))
	for _, n := range []int{1, 2, 5, 40} {
		b := randVec(rng, n*n, 1)
		a := make([]float64, n*n)
		for i := range n {
			for j := range n {
				for k := range n {
					a[i*n+j] += b[i*n+k] * b[j*n+k]
				}
			}
			a[i*n+i] += 0.1
		}
		l := slices.Clone(a)
		if !Cholesky(l, n) {
			t.Fatalf("n=%d: Cholesky failed on a positive definite matrix", n)
		}
		for i := range n {
			for j := range n {
				var s float64
				for k := range n {
					s += l[i*n+k] * l[j*n+k]
				}
				if math.Abs(s-a[i*n+j]) > 1e-12*float64(n) {
					t.Fatalf("n=%d: (L L^T)[%d,%d] = %v, A %v", n, i, j, s, a[i*n+j])
				}
				if j > i && l[i*n+j] != 0 {
					t.Fatalf("n=%d: L[%d,%d] = %v above the diagonal", n, i, j, l[i*n+j])
				}
			}
		}
		x := randVec(rng, n, 1)
		rhs := make([]float64, n)
		for i := range n {
			for j := range n {
				rhs[i] += a[i*n+j] * x[j]
			}
		}
		CholeskySolve(l, n, rhs)
		for i := range x {
			if math.Abs(rhs[i]-x[i]) > 1e-8 {
				t.Fatalf("n=%d: solve: x[%d] = %v, want %v", n, i, rhs[i], x[i])
			}
		}
	}
	if Cholesky([]float64{1, 2, 2, 1}, 2) {
		t.Error("Cholesky of an indefinite matrix succeeded")
	}
	if Cholesky([]float64{math.NaN()}, 1) {
		t.Error("Cholesky of NaN succeeded")
	}
}

// TestSVDNotFinite: SVD reports failure, not a decomposition, for a matrix
// holding a NaN or an infinity or one whose squares overflow (what
// Procrustes meets on a diverged iterate), and decomposes one just below.
func TestSVDNotFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 1))
	d := 5
	a := randVec(rng, d*d, 1)
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e200} {
		b := slices.Clone(a)
		b[7] = bad
		if SVD(make([]float64, d*d), make([]float64, d), make([]float64, d*d), b, d, d) {
			t.Errorf("SVD of a matrix holding %v succeeded", bad)
		}
	}
	b := slices.Clone(a)
	for i := range b {
		b[i] *= 1e100
	}
	checkSVD(t, "scaled by 1e100", b, d, d)
}

// TestSVDGradedSingularValues: singular values that fall through the
// precision of the largest (the overlap of two embeddings whose unused
// dimensions the prior has shrunk to nearly zero) still give orthonormal
// singular vectors. The tail below the convergence threshold is not
// rotated; before the fix its columns were normalised as they stood, so U
// was not orthogonal and a Procrustes round that applied U V^T changed the
// loss and raised psi.
func TestSVDGradedSingularValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 2))
	for _, n := range []int{6, 30} {
		for _, c := range []struct {
			flat  bool
			floor float64
		}{{false, 1e-14}, {false, 1e-16}, {false, 1e-18}, {false, 1e-30},
			{true, 1e-13}, {true, 1e-14}, {true, 3e-15}, {true, 1e-15}, {true, 1e-17}} {
			flat, floor := c.flat, c.floor
			x, y := randOrth(rng, n, 1), randOrth(rng, n, 1)
			sig := make([]float64, n)
			for k := range n {
				switch {
				case !flat: // from 1 down to floor
					sig[k] = math.Pow(floor, float64(k)/float64(n-1))
				case k < 2*n/3: // two thirds at 1
					sig[k] = 1
				default: // and a tail between floor and 2 floor
					sig[k] = floor * (1 + float64(k-2*n/3)/float64(n/3))
				}
			}
			a := make([]float64, n*n)
			for i := range n {
				for j := range n {
					var v float64
					for k := range n {
						v += x[i*n+k] * sig[k] * y[j*n+k]
					}
					a[i*n+j] = v
				}
			}
			checkSVD(t, fmt.Sprintf("n=%d flat=%v floor=%g", n, flat, floor), a, n, n)
		}
	}
}
