package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"goldstone/optim"
)

func newLogisticTest(seed uint64, n, users, items, d, T int) *LogisticMF {
	m := NewLogisticMF(sparseSpec(synthRatings(seed, n, users, items, T), seed, users, items, d, T), false)
	if err := m.Validate(); err != nil {
		panic(err)
	}
	return m
}

// TestLogisticMFGradient checks the gradient against finite differences,
// without and with the bias terms (item and bin biases after the blocks).
func TestLogisticMFGradient(t *testing.T) {
	for _, bias := range []bool{false, true} {
		t.Run(fmt.Sprintf("bias=%v", bias), func(t *testing.T) {
			arrays := 0
			if bias {
				arrays = 6 + 3 + 9
			}
			checkSparseGradient(t, func(d int) *SparseMF {
				m := newLogisticTest(11, 80, 9, 6, d, 3)
				m.Bias = bias
				return &m.SparseMF
			}, arrays)
		})
	}
}

func TestLogisticMFLossValue(t *testing.T) {
	// Users=1, Items=2, D=1, T=1: u = 1, v = (2, -3).
	train := &Ratings{}
	train.Append(0, 0, 0, -1) // y = -2: -log sigmoid(-2) = softplus(2)
	train.Append(0, 0, 1, -1) // y = 3: softplus(-3)
	m := NewLogisticMF(RatingsSpec{Train: train, Users: 1, Items: 2, D: 1, T: 1, Gamma: 0.5}, false)
	x := []float64{1, 2, -3}
	g := make([]float64, 3)
	want := math.Log1p(math.Exp(2)) + math.Log1p(math.Exp(-3)) + 0.25*(1+4+9)
	if got := m.LocalLoss(g, x); math.Abs(got-want) > 1e-14 {
		t.Errorf("loss = %v, want %v", got, want)
	}
	s := func(y float64) float64 { return 1 / (1 + math.Exp(-y)) }
	// d/ds softplus(-x s) = -x sigmoid(-x s)
	c0, c1 := s(2), s(-3)
	wantG := []float64{c0*2 + c1*(-3) + 0.5, c0*1 + 0.5*2, c1*1 + 0.5*(-3)}
	for i := range g {
		if math.Abs(g[i]-wantG[i]) > 1e-14 {
			t.Errorf("grad[%d] = %v, want %v", i, g[i], wantG[i])
		}
	}
}

func TestLogisticMFStable(t *testing.T) {
	train := &Ratings{}
	train.Append(0, 0, 0, 1)
	train.Append(0, 0, 1, -1)
	m := NewLogisticMF(RatingsSpec{Train: train, Users: 1, Items: 2, D: 1, T: 1}, false)
	x := []float64{100, 10, 10} // scores 1000: x=+1 costs ~0, x=-1 costs 1000
	g := make([]float64, 3)
	if l := m.LocalLoss(g, x); math.Abs(l-1000) > 1e-9 {
		t.Errorf("loss = %v, want 1000", l)
	}
	if g[0] != 10 || g[1] != 0 || g[2] != 100 {
		t.Errorf("grad = %v, want [10 0 100]", g)
	}
}

func TestLogisticMFRotationInvariance(t *testing.T) {
	for _, batch := range []int{0, 40} {
		m := newLogisticTest(5, 200, 12, 8, 4, 4)
		m.MinibatchSize = batch
		b := m.Blocks()
		rng := rand.New(rand.NewPCG(2, 3))
		x := randVec(rng, m.NumParams(), 1)
		qs := make([][]float64, b.T)
		for i := range qs {
			qs[i] = randOrthogonal(rng, b.D)
		}
		g := make([]float64, len(x))
		l0 := m.BatchLoss(g, x, 3)
		l1 := m.BatchLoss(g, rotateBlocks(x, b, qs), 3)
		if math.Abs(l1-l0) > 1e-10*math.Abs(l0) {
			t.Errorf("batch %d: loss changed under rotations: %v -> %v", batch, l0, l1)
		}
	}
}

// TestLogisticMFWorkers: the loss and gradient are bit-identical at any
// worker count and with the Go loops instead of the FMA kernels, on bins cut
// into grids of blocks (T = 1: one bin of 7 x 7 blocks).
func TestLogisticMFWorkers(t *testing.T) {
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
				m := newLogisticTest(8, 2000, 60, 40, 5, bins)
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

func TestLogisticMFChunkingInvariant(t *testing.T) {
	// Different chunk boundaries change only the summation order of the loss.
	m1 := newLogisticTest(8, 2000, 60, 40, 5, 6)
	m2 := newLogisticTest(8, 2000, 60, 40, 5, 6)
	m2.chunkCost = 100
	x := randVec(rand.New(rand.NewPCG(4, 4)), m1.NumParams(), 1)
	g1, g2 := make([]float64, len(x)), make([]float64, len(x))
	l1, l2 := m1.LocalLoss(g1, x), m2.LocalLoss(g2, x)
	if math.Abs(l1-l2) > 1e-12*l1 {
		t.Errorf("loss %v vs %v", l1, l2)
	}
	sameBits(t, "grad", g1, g2) // per-column sums run in the same order
}

func TestLogisticMFMinibatch(t *testing.T) {
	m := newLogisticTest(21, 500, 20, 10, 3, 4)
	full := newLogisticTest(21, 500, 20, 10, 3, 4)
	m.MinibatchSize = 100
	x := randVec(rand.New(rand.NewPCG(6, 6)), m.NumParams(), 0.8)
	g, gf := make([]float64, len(x)), make([]float64, len(x))
	lf := full.LocalLoss(gf, x)

	a := m.LocalLoss(g, x)
	if m.Batch() != 1 {
		t.Fatalf("Batch() = %d after one call", m.Batch())
	}
	if b := m.LocalLoss(g, x); a == b {
		t.Errorf("consecutive minibatches have equal loss %v", a)
	}
	m.SetBatch(0)
	if b := m.LocalLoss(g, x); a != b {
		t.Errorf("batch 0 repeated: %v != %v", b, a)
	}
	if b := m.BatchLoss(g, x, 0); a != b {
		t.Errorf("BatchLoss(0) = %v, LocalLoss at batch 0 = %v", b, a)
	}

	// Unbiased: the mean over many batches approaches the full-batch loss and gradient.
	const n = 2000
	var mean float64
	meanG := make([]float64, len(x))
	for k := range n {
		mean += m.BatchLoss(g, x, uint64(k)) / n
		for i, v := range g {
			meanG[i] += v / n
		}
	}
	if math.Abs(mean-lf) > 0.01*lf {
		t.Errorf("mean minibatch loss %v, full %v", mean, lf)
	}
	var num, den float64
	for i := range gf {
		num += (meanG[i] - gf[i]) * (meanG[i] - gf[i])
		den += gf[i] * gf[i]
	}
	if r := math.Sqrt(num / den); r > 0.05 {
		t.Errorf("mean minibatch gradient relative error %v", r)
	}
}

func TestLogisticMFZeroAlloc(t *testing.T) {
	for _, batch := range []int{0, 100} {
		m := newLogisticTest(3, 1000, 50, 30, 4, 5)
		m.MinibatchSize, m.chunkCost = batch, 100
		x := randVec(rand.New(rand.NewPCG(1, 1)), m.NumParams(), 0.1)
		g := make([]float64, len(x))
		m.LocalLoss(g, x)
		if a := testing.AllocsPerRun(10, func() { m.LocalLoss(g, x) }); a != 0 {
			t.Errorf("batch %d: %v allocs per call", batch, a)
		}
	}
}

func TestLogisticMFValidate(t *testing.T) {
	good := func() *LogisticMF {
		r := &Ratings{}
		r.Append(1, 2, 3, 1)
		return NewLogisticMF(RatingsSpec{Train: r, Users: 3, Items: 4, D: 2, T: 2}, false)
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("valid model: %v", err)
	}
	for name, mutate := range map[string]func(m *LogisticMF){
		"bin":       func(m *LogisticMF) { m.Train.T[0] = 2 },
		"user":      func(m *LogisticMF) { m.Train.User[0] = -1 },
		"item":      func(m *LogisticMF) { m.Train.Item[0] = 4 },
		"x":         func(m *LogisticMF) { m.Train.X[0] = 0 },
		"lengths":   func(m *LogisticMF) { m.Train.X = append(m.Train.X, 1) },
		"no train":  func(m *LogisticMF) { m.Train = nil },
		"minibatch": func(m *LogisticMF) { m.MinibatchSize = -1 },
		"coupling":  func(m *LogisticMF) { m.Coupling = optim.Chain(3, 1) },
		"dim":       func(m *LogisticMF) { m.D = 0 },
	} {
		m := good()
		mutate(m)
		if err := m.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestLogisticMFZeroAllocPool(t *testing.T) {
	pool := optim.NewPool(2)
	defer pool.Close()
	m := newLogisticTest(3, 1000, 50, 30, 4, 5)
	m.Pool, m.chunkCost = pool, 100
	x := randVec(rand.New(rand.NewPCG(1, 1)), m.NumParams(), 0.1)
	g := make([]float64, len(x))
	m.LocalLoss(g, x)
	if a := testing.AllocsPerRun(20, func() { m.LocalLoss(g, x) }); a != 0 {
		t.Errorf("%v allocs per call", a)
	}
}

// TestLogisticMFProblem: the Driver's problem (likelihood added into a zeroed
// buffer, Gamma as Problem.L2) has LocalLoss's loss and gradient, and training
// through the Driver on it is bit-identical at any worker count.
func TestLogisticMFProblem(t *testing.T) {
	pool2, pool3 := optim.NewPool(2), optim.NewPool(3)
	defer pool2.Close()
	defer pool3.Close()
	for _, batch := range []int{0, 300} {
		m := newLogisticTest(8, 2000, 60, 40, 5, 6)
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
		for i, v := range x {
			sq += v * v
			if math.Abs(got[i]+p.L2*v-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("batch %d: grad[%d] = %v + L2 x, LocalLoss %v", batch, i, got[i], want[i])
			}
		}
		if l := loss + 0.5*p.L2*sq; math.Abs(l-wantLoss) > 1e-12*math.Abs(wantLoss) {
			t.Fatalf("batch %d: loss %v + L2 term = %v, LocalLoss %v", batch, loss, l, wantLoss)
		}
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

// TestLogisticMFFullLoss: FullLoss is the full-batch loss and gradient
// whatever the minibatch size, and it leaves the batch sequence alone.
func TestLogisticMFFullLoss(t *testing.T) {
	for _, bias := range []bool{false, true} {
		m := newLogisticTest(23, 400, 12, 9, 3, 4)
		full := newLogisticTest(23, 400, 12, 9, 3, 4)
		m.Bias, full.Bias = bias, bias
		m.MinibatchSize = 50
		x := randVec(rand.New(rand.NewPCG(7, 7)), m.NumParams(), 0.8)
		g, gf := make([]float64, len(x)), make([]float64, len(x))
		m.LocalLoss(g, x)
		lf := full.LocalLoss(gf, x)
		if l := m.FullLoss(g, x); l != lf {
			t.Errorf("bias %v: FullLoss %v, full-batch LocalLoss %v", bias, l, lf)
		}
		sameBits(t, "FullLoss gradient", g, gf)
		if m.Batch() != 1 {
			t.Errorf("bias %v: FullLoss moved the batch sequence to %d", bias, m.Batch())
		}
	}
}
