package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"goldstone/internal/bitscheck"
	"goldstone/optim"
)

// narrow rounds x to float32.
func narrow(x []float64) []float32 {
	n := make([]float32, len(x))
	for i, v := range x {
		n[i] = float32(v)
	}
	return n
}

// sparseModels32 are the three likelihoods (logistic with and without
// biases, gaussian, poisson) on the gradient tests' data at dimension d.
func sparseModels32(d int) []struct {
	name string
	m    *SparseMF
} {
	lb := newLogisticTest(11, 80, 9, 6, d, 3)
	lb.Bias = true
	return []struct {
		name string
		m    *SparseMF
	}{
		{"logistic", &newLogisticTest(11, 80, 9, 6, d, 3).SparseMF},
		{"logistic-bias", &lb.SparseMF},
		{"gaussian", &newGaussianTest(11, 80, 9, 6, d, 3).SparseMF},
		{"poisson", &newPoissonTest(11, 80, 9, 6, d, 3).SparseMF},
	}
}

// TestFloat32Gradient checks the float32 mode's local loss and gradient
// (full batch and minibatch, one block per bin and bins cut into grids, d
// = 3 and 6): against central differences of the float32 loss (steps of
// 2^-8 on float32 parameters, divided by the exact float64 distance of the
// two points; within 2e-4 of the largest gradient entry), and against the
// float64 mode at the same (float32) point: loss within 1e-12 relative (the
// predictors are the same exact products), gradient within 2e-6 of the
// largest entry (float32 rounding of each accumulated term).
func TestFloat32Gradient(t *testing.T) {
	for _, tc := range []struct {
		name      string
		batch     int
		chunkCost int
	}{{"full", 0, 0}, {"full/chunks", 0, 20}, {"minibatch/chunks", 25, 20}} {
		for _, d := range []int{3, 6} {
			for _, sm := range sparseModels32(d) {
				t.Run(fmt.Sprintf("%s/%s/d=%d", sm.name, tc.name, d), func(t *testing.T) {
					m := sm.m
					m.MinibatchSize, m.chunkCost = tc.batch, tc.chunkCost
					x32 := narrow(randVec(rand.New(rand.NewPCG(1, 1)), m.NumParams(), 0.7))
					x64 := Widen(x32)
					g32 := make([]float32, len(x32))
					for i := range g32 {
						g32[i] = float32(math.NaN()) // LocalLoss32 overwrites it
					}
					g64 := make([]float64, len(x64))
					m.SetBatch(7)
					l32 := m.LocalLoss32(g32, x32)
					l64 := m.BatchLoss(g64, x64, 7)
					var gmax float64
					for _, v := range g64 {
						gmax = max(gmax, math.Abs(v))
					}
					if math.Abs(l32-l64) > 1e-12*math.Abs(l64) {
						t.Errorf("loss %v, float64 mode %v", l32, l64)
					}
					for i := range g32 {
						if e := math.Abs(float64(g32[i]) - g64[i]); !(e <= 2e-6*gmax) {
							t.Fatalf("grad[%d] = %v, float64 mode %v", i, g32[i], g64[i])
						}
					}
					const h = 1.0 / 256
					scratch := make([]float32, len(x32))
					for i := range x32 {
						xp, xm := slices.Clone(x32), slices.Clone(x32)
						xp[i] += h
						xm[i] -= h
						m.SetBatch(7)
						lp := m.LocalLoss32(scratch, xp)
						m.SetBatch(7)
						lm := m.LocalLoss32(scratch, xm)
						fd := (lp - lm) / (float64(xp[i]) - float64(xm[i]))
						if e := math.Abs(fd - float64(g32[i])); !(e <= 2e-4*gmax) {
							t.Errorf("grad[%d] = %v, central difference %v", i, g32[i], fd)
						}
					}
				})
			}
		}
	}
}

// float32Trial trains the same small trial (T = 4, 40 users, 30 items, d =
// 8, 2,000 training ratings, chain weight 2, Gamma 0.5, AdaGrad at 0.1, 300
// full-batch or minibatch steps on 2 workers) in the float32 mode and in
// the float64 mode from the same start (the float32 draws), and returns
// both final psi values, both models' held-out metrics on 500 ratings and
// the float32 parameters.
func float32Trial(t *testing.T, build func(spec RatingsSpec) RatingsModel, data func(rng *rand.Rand, n int) *Ratings, batch int) (psi [2]float64, met [2][]Metric, x32 []float32) {
	t.Helper()
	pool := optim.NewPool(2)
	defer pool.Close()
	rng := rand.New(rand.NewPCG(5, 5))
	spec := RatingsSpec{Train: data(rng, 2000), Users: 40, Items: 30, D: 8, T: 4, Lambda: 2, Gamma: 0.5,
		MinibatchSize: batch, Seed: 3, Pool: pool}
	test := data(rng, 500)
	const steps = 300
	m32, m64 := build(spec), build(spec)
	x32 = make([]float32, m32.NumParams())
	core32 := m32.(interface{ core() *SparseMF }).core()
	core32.Init32(x32, rand.New(rand.NewPCG(4, 4)))
	x64 := Widen(x32)
	d32 := &optim.DriverOf[float32]{Method: &optim.AdaGradOf[float32]{Rate: optim.Constant(0.1)}, Pool: pool}
	if _, err := d32.Run(core32.Problem32(), x32, steps, func(it *optim.Iter) error { psi[1] = it.Psi; return nil }); err != nil {
		t.Fatal(err)
	}
	d64 := &optim.Driver{Method: &optim.AdaGrad{Rate: optim.Constant(0.1)}, Pool: pool}
	if _, err := d64.Run(m64.Problem(), x64, steps, func(it *optim.Iter) error { psi[0] = it.Psi; return nil }); err != nil {
		t.Fatal(err)
	}
	var err error
	if met[0], err = m64.HeldOut(x64, test, true); err != nil {
		t.Fatal(err)
	}
	if met[1], err = m32.HeldOut(Widen(x32), test, true); err != nil {
		t.Fatal(err)
	}
	return psi, met, x32
}

// TestFloat32AgreesWithFloat64: a float32 trial and a float64 trial of the
// same small problem (logistic with biases, full batch and minibatch;
// gaussian) end within the tolerances docs/maths.md states: the held-out
// ll, rmse and mae within 1e-4 relative, auc and acc within 1e-4 absolute
// (one of the ~62,000 ordered pairs is 1.6e-5), and the final psi within
// 1e-3 relative (measured: ll, rmse, mae 1e-9 to 2.3e-6, auc 0 to 1.6e-5,
// acc 0, psi 2e-8 to 7.5e-6).
func TestFloat32AgreesWithFloat64(t *testing.T) {
	binary := func(rng *rand.Rand, n int) *Ratings { return detRatings(rng, n, 40, 30, 4) }
	explicit := func(rng *rand.Rand, n int) *Ratings { return detExplicit(rng, n, 40, 30, 4) }
	logistic := func(spec RatingsSpec) RatingsModel { return NewLogisticMF(spec, true) }
	gaussian := func(spec RatingsSpec) RatingsModel { return NewGaussianMF(spec, 0.8) }
	for _, tc := range []struct {
		name  string
		build func(RatingsSpec) RatingsModel
		data  func(*rand.Rand, int) *Ratings
		batch int
	}{
		{"logistic-bias", logistic, binary, 0},
		{"logistic-bias/minibatch", logistic, binary, 400},
		{"gaussian", gaussian, explicit, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			psi, met, _ := float32Trial(t, tc.build, tc.data, tc.batch)
			t.Logf("psi float64 %v float32 %v (rel %.2g)", psi[0], psi[1], relDiff(psi[1], psi[0]))
			if !(relDiff(psi[1], psi[0]) <= 1e-3) {
				t.Errorf("final psi %v, float64 mode %v", psi[1], psi[0])
			}
			for k, m := range met[0] {
				r := relDiff(met[1][k].Value, m.Value)
				t.Logf("%s float64 %v float32 %v (rel %.2g)", m.Name, m.Value, met[1][k].Value, r)
				if m.Name == "auc" || m.Name == "acc" { // counts of ordered pairs, of ratings
					r = math.Abs(met[1][k].Value - m.Value)
				}
				if !(r <= 1e-4) {
					t.Errorf("held-out %s %v, float64 mode %v", m.Name, met[1][k].Value, m.Value)
				}
			}
		})
	}
}

func relDiff(a, b float64) float64 { return math.Abs(a-b) / max(math.Abs(b), 1e-300) }

// TestBitsFloat32 records the float32 mode bit for bit against
// testdata/models-float32.bits.json (the float64 mode's TestBits has its
// own file): initialisation, the local loss and its gradient, 20 steps of
// the Driver (AdaGrad, then Adam) on 2 workers, the parameters and the
// held-out metrics, for logistic MF with biases and minibatches and for
// gaussian MF; and 20 AdaGrad steps with Goldstone-GD and with Procrustes
// rounds on float32 parameters (round statistics, parameters, Gap32).
// .ci/samebits.sh runs it under every build.
func TestBitsFloat32(t *testing.T) {
	var v bitscheck.Values
	pool := optim.NewPool(2)
	defer pool.Close()
	rng := rand.New(rand.NewPCG(2, 3))
	add32 := func(name string, x []float32) {
		for _, e := range x {
			v.Add(name, float64(e))
		}
	}
	for _, c := range []struct {
		name   string
		m      RatingsModel
		method optim.MethodOf[float32]
	}{
		{"LogisticMF d=12 bias minibatch", NewLogisticMF(RatingsSpec{Train: detRatings(rng, 2000, 40, 30, 4), Users: 40, Items: 30, D: 12, T: 4,
			Lambda: 2, Gamma: 0.5, MinibatchSize: 300, Seed: 9, Pool: pool}, true), &optim.AdaGradOf[float32]{Rate: optim.Constant(0.3)}},
		{"GaussianMF d=5", NewGaussianMF(RatingsSpec{Train: detExplicit(rng, 2000, 40, 30, 4), Users: 40, Items: 30, D: 5, T: 4,
			Lambda: 2, Gamma: 0.5, Pool: pool}, 0.8), &optim.AdamOf[float32]{Rate: optim.Constant(0.05)}},
	} {
		if err := c.m.Validate(); err != nil {
			t.Fatal(err)
		}
		core := c.m.(interface{ core() *SparseMF }).core()
		x := make([]float32, c.m.NumParams())
		core.Init32(x, rand.New(rand.NewPCG(3, 3)))
		add32(c.name, x)
		g := make([]float32, len(x))
		v.Add(c.name, core.LocalLoss32(g, x))
		add32(c.name, g)
		drv := &optim.DriverOf[float32]{Method: c.method, Pool: pool}
		if _, err := drv.Run(core.Problem32(), x, 20, func(it *optim.Iter) error {
			v.Add(c.name, it.Loss, it.Psi)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		add32(c.name, x)
		test := detRatings(rng, 500, 40, 30, 4)
		if core.link.info().labels != Binary {
			test = detExplicit(rng, 500, 40, 30, 4)
		}
		met, err := c.m.HeldOut(Widen(x), test, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range met {
			v.Add(c.name, e.Value)
		}
	}
	// The gauge rounds on float32 parameters (optim's gauge32.go):
	// Goldstone-GD (exact maps, wall flips, the rate search) and
	// Procrustes every 4 steps of AdaGrad, the round statistics, the
	// parameters and the gap meter's Gap32.
	m := NewLogisticMF(RatingsSpec{Train: detRatings(rng, 2000, 40, 30, 4), Users: 40, Items: 30, D: 5, T: 4,
		Lambda: 2, Gamma: 0.5, Pool: pool}, false)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, gc := range []struct {
		name string
		g    optim.Gauge
	}{{"float32 Goldstone rounds", &optim.Goldstone{Pool: pool, Search: optim.SearchRate}}, {"float32 Procrustes rounds", &optim.Procrustes{Pool: pool}}} {
		x := make([]float32, m.NumParams())
		m.Init32(x, rand.New(rand.NewPCG(4, 4)))
		drv := &optim.DriverOf[float32]{Method: &optim.AdaGradOf[float32]{Rate: optim.Constant(0.3)}, Gauge: gc.g, K1: 4, Pool: pool}
		if _, err := drv.Run(m.Problem32(), x, 20, func(it *optim.Iter) error {
			v.Add(gc.name, it.Loss, it.Psi)
			if st := it.Gauge; st != nil {
				v.Add(gc.name, st.PsiBefore, st.PsiStep, st.PsiAfter, st.Predicted, float64(st.Flips))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		add32(gc.name, x)
		var p optim.Procrustes
		if err := p.Init(m.Blocks(), m.Graph()); err != nil {
			t.Fatal(err)
		}
		v.Add(gc.name, p.Gap32(x))
	}
	bitscheck.Check(t, "models-float32", &v)
}

// detExplicit draws n explicit ratings (0.5 to 4.5 stars) with rand's exact
// integer draws.
func detExplicit(rng *rand.Rand, n, users, items, bins int) *Ratings {
	r := &Ratings{}
	for range n {
		r.AppendValue(int32(rng.IntN(bins)), int32(rng.IntN(users)), int32(rng.IntN(items)), float32(1+rng.IntN(9))/2)
	}
	return r
}

// TestHeldOut32: every ratings model's HeldOut32 on float32 parameters is
// HeldOut on the widened parameters, bit for bit (logistic with and
// without biases, gaussian, poisson; every metric, all or not).
func TestHeldOut32(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	spec := func(r *Ratings) RatingsSpec {
		return RatingsSpec{Train: r, Users: 40, Items: 30, D: 5, T: 4, Lambda: 2, Gamma: 0.5}
	}
	type heldOut32 interface {
		HeldOut32(x []float32, r *Ratings, all bool) ([]Metric, error)
	}
	for _, tc := range []struct {
		name string
		m    RatingsModel
		test *Ratings
	}{
		{"logistic", NewLogisticMF(spec(detRatings(rng, 800, 40, 30, 4)), false), detRatings(rng, 300, 40, 30, 4)},
		{"logistic bias", NewLogisticMF(spec(detRatings(rng, 800, 40, 30, 4)), true), detRatings(rng, 300, 40, 30, 4)},
		{"gaussian", NewGaussianMF(spec(detExplicit(rng, 800, 40, 30, 4)), 0.8), detExplicit(rng, 300, 40, 30, 4)},
		{"poisson", NewPoissonMF(spec(detExplicit(rng, 800, 40, 30, 4))), detExplicit(rng, 300, 40, 30, 4)},
	} {
		if err := tc.m.Validate(); err != nil {
			t.Fatal(err)
		}
		x := make([]float32, tc.m.NumParams())
		tc.m.(interface{ core() *SparseMF }).core().Init32(x, rand.New(rand.NewPCG(1, 2)))
		for i := range x { // biases and intercept away from 0 too
			x[i] += float32(0.01 * float64(i%7))
		}
		for _, all := range []bool{false, true} {
			want, err := tc.m.HeldOut(Widen(x), tc.test, all)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.m.(heldOut32).HeldOut32(x, tc.test, all)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %d metrics, HeldOut %d", tc.name, len(got), len(want))
			}
			for i := range want {
				if got[i].Name != want[i].Name || math.Float64bits(got[i].Value) != math.Float64bits(want[i].Value) {
					t.Errorf("%s: %s = %v, HeldOut of the widened parameters %v", tc.name, got[i].Name, got[i].Value, want[i].Value)
				}
			}
		}
	}
}
