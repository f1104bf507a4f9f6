package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestArtificial(t *testing.T) {
	a, b := Artificial(1, 10, 10, 3, 1e-3), Artificial(1, 10, 10, 3, 1e-3)
	sameBits(t, "X", a, b)
	if c := Artificial(2, 10, 10, 3, 1e-3); c[0] == a[0] {
		t.Errorf("seeds 1 and 2 give the same X[0]")
	}
	var svd mat.SVD
	svd.Factorize(mat.NewDense(10, 10, a), mat.SVDNone)
	s := svd.Values(nil)
	// Rank 3 plus noise of std ~0.03: sigma_4 is small, sigma_3 is not.
	if s[2] < 1 || s[3] > 0.3 {
		t.Errorf("singular values %v: want a clear gap after 3", s)
	}
	noiseless := Artificial(1, 10, 10, 3, 0)
	if l := OptimalLoss(noiseless, 10, 10, 3, 30); l > 1e-20 {
		t.Errorf("noiseless optimal loss %v", l)
	}
}

func TestOptimalLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const rows, cols, d, T = 6, 8, 2, 5
	x := randVec(rng, rows*cols, 1)
	// Best rank-d fit U_d S_d V_d^T by direct truncation; its loss per step.
	var svd mat.SVD
	svd.Factorize(mat.NewDense(rows, cols, append([]float64(nil), x...)), mat.SVDThin)
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	s := svd.Values(nil)
	var fit mat.Dense
	sd := mat.NewDiagDense(d, s[:d])
	var us mat.Dense
	us.Mul(u.Slice(0, rows, 0, d), sd)
	fit.Mul(&us, v.Slice(0, cols, 0, d).T())
	var r float64
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			e := x[i*cols+j] - fit.At(i, j)
			r += e * e
		}
	}
	want := T * 0.5 * r
	if got := OptimalLoss(x, rows, cols, d, T); math.Abs(got-want) > 1e-12*want {
		t.Errorf("OptimalLoss = %v, direct %v", got, want)
	}
	// And DenseMF at that fit (U = sqrt(S) U_d^T, V = sqrt(S) V_d^T at every step) attains it.
	m := &DenseMF{X: [][]float64{x}, Rows: rows, Cols: cols, D: d, T: T, Lambda: 10}
	z := make([]float64, m.NumParams())
	for t := 0; t < T; t++ {
		blk := m.Blocks().Block(z, t)
		for k := 0; k < d; k++ {
			for i := 0; i < rows; i++ {
				blk[i*d+k] = math.Sqrt(s[k]) * u.At(i, k)
			}
			for j := 0; j < cols; j++ {
				blk[(rows+j)*d+k] = math.Sqrt(s[k]) * v.At(j, k)
			}
		}
	}
	if got := m.LocalLoss(make([]float64, len(z)), z); math.Abs(got-want) > 1e-10*want {
		t.Errorf("DenseMF at the SVD fit: %v, want %v", got, want)
	}
}
