package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestLaplacianPinv(t *testing.T) {
	cycle, _ := NewGraph(5, []Edge{{0, 1, 1}, {1, 2, 2}, {2, 3, 0.5}, {3, 4, 1}, {4, 0, 3}})
	split, _ := NewGraph(6, []Edge{{0, 1, 1}, {1, 2, 2}, {3, 4, 1}, {4, 5, 0.1}})
	for _, tc := range []struct {
		name string
		g    *Graph
	}{{"chain", Chain(30, 10)}, {"weighted", ChainWeights([]float64{1, 0.1, 5, 2})}, {"cycle", cycle}, {"two components", split}, {"single", Chain(1, 1)}} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.g.N
			l, p := mat.NewDense(n, n, tc.g.Laplacian()), mat.NewDense(n, n, tc.g.LaplacianPinv())
			var lp, lpl, plp mat.Dense
			lp.Mul(l, p)
			lpl.Mul(&lp, l)
			plp.Mul(p, &lp)
			if !mat.EqualApprox(&lpl, l, 1e-9) {
				t.Errorf("L L+ L != L")
			}
			if !mat.EqualApprox(&plp, p, 1e-9) {
				t.Errorf("L+ L L+ != L+")
			}
			if !mat.Equal(p, p.T()) {
				t.Errorf("L+ not symmetric")
			}
			// The eigendecomposition it replaced (gonum's) agrees to rounding.
			var eig mat.EigenSym
			if !eig.Factorize(mat.NewSymDense(n, tc.g.Laplacian()), true) {
				t.Fatal("gonum EigenSym failed")
			}
			vals := eig.Values(nil)
			var vecs, w, want mat.Dense
			eig.VectorsTo(&vecs)
			w.CloneFrom(&vecs)
			for k, lam := range vals {
				inv := 0.0
				if math.Abs(lam) > 1e-10*vals[len(vals)-1] {
					inv = 1 / lam
				}
				for i := 0; i < n; i++ {
					w.Set(i, k, w.At(i, k)*inv)
				}
			}
			want.Mul(&w, vecs.T())
			if !mat.EqualApprox(&want, p, 1e-11*max(1, mat.Norm(&want, math.Inf(1)))) {
				t.Errorf("L+ differs from the eigendecomposition's:\n%v\n%v", mat.Formatted(&want), mat.Formatted(p))
			}
		})
	}
}

func TestAddPsiGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	b := Blocks{Offset: 3, T: 4, N: 3, D: 2}
	g, _ := NewGraph(4, []Edge{{0, 1, 1.5}, {1, 2, 0.3}, {2, 3, 2}, {3, 0, 1}})
	x := randVec(rng, b.Offset+b.Len()+2, 1)
	grad := randVec(rng, len(x), 1)
	base := append([]float64(nil), grad...)
	psi := AddPsiGrad(grad, x, b, g)
	if d := relErr(psi, Psi(x, b, g)); d > 1e-14 {
		t.Fatalf("AddPsiGrad returned %v, Psi %v", psi, Psi(x, b, g))
	}
	for i := range grad {
		grad[i] -= base[i]
	}
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	checkGrad(t, "psi", func(x []float64) float64 { return Psi(x, b, g) }, x, grad, idx, 1e-7)
}

func TestMFGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	p := newMF(rng, 3, 4, 2, 3)
	x := randVec(rng, p.blocks().Len(), 1)
	grad := make([]float64, len(x))
	p.local(grad, x)
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	scratch := make([]float64, len(x))
	checkGrad(t, "mf", func(x []float64) float64 { return p.local(scratch, x) }, x, grad, idx, 1e-6)
}
