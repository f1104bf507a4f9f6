package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"goldstone/optim"
)

// synthExplicit draws n ratings as synthRatings does, with values
// 3 + u_i.v_j (planted two-dimensional tastes, static) + N(0, 0.5^2) noise,
// rounded to half stars.
func synthExplicit(seed uint64, n, users, items, bins int) *Ratings {
	r := synthRatings(seed, n, users, items, bins)
	rng := rand.New(rand.NewPCG(seed, 8))
	u, v := randVec(rng, 2*users, 1), randVec(rng, 2*items, 1)
	r.X = nil
	r.Value = make([]float32, n)
	for k := range n {
		i, j := int(r.User[k]), int(r.Item[k])
		y := 3 + float64(u[2*i]*v[2*j]) + float64(u[2*i+1]*v[2*j+1]) + 0.5*rng.NormFloat64()
		r.Value[k] = float32(math.Round(2*y) / 2)
	}
	return r
}

func newGaussianTest(seed uint64, n, users, items, d, T int) *GaussianMF {
	m := NewGaussianMF(sparseSpec(synthExplicit(seed, n, users, items, T), seed, users, items, d, T), 0.8)
	if err := m.Validate(); err != nil {
		panic(err)
	}
	return m
}

// TestGaussianMFGradient checks the gradient (embeddings, biases and mu)
// against finite differences, full batch and minibatch, one block per bin
// and bins cut into grids, with and without the coupling.
func TestGaussianMFGradient(t *testing.T) {
	checkSparseGradient(t, func(d int) *SparseMF { return &newGaussianTest(11, 80, 9, 6, d, 3).SparseMF }, 6+3+9+1)
}

// TestGaussianMFLossValue: one user, two items, D = 1, T = 2, by hand.
func TestGaussianMFLossValue(t *testing.T) {
	train := &Ratings{}
	train.AppendValue(0, 0, 0, 4)   // s = 1*2 + b0 + c0 + a0 + mu
	train.AppendValue(1, 0, 1, 1.5) // s = 0.5*(-3) + b1 + c1 + a0 + mu
	m := NewGaussianMF(RatingsSpec{Train: train, Users: 1, Items: 2, D: 1, T: 2, Gamma: 0.5}, 2)
	// blocks: bin 0 (u, v0, v1), bin 1 (u, v0, v1); b0, b1; c0, c1; a0; mu.
	x := []float64{1, 2, 7, 0.5, 9, -3, 0.25, -0.5, 0.1, 0.2, 0.3, 2.5}
	g := make([]float64, len(x))
	s0 := 1*2 + 0.25 + 0.1 + 0.3 + 2.5
	s1 := 0.5*(-3) - 0.5 + 0.2 + 0.3 + 2.5
	r0, r1 := s0-4, s1-1.5
	var zz, bb float64
	for _, v := range x[:6] {
		zz += v * v
	}
	for _, v := range x[6:11] {
		bb += v * v
	}
	want := (r0*r0+r1*r1)/4 + math.Log(2*math.Pi*2) + 0.25*(zz+bb)
	if got := m.LocalLoss(g, x); math.Abs(got-want) > 1e-13 {
		t.Errorf("loss = %v, want %v", got, want)
	}
	c0, c1 := r0/2, r1/2 // dl/ds
	wantG := []float64{
		c0*2 + 0.5*1, c0*1 + 0.5*2, 0.5 * 7, // bin 0: u, v0, v1
		c1*(-3) + 0.5*0.5, 0.5 * 9, c1*0.5 + 0.5*(-3), // bin 1
		c0 + 0.5*0.25, c1 + 0.5*(-0.5), // item biases
		c0 + 0.5*0.1, c1 + 0.5*0.2, // bin biases
		c0 + c1 + 0.5*0.3, // user bias
		c0 + c1,           // mu: no prior
	}
	for i := range g {
		if math.Abs(g[i]-wantG[i]) > 1e-13 {
			t.Errorf("grad[%d] = %v, want %v", i, g[i], wantG[i])
		}
	}
	met, err := m.HeldOut(x, train, true)
	if err != nil {
		t.Fatal(err)
	}
	wantM := []Metric{
		{"ll", -(r0*r0+r1*r1)/2/4 - 0.5*math.Log(2*math.Pi*2)},
		{"rmse", math.Sqrt((r0*r0 + r1*r1) / 2)},
		{"mae", (math.Abs(r0) + math.Abs(r1)) / 2},
	}
	for i, w := range wantM {
		if met[i].Name != w.Name || math.Abs(met[i].Value-w.Value) > 1e-13 {
			t.Errorf("metric %d: %+v, want %+v", i, met[i], w)
		}
	}
	base := m.Baseline(train) // the mean 2.75 for both: residuals 1.25, -1.25
	if base[1].Name != "rmse" || base[1].Value != 1.25 || base[2].Value != 1.25 {
		t.Errorf("baseline %+v, want rmse and mae 1.25", base)
	}
}

// TestGaussianMFInit: blocks drawn, biases 0, mu the mean training rating.
func TestGaussianMFInit(t *testing.T) {
	m := newGaussianTest(4, 300, 10, 7, 2, 3)
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(1, 2)))
	var mean float64
	for _, v := range m.Train.Value {
		mean += float64(v)
	}
	mean /= float64(m.Train.Len())
	bo := m.BiasOffset()
	if x[len(x)-1] != mean {
		t.Errorf("mu = %v, want %v", x[len(x)-1], mean)
	}
	for i, v := range x[bo : len(x)-1] {
		if v != 0 {
			t.Fatalf("bias %d = %v, want 0", i, v)
		}
	}
	if x[0] == 0 || x[bo-1] == 0 {
		t.Error("blocks not drawn")
	}
}

// TestGaussianMFSymmetry: the Gaussian likelihood has LogisticMF's
// symmetry, so the gauge steps apply unchanged: the loss is invariant under
// a common orthogonal map of the columns of each Z_t; a Goldstone-GD round
// and a Procrustes round lower psi, leave the loss (to rounding) and the
// biases and mu (bit for bit) as they were; and training through the
// Driver with either symmetry step reaches the plain optimizer's loss.
func TestGaussianMFSymmetry(t *testing.T) {
	m := newGaussianTest(5, 400, 12, 8, 3, 5)
	b := m.Blocks()
	rng := rand.New(rand.NewPCG(2, 3))
	x := randVec(rng, m.NumParams(), 1)
	qs := make([][]float64, b.T)
	for i := range qs {
		qs[i] = randOrthogonal(rng, b.D)
	}
	g := make([]float64, len(x))
	l0 := m.BatchLoss(g, x, 0)
	if l1 := m.BatchLoss(g, rotateBlocks(x, b, qs), 0); math.Abs(l1-l0) > 1e-10*math.Abs(l0) {
		t.Errorf("loss changed under rotations: %v -> %v", l0, l1)
	}
	bo := m.BiasOffset()
	for _, gauge := range []optim.Gauge{&optim.Goldstone{}, &optim.Procrustes{}} {
		y := append([]float64(nil), x...)
		if err := gauge.Init(b, m.Graph()); err != nil {
			t.Fatal(err)
		}
		psi0 := optim.Psi(y, b, m.Graph())
		gauge.Round(y)
		psi1 := optim.Psi(y, b, m.Graph())
		if !(psi1 < psi0) {
			t.Errorf("%T: psi %v -> %v, want lower", gauge, psi0, psi1)
		}
		if l := m.BatchLoss(g, y, 0); math.Abs(l-l0) > 1e-10*math.Abs(l0) {
			t.Errorf("%T: local loss %v -> %v, want unchanged", gauge, l0, l)
		}
		sameBits(t, fmt.Sprintf("%T biases and mu", gauge), y[bo:], x[bo:])
	}
	var final []float64
	for k, mk := range []func() optim.Gauge{
		func() optim.Gauge { return nil },
		func() optim.Gauge { return &optim.Goldstone{} },
		func() optim.Gauge { return &optim.Procrustes{} },
	} {
		y := make([]float64, m.NumParams())
		m.Init(y, rand.New(rand.NewPCG(9, 9)))
		d := &optim.Driver{Method: &optim.AdaGrad{Rate: optim.Constant(0.3)}, Gauge: mk(), K1: 10}
		var last optim.Iter
		if _, err := d.Run(ProblemOf(m), y, 300, func(it *optim.Iter) error { last = *it; return nil }); err != nil {
			t.Fatal(err)
		}
		final = append(final, last.Loss)
		if k > 0 && !(last.Loss < final[0]*1.02) {
			t.Errorf("gauge %d: final loss %v, plain optimizer %v", k, last.Loss, final[0])
		}
	}
	t.Logf("final loss: plain %.4f, Goldstone-GD %.4f, Procrustes %.4f", final[0], final[1], final[2])
}

// TestGaussianMFWorkers: the loss and gradient are bit-identical at any
// worker count and with the Go loops instead of the FMA kernels, on bins cut
// into grids of blocks.
func TestGaussianMFWorkers(t *testing.T) {
	pool1, pool2, pool3 := optim.NewPool(1), optim.NewPool(2), optim.NewPool(3)
	defer pool1.Close()
	defer pool2.Close()
	defer pool3.Close()
	fma := useFMA
	defer func() { useFMA = fma }()
	for _, bins := range []int{6, 1} {
		for _, batch := range []int{0, 300} {
			var x []float64
			var losses []float64
			var grads [][]float64
			for k, p := range []*optim.Pool{nil, pool1, pool2, pool3, pool2} {
				useFMA = fma && k < 4
				m := newGaussianTest(8, 2000, 60, 40, 5, bins)
				m.MinibatchSize, m.Pool, m.chunkCost = batch, p, 200
				m.prepare()
				if len(m.grid.phases) < 3 || len(m.grid.phases[1]) < 2 {
					t.Fatalf("grid: %d phases, %d blocks", len(m.grid.phases), len(m.grid.blocks))
				}
				if x == nil {
					x = randVec(rand.New(rand.NewPCG(4, 4)), m.NumParams(), 1)
				}
				g := make([]float64, len(x))
				m.LocalLoss(g, x) // batch 0
				losses = append(losses, m.LocalLoss(g, x))
				grads = append(grads, g)
			}
			for k := 1; k < len(losses); k++ {
				if math.Float64bits(losses[k]) != math.Float64bits(losses[0]) {
					t.Errorf("T=%d batch %d: loss %d: %v != %v", bins, batch, k, losses[k], losses[0])
				}
				sameBits(t, "grad", grads[k], grads[0])
			}
		}
	}
}

// TestGaussianMFProblem: the Driver's problem (likelihood and the biases'
// prior added into a zeroed buffer, Gamma as Problem.L2) has LocalLoss's
// loss and gradient, FullLoss is the full batch whatever the minibatch
// size, and training through the Driver is bit-identical at any worker
// count.
func TestGaussianMFProblem(t *testing.T) {
	pool2, pool3 := optim.NewPool(2), optim.NewPool(3)
	defer pool2.Close()
	defer pool3.Close()
	for _, batch := range []int{0, 300} {
		m := newGaussianTest(8, 2000, 60, 40, 5, 6)
		m.MinibatchSize, m.chunkCost = batch, 200
		x := randVec(rand.New(rand.NewPCG(4, 5)), m.NumParams(), 1)
		want := make([]float64, len(x))
		wantLoss := m.BatchLoss(want, x, 3)
		p := m.Problem()
		if p.L2 != m.Gamma || p.Graph != m.Graph() || p.Blocks != m.Blocks() {
			t.Fatalf("Problem() = %+v", p)
		}
		got := make([]float64, len(x))
		m.SetBatch(3)
		loss := p.Local(got, x)
		if m.Batch() != 4 {
			t.Fatalf("batch after Problem().Local: %d, want 4", m.Batch())
		}
		var sq float64
		bo := m.BiasOffset()
		for i, v := range x {
			l2 := 0.0
			if i < bo {
				sq += v * v
				l2 = p.L2 * v
			}
			if math.Abs(got[i]+l2-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("batch %d: grad[%d] = %v + L2 x, LocalLoss %v", batch, i, got[i], want[i])
			}
		}
		if l := loss + 0.5*p.L2*sq; math.Abs(l-wantLoss) > 1e-12*math.Abs(wantLoss) {
			t.Fatalf("batch %d: loss %v + L2 term = %v, LocalLoss %v", batch, loss, l, wantLoss)
		}
		full := newGaussianTest(8, 2000, 60, 40, 5, 6)
		full.chunkCost = 200
		fg, g := make([]float64, len(x)), make([]float64, len(x))
		if a, b := m.FullLoss(g, x), full.BatchLoss(fg, x, 0); a != b {
			t.Errorf("batch %d: FullLoss %v, full batch %v", batch, a, b)
		}
		sameBits(t, "FullLoss gradient", g, fg)
		var x0 []float64
		for _, pool := range []*optim.Pool{nil, pool2, pool3} {
			m.Pool = pool
			m.SetBatch(0)
			y := append([]float64(nil), x...)
			d := &optim.Driver{Method: &optim.AdaGrad{Rate: optim.Constant(0.1)}, Pool: pool}
			if _, err := d.Run(ProblemOf(m), y, 4, nil); err != nil {
				t.Fatal(err)
			}
			if x0 == nil {
				x0 = y
				continue
			}
			sameBits(t, "x", y, x0)
		}
	}
}

func TestGaussianMFZeroAlloc(t *testing.T) {
	pool := optim.NewPool(2)
	defer pool.Close()
	for _, batch := range []int{0, 100} {
		m := newGaussianTest(3, 1000, 50, 30, 4, 5)
		m.MinibatchSize, m.chunkCost, m.Pool = batch, 100, pool
		x := randVec(rand.New(rand.NewPCG(1, 1)), m.NumParams(), 0.1)
		g := make([]float64, len(x))
		m.LocalLoss(g, x)
		if a := testing.AllocsPerRun(10, func() { m.LocalLoss(g, x) }); a != 0 {
			t.Errorf("batch %d: %v allocs per call", batch, a)
		}
	}
}

func TestGaussianMFValidate(t *testing.T) {
	good := func() *GaussianMF {
		r := &Ratings{}
		r.AppendValue(1, 2, 3, 4.5)
		return NewGaussianMF(RatingsSpec{Train: r, Users: 3, Items: 4, D: 2, T: 2}, 0)
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("valid model: %v", err)
	}
	for name, mutate := range map[string]func(m *GaussianMF){
		"bin":       func(m *GaussianMF) { m.Train.T[0] = 2 },
		"item":      func(m *GaussianMF) { m.Train.Item[0] = 4 },
		"nan":       func(m *GaussianMF) { m.Train.Value[0] = float32(math.NaN()) },
		"binary":    func(m *GaussianMF) { m.Train.Value, m.Train.X = nil, []int8{1} },
		"no train":  func(m *GaussianMF) { m.Train = nil },
		"noise":     func(m *GaussianMF) { m.NoiseVar = -1 },
		"minibatch": func(m *GaussianMF) { m.MinibatchSize = -1 },
		"coupling":  func(m *GaussianMF) { m.Coupling = optim.Chain(3, 1) },
		"dim":       func(m *GaussianMF) { m.D = 0 },
	} {
		m := good()
		mutate(m)
		if err := m.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Explicit ratings do not train the logistic model.
	r := &Ratings{}
	r.AppendValue(0, 0, 0, 3)
	if err := (NewLogisticMF(RatingsSpec{Train: r, Users: 1, Items: 1, D: 1, T: 1}, false)).Validate(); err == nil {
		t.Error("LogisticMF accepted explicit ratings")
	}
}

// TestGaussianMFLearns: on ratings from planted static tastes, the trained
// model's held-out RMSE beats the global mean's.
func TestGaussianMFLearns(t *testing.T) {
	all := synthExplicit(3, 6000, 40, 30, 3)
	train, test := &Ratings{}, &Ratings{}
	for k := range all.Len() {
		dst := train
		if k%5 == 0 {
			dst = test
		}
		dst.AppendValue(all.T[k], all.User[k], all.Item[k], all.Value[k])
	}
	m := GaussianSettings{NoiseVar: 0.25}.New(RatingsSpec{Train: train, Users: 40, Items: 30, D: 2, T: 3, Lambda: 10, Gamma: 1}).(*GaussianMF)
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(1, 1)))
	d := &optim.Driver{Method: &optim.AdaGrad{Rate: optim.Constant(0.3)}}
	if _, err := d.Run(ProblemOf(m), x, 500, nil); err != nil {
		t.Fatal(err)
	}
	got, err := m.HeldOut(x, test, false)
	if err != nil {
		t.Fatal(err)
	}
	base := m.Baseline(test)
	t.Logf("test rmse %.4f, mae %.4f; global mean rmse %.4f, mae %.4f", got[1].Value, got[2].Value, base[1].Value, base[2].Value)
	if !(got[1].Value < 0.8*base[1].Value) || !(got[0].Value > base[0].Value) {
		t.Errorf("test %+v, global mean %+v: want an RMSE at least 20%% lower", got, base)
	}
}

// TestGaussianMFBiasOnly: the bias-only fit is a stationary point of the
// model's own loss (embeddings 0: every gradient entry vanishes), and it
// predicts better than the global mean on ratings with user and item
// effects.
func TestGaussianMFBiasOnly(t *testing.T) {
	m := newGaussianTest(6, 3000, 40, 25, 3, 4)
	rng := rand.New(rand.NewPCG(7, 7))
	ue, ie := randVec(rng, 40, 0.7), randVec(rng, 25, 0.7)
	for k := range m.Train.Len() {
		m.Train.Value[k] += float32(ue[m.Train.User[k]] + ie[m.Train.Item[k]])
	}
	x := m.BiasOnly()
	g := make([]float64, len(x))
	m.LocalLoss(g, x)
	for i, v := range g {
		if math.Abs(v) > 1e-8 {
			t.Fatalf("grad[%d] = %v at the bias-only fit, want 0", i, v)
		}
	}
	fit, err := m.HeldOut(x, m.Train, false)
	if err != nil {
		t.Fatal(err)
	}
	if base := m.Baseline(m.Train); !(fit[1].Value < 0.9*base[1].Value) {
		t.Errorf("bias-only rmse %v, global mean %v", fit[1].Value, base[1].Value)
	}
	if y := m.BiasOnly(); !slicesEqualBits(x, y) {
		t.Error("BiasOnly differs on a second call")
	}
}

func slicesEqualBits(a, b []float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// BenchmarkGaussianMF times one full-batch local loss and gradient of the
// Gaussian model against the logistic model's on the same ratings (200,000
// ratings, 3,000 users, 1,000 items, T = 20, d = 10, GOMAXPROCS workers):
// ratings/s of each and their ratio, measured in one run.
func BenchmarkGaussianMF(b *testing.B) {
	const n, users, items, bins, d = 200_000, 3_000, 1_000, 20, 10
	pool := optim.NewPool(0)
	defer pool.Close()
	train := synthExplicit(1, n, users, items, bins)
	train.X = synthRatings(1, n, users, items, bins).X
	spec := RatingsSpec{Train: train, Users: users, Items: items, D: d, T: bins, Lambda: 1, Gamma: 0.01, Pool: pool}
	var secs [2]float64
	for k, m := range []RatingsModel{LogisticSettings{Bias: true}.New(spec), GaussianSettings{}.New(spec)} {
		name := []string{"logistic", "gaussian"}[k]
		b.Run(name, func(b *testing.B) {
			x := make([]float64, m.NumParams())
			m.Init(x, rand.New(rand.NewPCG(1, 1)))
			g := make([]float64, len(x))
			m.LocalLoss(g, x)
			b.ReportAllocs()
			for b.Loop() {
				sinkLoss = m.LocalLoss(g, x)
			}
			secs[k] = b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(n)/secs[k], "ratings/s")
			if k == 1 && secs[0] > 0 {
				b.ReportMetric(secs[1]/secs[0], "gaussian/logistic")
			}
		})
	}
}
