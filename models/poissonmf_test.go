package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"goldstone/optim"
)

// synthCounts draws n ratings as synthRatings does, with Poisson counts of
// rate exp(0.5 + u_i.v_j) (planted two-dimensional tastes, static), a
// quarter of them 0.
func synthCounts(seed uint64, n, users, items, bins int) *Ratings {
	r := synthRatings(seed, n, users, items, bins)
	rng := rand.New(rand.NewPCG(seed, 9))
	u, v := randVec(rng, 2*users, 0.7), randVec(rng, 2*items, 0.7)
	r.X = nil
	r.Value = make([]float32, n)
	for k := range n {
		i, j := int(r.User[k]), int(r.Item[k])
		rate := math.Exp(0.5 + float64(u[2*i]*v[2*j]) + float64(u[2*i+1]*v[2*j+1]))
		var c int // Knuth's Poisson draw
		for p := rng.Float64(); p > math.Exp(-rate); p *= rng.Float64() {
			c++
		}
		r.Value[k] = float32(c)
	}
	return r
}

func newPoissonTest(seed uint64, n, users, items, d, T int) *PoissonMF {
	m := NewPoissonMF(sparseSpec(synthCounts(seed, n, users, items, T), seed, users, items, d, T))
	if err := m.Validate(); err != nil {
		panic(err)
	}
	return m
}

// TestPoissonMFGradient checks the gradient (embeddings, biases and the
// intercept) against finite differences, full batch and minibatch, one
// block per bin and bins cut into grids, with and without the coupling.
func TestPoissonMFGradient(t *testing.T) {
	checkSparseGradient(t, func(d int) *SparseMF { return &newPoissonTest(11, 80, 9, 6, d, 3).SparseMF }, 6+3+9+1)
}

// TestPoissonMFLossValue: one user, two items, D = 1, T = 2, by hand, and
// the held-out metrics of the same parameters.
func TestPoissonMFLossValue(t *testing.T) {
	train := &Ratings{}
	train.AppendValue(0, 0, 0, 3) // eta = 1*2 + b0 + c0 + a0 + m
	train.AppendValue(1, 0, 1, 0) // eta = 0.5*(-3) + b1 + c1 + a0 + m
	m := NewPoissonMF(RatingsSpec{Train: train, Users: 1, Items: 2, D: 1, T: 2, Gamma: 0.5})
	// blocks: bin 0 (u, v0, v1), bin 1 (u, v0, v1); b0, b1; c0, c1; a0; m.
	x := []float64{1, 2, 7, 0.5, 9, -3, 0.25, -0.5, 0.1, 0.2, 0.3, -0.4}
	g := make([]float64, len(x))
	eta0 := 2 + 0.25 + 0.1 + 0.3 - 0.4
	eta1 := -1.5 - 0.5 + 0.2 + 0.3 - 0.4
	sp := func(e float64) float64 { return math.Log1p(math.Exp(e)) }
	want := sp(eta0) - 3*math.Log(sp(eta0)) + sp(eta1) +
		0.25*(1+4+49+0.25+81+9) + 0.25*(0.0625+0.25+0.01+0.04+0.09)
	if l := m.LocalLoss(g, x); math.Abs(l-want) > 1e-12*math.Abs(want) {
		t.Errorf("loss %v, want %v", l, want)
	}
	test := &Ratings{}
	test.AppendValue(0, 0, 0, 3)
	test.AppendValue(1, 0, 1, 0)
	met, err := m.HeldOut(x, test, true)
	if err != nil {
		t.Fatal(err)
	}
	mu0, mu1 := sp(eta0), sp(eta1)
	ll := (-(mu0 - 3*math.Log(mu0)) - math.Log(6) - mu1) / 2
	dev := (2*(3*math.Log(3/mu0)-(3-mu0)) + 2*mu1) / 2
	if met[0].Name != "ll" || math.Abs(met[0].Value-ll) > 1e-12 || met[1].Name != "deviance" || math.Abs(met[1].Value-dev) > 1e-12 {
		t.Errorf("held out %v, want ll %v deviance %v", met, ll, dev)
	}
	// The baseline: the mean count 1.5 for both.
	base := m.Baseline(test)
	bll := (-(1.5 - 3*math.Log(1.5)) - math.Log(6) - 1.5) / 2
	if math.Abs(base[0].Value-bll) > 1e-12 {
		t.Errorf("baseline %v, want ll %v", base, bll)
	}
}

// TestPoissonMFPerfectFit: the deviance is 0 where the rate is the count
// and positive elsewhere; the intercept starts at softplus^-1 of the mean
// count.
func TestPoissonMFPerfectFit(t *testing.T) {
	train := &Ratings{}
	train.AppendValue(0, 0, 0, 2)
	train.AppendValue(0, 0, 1, 2)
	m := NewPoissonMF(RatingsSpec{Train: train, Users: 1, Items: 2, D: 1, T: 1})
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(1, 1)))
	clear(x[:m.BiasOffset()])
	if mu, _ := softplusSigmoid(x[len(x)-1]); math.Abs(mu-2) > 1e-14 {
		t.Fatalf("intercept %v: rate %v, want the mean count 2", x[len(x)-1], mu)
	}
	met, err := m.HeldOut(x, train, false)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(met[1].Value) > 1e-14 {
		t.Errorf("deviance of a perfect fit %v", met[1].Value)
	}
	x[len(x)-1] += 1
	if met, _ := m.HeldOut(x, train, false); !(met[1].Value > 0) {
		t.Errorf("deviance of a wrong rate %v, want > 0", met[1].Value)
	}
}

// TestLogGamma1p compares log y! with the standard library's Lgamma.
func TestLogGamma1p(t *testing.T) {
	for _, y := range []float64{0, 0.5, 1, 1.5, 2, 3, 7.25, 14, 15, 15.5, 16, 100, 1e4, 1e7} {
		want, _ := math.Lgamma(y + 1)
		if got := logGamma1p(y); math.Abs(got-want) > 1e-13*math.Max(1, math.Abs(want)) {
			t.Errorf("logGamma1p(%v) = %.17g, want %.17g", y, got, want)
		}
	}
}

// TestPoissonMFWorkers: the loss and gradient are bit-identical at any
// worker count and with the Go loops instead of the FMA kernels.
func TestPoissonMFWorkers(t *testing.T) {
	pool2 := optim.NewPool(2)
	defer pool2.Close()
	fma := useFMA
	defer func() { useFMA = fma }()
	for _, batch := range []int{0, 300} {
		var x, g0 []float64
		var l0 float64
		for k, p := range []*optim.Pool{nil, pool2, pool2} {
			useFMA = fma && k < 2
			m := newPoissonTest(8, 2000, 60, 40, 5, 6)
			m.MinibatchSize, m.Pool, m.chunkCost = batch, p, 200
			if x == nil {
				x = randVec(rand.New(rand.NewPCG(4, 4)), m.NumParams(), 0.5)
			}
			g := make([]float64, len(x))
			l := m.BatchLoss(g, x, 1)
			if k == 0 {
				l0, g0 = l, g
				continue
			}
			if math.Float64bits(l) != math.Float64bits(l0) {
				t.Errorf("batch %d, run %d: loss %v != %v", batch, k, l, l0)
			}
			sameBits(t, "grad", g, g0)
		}
	}
}

// TestPoissonMFLearns: training through the Driver lowers the held-out
// deviance below the mean count's.
func TestPoissonMFLearns(t *testing.T) {
	all := synthCounts(3, 6000, 40, 30, 2)
	part := func(lo, hi int) *Ratings {
		return &Ratings{T: all.T[lo:hi], User: all.User[lo:hi], Item: all.Item[lo:hi], Value: all.Value[lo:hi]}
	}
	test := part(5000, 6000)
	m := NewPoissonMF(RatingsSpec{Train: part(0, 5000), Users: 40, Items: 30, D: 2, T: 2, Lambda: 1, Gamma: 0.1})
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(9, 9)))
	d := &optim.Driver{Method: &optim.AdaGrad{Rate: optim.Constant(0.1)}}
	if _, err := d.Run(ProblemOf(m), x, 300, nil); err != nil {
		t.Fatal(err)
	}
	met, err := m.HeldOut(x, test, true)
	if err != nil {
		t.Fatal(err)
	}
	base := m.Baseline(test)
	t.Logf("held out: %v; mean count: %v", met, base)
	if !(met[1].Value < 0.9*base[1].Value) || !(met[0].Value > base[0].Value) {
		t.Errorf("trained %v, baseline %v: want a lower deviance and a higher ll", met, base)
	}
}

// TestPoissonMFValidate: counts must be values >= 0.
func TestPoissonMFValidate(t *testing.T) {
	r := &Ratings{}
	r.AppendValue(0, 0, 0, 2)
	r.AppendValue(0, 0, 0, -1)
	if err := NewPoissonMF(RatingsSpec{Train: r, Users: 1, Items: 1, D: 1, T: 1}).Validate(); err == nil {
		t.Error("a negative count accepted")
	}
	b := &Ratings{}
	b.Append(0, 0, 0, 1)
	if err := NewPoissonMF(RatingsSpec{Train: b, Users: 1, Items: 1, D: 1, T: 1}).Validate(); err == nil {
		t.Error("binary labels accepted")
	}
	if err := (&PoissonMF{}).Validate(); err == nil {
		t.Error("a model not built by NewPoissonMF accepted")
	}
}
