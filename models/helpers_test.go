package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"goldstone/internal/fdcheck"
	"goldstone/optim"

	"gonum.org/v1/gonum/mat"
)

func randVec(rng *rand.Rand, n int, std float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = std * rng.NormFloat64()
	}
	return x
}

// checkGrad compares the gradient written by f with central differences of
// f at x, coordinate by coordinate. grad is filled with NaN first to check
// that f overwrites it.
func checkGrad(t *testing.T, f func(grad, x []float64) float64, x []float64, tol float64) {
	t.Helper()
	grad, loss := fdcheck.Overwrites(t, f, x)
	fdcheck.Check(t, "gradient", loss, x, grad, nil, 1e-6, tol)
}

// withPsi adds psi and its gradient over g to a local objective.
func withPsi(f func(grad, x []float64) float64, b optim.Blocks, g *optim.Graph) func(grad, x []float64) float64 {
	return func(grad, x []float64) float64 {
		return f(grad, x) + optim.AddPsiGrad(grad, x, b, g)
	}
}

// randOrthogonal returns a random d x d orthogonal matrix (row-major).
func randOrthogonal(rng *rand.Rand, d int) []float64 {
	a := mat.NewDense(d, d, randVec(rng, d*d, 1))
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	return append([]float64(nil), q.RawMatrix().Data...)
}

// rotateBlocks returns a copy of x with every column of Z_t mapped by q[t]
// (d x d row-major).
func rotateBlocks(x []float64, b optim.Blocks, q [][]float64) []float64 {
	y := append([]float64(nil), x...)
	d := b.D
	for t := 0; t < b.T; t++ {
		zx, zy := b.Block(x, t), b.Block(y, t)
		for c := 0; c < b.N; c++ {
			for i := 0; i < d; i++ {
				var s float64
				for j := 0; j < d; j++ {
					s += q[t][i*d+j] * zx[c*d+j]
				}
				zy[c*d+i] = s
			}
		}
	}
	return y
}

// synthRatings draws n ratings with Zipf-distributed users and items,
// uniform bins and P(x=+1) = 0.55.
func synthRatings(seed uint64, n, users, items, bins int) *Ratings {
	rng := rand.New(rand.NewPCG(seed, 7))
	zu := rand.NewZipf(rng, 1.2, 8, uint64(users-1))
	zi := rand.NewZipf(rng, 1.1, 4, uint64(items-1))
	r := &Ratings{
		T: make([]int32, n), User: make([]int32, n), Item: make([]int32, n), X: make([]int8, n),
	}
	for k := 0; k < n; k++ {
		r.T[k] = int32(rng.IntN(bins))
		r.User[k] = int32(zu.Uint64())
		r.Item[k] = int32(zi.Uint64())
		r.X[k] = -1
		if rng.Float64() < 0.55 {
			r.X[k] = 1
		}
	}
	return r
}

func sameBits(t *testing.T, name string, a, b []float64) {
	t.Helper()
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("%s[%d]: %v != %v", name, i, a[i], b[i])
		}
	}
}

// sparseSpec is the spec of the likelihoods' test models: chain weight
// 1.5, Gamma 0.5, minibatches seeded by seed.
func sparseSpec(train *Ratings, seed uint64, users, items, d, T int) RatingsSpec {
	return RatingsSpec{Train: train, Users: users, Items: items, D: d, T: T, Lambda: 1.5, Gamma: 0.5, Seed: seed}
}

// checkSparseGradient checks the gradient of BatchLoss (the embeddings and
// the arrays after them) of the models build makes at dimension d, with 9
// users, 6 items and 3 bins, against finite differences: full batch and
// minibatch, one block per bin and bins cut into grids, with and without
// the coupling, at d = 3 and 6 (FMA kernels: tail only; four lanes and
// tail). arrays is the number of parameters after the blocks.
func checkSparseGradient(t *testing.T, build func(d int) *SparseMF, arrays int) {
	for _, tc := range []struct {
		name      string
		batch     int
		gamma     float64
		psi       bool
		chunkCost int
	}{
		{"full", 0, 0.5, false, 0},
		{"full/no-gamma/chunks", 0, 0, false, 20},
		{"full+psi/chunks", 0, 0.5, true, 20},
		{"minibatch", 25, 0.5, false, 0},
		{"minibatch+psi/chunks", 25, 0.5, true, 20},
	} {
		for _, d := range []int{3, 6} {
			t.Run(fmt.Sprintf("%s/d=%d", tc.name, d), func(t *testing.T) {
				m := build(d)
				m.Gamma, m.MinibatchSize, m.chunkCost = tc.gamma, tc.batch, tc.chunkCost
				x := randVec(rand.New(rand.NewPCG(1, 1)), m.NumParams(), 0.7)
				if want := 3*(9+6)*d + arrays; len(x) != want {
					t.Fatalf("NumParams %d, want %d", len(x), want)
				}
				f := func(grad, x []float64) float64 { return m.BatchLoss(grad, x, 7) }
				if tc.psi {
					f = withPsi(f, m.Blocks(), m.Graph())
				}
				checkGrad(t, f, x, 1e-6)
			})
		}
	}
}
