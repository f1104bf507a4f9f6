package optim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"goldstone/internal/bitscheck"
)

// detVec returns n values uniform in [-scale, scale): rand's Float64 is
// exact, unlike its NormFloat64, so the inputs are the same on every build.
func detVec(rng *rand.Rand, n int, scale float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = scale * (float64(2*rng.Float64()) - 1) // products rounded: test code is compiled with fusion too
	}
	return x
}

// bitsMF is mfProblem's loss with every product rounded (test code is
// compiled with fusion too), so that the driver runs of TestBits give the
// same bits on every build.
func bitsMF(p *mfProblem) func(grad, x []float64) float64 {
	return func(grad, x []float64) float64 {
		b := p.blocks()
		var loss float64
		d := p.d
		for t := 0; t < p.t; t++ {
			z, gz := b.Block(x, t), b.Block(grad, t)
			for i := 0; i < p.nu; i++ {
				u, gu := z[i*d:(i+1)*d], gz[i*d:(i+1)*d]
				for j := 0; j < p.ni; j++ {
					v, gv := z[(p.nu+j)*d:(p.nu+j+1)*d], gz[(p.nu+j)*d:(p.nu+j+1)*d]
					var s float64
					for k := range u {
						s += float64(u[k] * v[k])
					}
					r := s - p.x[t][i*p.ni+j]
					loss += float64(0.5 * r * r)
					for k := range u {
						gu[k] += float64(r * v[k])
						gv[k] += float64(r * u[k])
					}
				}
			}
		}
		return loss
	}
}

// TestBits records what optim computes, bit for bit, against
// testdata/optim.bits.json: the elementary functions and variates, the SVD,
// Cholesky, L^+, the products and gauge kernels (the assembly where the CPU
// has it, the Go twins under -tags purego and elsewhere) and short Driver
// runs of every method with every gauge on a matrix factorisation, at d = 3
// and d = 10, on 2 workers. .ci/run runs it under every build.
func TestBits(t *testing.T) {
	var v bitscheck.Values
	rng := rand.New(rand.NewPCG(61, 1))
	for _, x := range detVec(rng, 2000, 60) {
		v.Add("Exp", Exp(x))
	}
	for _, x := range detVec(rng, 2000, 1) {
		v.Add("Log", Log(x*x*1e3), Log(1+float64(x*1e-3)))
		v.Add("Log1p", Log1p(x), Log1p(x*1e-9))
		v.Add("Pow", Pow(x*x*30, x*3), Pow(1+float64(x*x), 0.75))
	}
	r := rand.New(rand.NewPCG(62, 1))
	for range 5000 {
		v.Add("NormFloat64", NormFloat64(r))
		v.Add("ExpFloat64", ExpFloat64(r))
	}
	for _, sz := range []struct{ m, n int }{{3, 3}, {10, 10}, {30, 30}, {12, 5}} {
		a := detVec(rng, sz.m*sz.n, 1)
		ut, s, vt := make([]float64, sz.n*sz.m), make([]float64, sz.n), make([]float64, sz.n*sz.n)
		if !SVD(ut, s, vt, a, sz.m, sz.n) {
			t.Fatal("SVD failed")
		}
		g := fmt.Sprintf("SVD %dx%d", sz.m, sz.n)
		v.Add(g, s...)
		v.Add(g, ut...)
		v.Add(g, vt...)
	}
	cyc, _ := NewGraph(7, []Edge{{0, 1, 1}, {1, 2, 2}, {2, 3, 0.5}, {3, 4, 1}, {4, 0, 3}, {5, 6, 0.2}})
	v.Add("LaplacianPinv", Chain(30, 10).LaplacianPinv()...)
	v.Add("LaplacianPinv", cyc.LaplacianPinv()...)
	{
		n := 20
		b := detVec(rng, n*n, 1)
		a := make([]float64, n*n)
		gemm(false, true, n, n, n, 1, b, n, b, n, 0, a, n, make([]float64, 2*n*n))
		for i := range n {
			a[i*n+i] += 1
		}
		v.Add("gemm", a...)
		if !Cholesky(a, n) {
			t.Fatal("Cholesky failed")
		}
		x := detVec(rng, n, 1)
		CholeskySolve(a, n, x)
		v.Add("Cholesky", a...)
		v.Add("Cholesky", x...)
	}
	for _, d := range []int{3, 8, 30} {
		n := 150
		zs, zt, rr := detVec(rng, n*d, 1), detVec(rng, n*d, 1), detVec(rng, d*d, 0.3)
		m, buf := make([]float64, d*d), make([]float64, scratchLen(d))
		dist, ss, st := overlap(m, zs, zt, n, d, buf)
		g := fmt.Sprintf("overlap, rotate, expm d=%d", d)
		v.Add(g, m...)
		v.Add(g, dist, ss, st)
		rotate(zs, n, d, rr, buf)
		v.Add(g, zs...)
		skew(m, rr, d)
		e := make([]float64, d*d)
		expm(e, m, d, make([]float64, 3*d*d))
		v.Add(g, e...)
		x := make([]float64, 9*n)
		GemmNT(x, zs[:9*d], zt[:n*d], 9, n, d)
		v.Add("GemmNT, GemmAcc", x...)
		y := slices.Clone(x[:9*d])
		GemmAcc(y, d, zs, d, 1, rr, d, 9, d, d) // y += zs[:9] R
		v.Add("GemmNT, GemmAcc", y...)
		w := make([]float64, d*d)
		GemmAcc(w, d, zt, 1, d, zs, d, d, d, 9) // w += zt[:9]^T zs[:9]
		v.Add("GemmNT, GemmAcc", w...)
	}
	pool := testPool(2)
	for _, d := range []int{3, 10} {
		prob := newMFDet(rng, 5, 4, d, 6)
		b := prob.blocks()
		x0 := detVec(rng, b.Len(), 1)
		for _, m := range []struct {
			name string
			m    func() Method
		}{
			{"gd", func() Method { return &GD{Rate: Schedule{Rho0: 0.05, S0: 10, Kappa: 0.7}, Clip: 0.5} }},
			{"adagrad", func() Method { return &AdaGrad{Rate: Constant(0.2)} }},
			{"adam", func() Method { return &Adam{Rate: Schedule{Rho0: 0.02, S0: 10, Kappa: 1}} }},
		} {
			for _, gg := range []struct {
				name string
				g    func() Gauge
			}{
				{"none", func() Gauge { return nil }},
				{"goldstone", func() Gauge { return &Goldstone{K2: 4, Pool: pool} }},
				{"goldstone-linear", func() Gauge { return &Goldstone{Rotation: RotationLinear, Pool: pool} }},
				{"goldstone-so", func() Gauge { return &Goldstone{NoFlip: true, Pool: pool} }},
				{"procrustes", func() Gauge { return &Procrustes{Pool: pool} }},
				{"procrustes-so", func() Gauge { return &Procrustes{SO: true, Pool: pool} }},
			} {
				x := slices.Clone(x0)
				drv := &Driver{Method: m.m(), Gauge: gg.g(), K1: 5, Pool: pool}
				g := fmt.Sprintf("driver d=%d %s %s", d, m.name, gg.name)
				_, err := drv.Run(Problem{Local: bitsMF(prob), Blocks: b, Graph: Chain(b.T, 3), L2: 0.01}, x, 40, func(it *Iter) error {
					v.Add(g, it.Loss, it.Psi)
					if it.Gauge != nil {
						v.Add(g, it.Gauge.PsiBefore, it.Gauge.PsiAfter)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				v.Add(g, x...)
				gap, err := GaugeGap(x, b, Chain(b.T, 3))
				if err != nil {
					t.Fatal(err)
				}
				v.Add(g, gap)
			}
		}
	}
	bitscheck.Check(t, "optim", &v)
}

// newMFDet is newMF with data drawn by rand's exact Float64.
func newMFDet(rng *rand.Rand, nu, ni, d, T int) *mfProblem {
	p := &mfProblem{nu: nu, ni: ni, d: d, t: T, res: make([]float64, nu*ni)}
	for range T {
		p.x = append(p.x, detVec(rng, nu*ni, 1))
	}
	return p
}
