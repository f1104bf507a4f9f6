package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"goldstone/optim"
)

func newDenseTest(rng *rand.Rand, rows, cols, d, T int, timeVarying bool, gamma float64) *DenseMF {
	m := &DenseMF{Rows: rows, Cols: cols, D: d, T: T, Lambda: 2.5, Gamma: gamma}
	nx := 1
	if timeVarying {
		nx = T
	}
	for range nx {
		m.X = append(m.X, randVec(rng, rows*cols, 1))
	}
	if err := m.Validate(); err != nil {
		panic(err)
	}
	return m
}

func TestDenseMFGradient(t *testing.T) {
	for _, tc := range []struct {
		name        string
		timeVarying bool
		gamma       float64
		psi         bool
	}{
		{"plain", false, 0, false},
		{"gamma", false, 0.7, false},
		{"time-varying", true, 0, false},
		{"time-varying+gamma+psi", true, 0.3, true},
		{"psi", false, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			m := newDenseTest(rng, 4, 5, 3, 4, tc.timeVarying, tc.gamma)
			x := randVec(rng, m.NumParams(), 0.8)
			f := m.LocalLoss
			if tc.psi {
				f = withPsi(f, m.Blocks(), m.Graph())
			}
			checkGrad(t, f, x, 1e-6)
		})
	}
}

func TestDenseMFLossValue(t *testing.T) {
	// One 1x2 matrix, d = 1, T = 2, shared X: u = 2, v = (1, -1) at t=0; zeros at t=1.
	m := &DenseMF{X: [][]float64{{3, 1}}, Rows: 1, Cols: 2, D: 1, T: 2, Gamma: 0.5}
	x := []float64{2, 1, -1, 0, 0, 0}
	g := make([]float64, len(x))
	// t=0: residuals (2-3, -2-1) -> 1/2 (1 + 9) = 5; reg 0.25*(4+1+1) = 1.5
	// t=1: 1/2 (9 + 1) = 5
	if got, want := m.LocalLoss(g, x), 11.5; got != want {
		t.Errorf("loss = %v, want %v", got, want)
	}
}

func TestDenseMFRotationInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := newDenseTest(rng, 6, 5, 3, 5, true, 0.4)
	b := m.Blocks()
	x := randVec(rng, m.NumParams(), 1)
	q := randOrthogonal(rng, b.D)
	qs := make([][]float64, b.T)
	for i := range qs {
		qs[i] = q
	}
	g := make([]float64, len(x))
	l0 := m.LocalLoss(g, x)
	l1 := m.LocalLoss(g, rotateBlocks(x, b, qs))
	if math.Abs(l1-l0) > 1e-10*math.Abs(l0) {
		t.Errorf("loss changed under a common rotation: %v -> %v", l0, l1)
	}
	psi0 := optim.Psi(x, b, m.Graph())
	psi1 := optim.Psi(rotateBlocks(x, b, qs), b, m.Graph())
	if math.Abs(psi1-psi0) > 1e-10*psi0 {
		t.Errorf("psi changed under a common rotation: %v -> %v", psi0, psi1)
	}
}

func TestDenseMFWorkers(t *testing.T) {
	var x []float64
	var losses []float64
	var grads [][]float64
	pool1, pool2, pool3 := optim.NewPool(1), optim.NewPool(2), optim.NewPool(3)
	defer pool1.Close()
	defer pool2.Close()
	defer pool3.Close()
	for _, p := range []*optim.Pool{nil, pool1, pool2, pool3} {
		r := rand.New(rand.NewPCG(5, 6))
		m := newDenseTest(r, 60, 50, 6, 13, true, 0.1)
		m.Pool = p
		m.prepare()
		if len(m.part) < 3 {
			t.Fatalf("only %d chunks", len(m.part))
		}
		if x == nil {
			x = randVec(r, m.NumParams(), 1)
		}
		g := make([]float64, m.NumParams())
		losses = append(losses, m.LocalLoss(g, x))
		grads = append(grads, g)
	}
	for k := 1; k < len(losses); k++ {
		if math.Float64bits(losses[k]) != math.Float64bits(losses[0]) {
			t.Errorf("loss %d: %v != %v", k, losses[k], losses[0])
		}
		sameBits(t, "grad", grads[k], grads[0])
	}
}

func TestDenseMFGraph(t *testing.T) {
	m := &DenseMF{X: [][]float64{{1}}, Rows: 1, Cols: 1, D: 1, T: 3}
	if m.Graph() != nil {
		t.Errorf("Lambda 0: graph not nil")
	}
	m = &DenseMF{X: [][]float64{{1}}, Rows: 1, Cols: 1, D: 1, T: 3, Lambda: 10}
	if g := m.Graph(); g == nil || len(g.Edges) != 2 || g.Edges[1].W != 10 {
		t.Errorf("chain: got %+v", g)
	}
	c := optim.ChainWeights([]float64{1, 2})
	m = &DenseMF{X: [][]float64{{1}}, Rows: 1, Cols: 1, D: 1, T: 3, Lambda: 10, Coupling: c}
	if m.Graph() != c {
		t.Errorf("explicit coupling not used")
	}
}

func TestDenseMFValidate(t *testing.T) {
	for _, m := range []*DenseMF{
		{X: [][]float64{{1, 2}}, Rows: 1, Cols: 1, D: 1, T: 1},
		{X: [][]float64{{1}, {1}}, Rows: 1, Cols: 1, D: 1, T: 3},
		{X: [][]float64{{math.NaN()}}, Rows: 1, Cols: 1, D: 1, T: 1},
		{X: [][]float64{{1}}, Rows: 1, Cols: 1, D: 0, T: 1},
		{X: [][]float64{{1}}, Rows: 1, Cols: 1, D: 1, T: 1, Gamma: -1},
		{X: [][]float64{{1}}, Rows: 1, Cols: 1, D: 1, T: 2, Coupling: optim.Chain(3, 1)},
	} {
		if err := m.Validate(); err == nil {
			t.Errorf("%+v: no error", m)
		}
	}
}

func TestDenseMFZeroAlloc(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	m := newDenseTest(rng, 10, 10, 3, 30, false, 0)
	x := randVec(rng, m.NumParams(), 0.1)
	g := make([]float64, len(x))
	m.LocalLoss(g, x)
	if a := testing.AllocsPerRun(10, func() { m.LocalLoss(g, x) }); a != 0 {
		t.Errorf("%v allocs per call", a)
	}
}

func TestDenseMFInit(t *testing.T) {
	m := &DenseMF{X: [][]float64{Artificial(1, 10, 10, 3, 1e-3)}, Rows: 10, Cols: 10, D: 3, T: 30}
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(9, 9)))
	var sq float64
	for _, v := range x {
		sq += v * v
	}
	if sd := math.Sqrt(sq / float64(len(x))); math.Abs(sd-DefaultInitStd) > 0.01 {
		t.Errorf("init std %v, want about %v", sd, DefaultInitStd)
	}
	b := m.Blocks()
	if b.Block(x, 0)[0] == b.Block(x, 1)[0] {
		t.Errorf("time steps initialised identically")
	}
}
