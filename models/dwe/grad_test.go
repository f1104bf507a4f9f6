package dwe

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"goldstone/internal/fdcheck"
)

// smallCounts returns random sparse counts with V words over T steps with
// uneven time gaps.
func smallCounts(t *testing.T, seed uint64, v, steps, nnz int) *Counts {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	c := RandomCounts(rng, v, steps, nnz)
	for k := range c.Times {
		c.Times[k] = float64(k) + 0.3*float64(k*k%3)
	}
	for k := range c.Steps {
		// Scale counts down so the loss is O(V^2), not dominated by a few pairs.
		for e := range c.Steps[k].Pos {
			c.Steps[k].Pos[e] *= 0.1
		}
		c.Steps[k].Negatives(v, 2, 0.75)
		for i := range c.Steps[k].NegA {
			c.Steps[k].NegA[i] *= 0.3
		}
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// checkGrad compares grad of f at x against central differences on the
// coordinates idx.
func checkGrad(t *testing.T, name string, f func(grad, x []float64) float64, x []float64, idx []int, tol float64) {
	t.Helper()
	grad := make([]float64, len(x))
	f(grad, x)
	scratch := make([]float64, len(x))
	worst := fdcheck.Check(t, name, func(x []float64) float64 { return f(scratch, x) }, x, grad, idx, 1e-5, tol)
	t.Logf("%s: worst rel err %.2g over %d coordinates", name, worst, len(idx))
}

// pickIdx returns k coordinates in [lo,hi) (all if hi-lo <= k).
func pickIdx(rng *rand.Rand, lo, hi, k int) []int {
	var idx []int
	if hi-lo <= k {
		for i := lo; i < hi; i++ {
			idx = append(idx, i)
		}
		return idx
	}
	for range k {
		idx = append(idx, lo+rng.IntN(hi-lo))
	}
	return idx
}

func TestMAPGradient(t *testing.T) {
	c := smallCounts(t, 1, 37, 3, 6) // V not a multiple of the tile
	for _, tc := range []struct {
		name   string
		tile   int
		nw, nc int
	}{
		{"exact", 0, 0, 0},
		{"exact-tile5", 5, 0, 0},
		{"minibatch", 4, 11, 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMAP(c, Config{Dim: 4, Tile: tc.tile, InitStd: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(2, 2))
			x := make([]float64, m.NumParams())
			m.Init(x, rng)
			m.Resample(rng, tc.nw, tc.nc)
			checkGrad(t, tc.name, m.LocalLoss, x, pickIdx(rng, 0, len(x), 300), 1e-6)
		})
	}
}

func TestVariationalGradient(t *testing.T) {
	c := smallCounts(t, 3, 13, 4, 5)
	for _, tc := range []struct {
		name   string
		nw, nc int
	}{
		{"full", 0, 0},
		{"minibatch", 5, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewVariational(c, Config{Dim: 3, Tile: 4, InitStd: 0.5, InitWidth: 0.3, Diffusion: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(4, 4))
			x := make([]float64, m.NumParams())
			m.Init(x, rng)
			n := m.t * m.s
			// Move rho and omega away from the symmetric initial point.
			for i := n; i < len(x); i++ {
				x[i] += 0.3 * rng.NormFloat64()
			}
			m.Resample(rng, tc.nw, tc.nc) // fixed eps: the objective is deterministic
			for _, blk := range []struct {
				name   string
				lo, hi int
			}{{"mu", 0, n}, {"rho", n, 2 * n}, {"omega", 2 * n, len(x)}} {
				checkGrad(t, tc.name+"/"+blk.name, m.LocalLoss, x, pickIdx(rng, blk.lo, blk.hi, 150), 1e-6)
			}
		})
	}
}

// TestBidiagonal checks the sample mu + B^{-1} eps and the analytic prior
// and entropy terms against dense gonum computations.
func TestBidiagonal(t *testing.T) {
	const v, d, T = 3, 2, 5
	c := &Counts{V: v, Times: []float64{0, 1, 1.5, 3, 3.2}, Steps: make([]StepCounts, T)}
	for k := range c.Steps {
		c.Steps[k] = StepCounts{NegA: make([]float64, v), NegB: make([]float64, v)} // no data: likelihood 0
	}
	cfg := Config{Dim: d, Sigma0Sq: 0.7, Diffusion: 0.3}
	m, err := NewVariational(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	x := make([]float64, m.NumParams())
	for i := range x {
		x[i] = 0.5 * rng.NormFloat64()
	}
	eps := make([]float64, T*m.s)
	for i := range eps {
		eps[i] = rng.NormFloat64()
	}
	m.SetNoise(eps)
	smp := m.Sample(nil, x)
	grad := make([]float64, len(x))
	got := m.LocalLoss(grad, x)

	n := T * m.s
	w := make([]float64, T-1)
	for k := range w {
		w[k] = 1 / (cfg.Diffusion * (c.Times[k+1] - c.Times[k]))
	}
	var want float64
	for q := 0; q < m.s; q++ {
		b := mat.NewDense(T, T, nil)
		e := mat.NewVecDense(T, nil)
		mu := make([]float64, T)
		for k := 0; k < T; k++ {
			b.Set(k, k, math.Exp(x[n+k*m.s+q]))
			if k < T-1 {
				b.Set(k, k+1, x[2*n+k*m.s+q])
			}
			e.SetVec(k, eps[k*m.s+q])
			mu[k] = x[k*m.s+q]
		}
		var y mat.VecDense
		if err := y.SolveVec(b, e); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < T; k++ {
			if g := smp[k*m.s+q]; math.Abs(g-(mu[k]+y.AtVec(k))) > 1e-12 {
				t.Fatalf("sample (t=%d,q=%d) = %v, dense solve %v", k, q, g, mu[k]+y.AtVec(k))
			}
		}
		var prec mat.Dense
		prec.Mul(b.T(), b)
		var sigma mat.Dense
		if err := sigma.Inverse(&prec); err != nil {
			t.Fatal(err)
		}
		// -E log prior without psi(mu), plus -entropy (= sum log nu).
		for k := 0; k < T; k++ {
			want += 0.5 / cfg.Sigma0Sq * (mu[k]*mu[k] + sigma.At(k, k))
			want += math.Log(b.At(k, k))
			if k < T-1 {
				want += 0.5 * w[k] * (sigma.At(k, k) + sigma.At(k+1, k+1) - 2*sigma.At(k, k+1))
			}
		}
	}
	if math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Fatalf("LocalLoss without data = %.12g, dense = %.12g", got, want)
	}
}

// TestNegativeIdentity evaluates the likelihood with explicitly
// materialised n- (and in the rewritten form -[(n+ + n-) softplus(-x) + n- x])
// and compares with the tiled rank-one kernel.
func TestNegativeIdentity(t *testing.T) {
	c := smallCounts(t, 7, 29, 2, 4)
	const d = 5
	rng := rand.New(rand.NewPCG(8, 8))
	m, err := NewMAP(c, Config{Dim: d, InitStd: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, m.NumParams())
	m.Init(x, rng)
	v := c.V
	var direct, rewritten, tiled float64
	for k := range c.Steps {
		sc := &c.Steps[k]
		zt := x[k*2*v*d : (k+1)*2*v*d]
		u, cv := zt[:v*d], zt[v*d:]
		pos := make([]float64, v*v)
		for e := range sc.Pos {
			pos[int(sc.I[e])*v+int(sc.J[e])] = sc.Pos[e]
		}
		for i := 0; i < v; i++ {
			for j := 0; j < v; j++ {
				var xv float64
				for q := 0; q < d; q++ {
					xv += u[i*d+q] * cv[j*d+q]
				}
				neg := sc.NegA[i] * sc.NegB[j]
				p := pos[i*v+j]
				direct -= p*math.Log(1/(1+math.Exp(-xv))) + neg*math.Log(1/(1+math.Exp(xv)))
				rewritten += (p+neg)*math.Log1p(math.Exp(-xv)) + neg*xv
			}
		}
		tiled += StepNegLogLik(u, cv, sc, v, d, nil)
	}
	full := m.NegLogLik(x)
	for _, got := range []struct {
		name string
		v    float64
	}{{"rewritten", rewritten}, {"StepNegLogLik", tiled}, {"MAP.NegLogLik", full}} {
		if math.Abs(got.v-direct) > 1e-10*math.Abs(direct) {
			t.Errorf("%s = %.14g, explicit n- = %.14g", got.name, got.v, direct)
		}
	}
}

// TestMinibatchUnbiased averages the minibatch estimate over every 1x1 ...
// batch of a tiny problem exactly: the mean over all (word, context) pairs of
// single-pair estimates equals the full loss.
func TestMinibatchUnbiased(t *testing.T) {
	c := smallCounts(t, 9, 6, 2, 3)
	m, err := NewMAP(c, Config{Dim: 2, InitStd: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(9, 9)))
	g := make([]float64, len(x))
	full := m.LocalLoss(g, x)
	gmean := make([]float64, len(x))
	gb := make([]float64, len(x))
	var mean float64
	v := c.V
	for i := 0; i < v; i++ {
		for j := 0; j < v; j++ {
			m.SetBatch([]int{i}, []int{j})
			mean += m.LocalLoss(gb, x) / float64(v*v)
			for k := range gb {
				gmean[k] += gb[k] / float64(v*v)
			}
		}
	}
	if math.Abs(mean-full) > 1e-9*math.Abs(full) {
		t.Errorf("mean of minibatch losses %.12g, full %.12g", mean, full)
	}
	for k := range g {
		if math.Abs(gmean[k]-g[k]) > 1e-9*math.Max(1, math.Abs(g[k])) {
			t.Fatalf("grad[%d]: mean of minibatch %.12g, full %.12g", k, gmean[k], g[k])
		}
	}
}
