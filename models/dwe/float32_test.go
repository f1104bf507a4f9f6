package dwe

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"goldstone/internal/bitscheck"
	"goldstone/optim"
)

// narrow32 rounds x to float32.
func narrow32(x []float64) []float32 {
	n := make([]float32, len(x))
	for i, v := range x {
		n[i] = float32(v)
	}
	return n
}

// TestFloat32Gradient checks the float32 mode's local loss and gradient
// (full batch with the default tile and 5 x 5 tiles, a minibatch; V = 37,
// not a multiple of the tiles) two ways:
//   - against the float64 mode at the same point (the float32 values
//     widened; the float64 gradient is checked against finite differences
//     in TestMAPGradient): the loss within 1e-8 relative and every gradient
//     entry within 2e-6 of the largest (float32 products, sums and
//     element-wise maths; measured at most 4.8e-9 and 1.6e-7);
//   - against central differences of the float32 loss itself: steps h =
//     2^-7 on the float32 parameters (exact in float32 at |x| < 2), divided
//     by the exact distance (the loss in float64 from the float32 point),
//     within 2e-5 of the largest gradient entry (measured at most 9.3e-6:
//     the truncation error of h^2 and the float32 roundings of x = U C^T
//     and of each pair's softplus, which the difference of two losses
//     divided by 2h magnifies; 1.7e-6 with the element-wise work in
//     float64).
//
// Both fail on a wrong gradient: a missing or transposed product, a wrong
// scale or a lost positive term is off by O(1) of the largest entry.
func TestFloat32Gradient(t *testing.T) {
	c := smallCounts(t, 1, 37, 3, 6)
	for _, tc := range []struct {
		name   string
		tile   int
		nw, nc int
	}{{"exact", 0, 0, 0}, {"exact-tile5", 5, 0, 0}, {"minibatch", 4, 11, 17}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMAP(c, Config{Dim: 4, Tile: tc.tile, InitStd: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(2, 2))
			x32 := make([]float32, m.NumParams())
			m.Init32(x32, rng)
			m.Resample(rng, tc.nw, tc.nc)
			g32 := make([]float32, len(x32))
			for i := range g32 {
				g32[i] = float32(math.NaN()) // LocalLoss32 overwrites it
			}
			l32 := m.LocalLoss32(g32, x32)
			x64 := Widen(x32)
			g64 := make([]float64, len(x64))
			l64 := m.LocalLoss(g64, x64)
			var gmax, gerr float64
			for _, v := range g64 {
				gmax = max(gmax, math.Abs(v))
			}
			for i := range g32 {
				gerr = max(gerr, math.Abs(float64(g32[i])-g64[i])/gmax)
				if !(gerr <= 2e-6) {
					t.Fatalf("grad[%d] = %v, float64 mode %v (largest entry %v)", i, g32[i], g64[i], gmax)
				}
			}
			lerr := math.Abs(l32-l64) / math.Abs(l64)
			if !(lerr <= 1e-8) {
				t.Errorf("loss %v, float64 mode %v", l32, l64)
			}
			const h = 1.0 / 128
			var fderr float64
			for _, i := range pickIdx(rng, 0, len(x32), 300) {
				old := x32[i]
				x32[i] = old + h
				fp, xp := m.NegLogLik32(x32), float64(x32[i])
				x32[i] = old - h
				fm, xm := m.NegLogLik32(x32), float64(x32[i])
				x32[i] = old
				prior := 0.5 * (xp*xp - xm*xm) / m.cfg.Sigma0Sq
				fd := (fp - fm + prior) / (xp - xm)
				fderr = max(fderr, math.Abs(fd-float64(g32[i]))/gmax)
				if !(fderr <= 2e-5) {
					t.Fatalf("d/dx[%d]: float32 gradient %v, finite difference %v (largest entry %v)", i, g32[i], fd, gmax)
				}
			}
			t.Logf("loss rel err %.2g, gradient err %.2g, finite differences %.2g (of the largest entry %.3g)", lerr, gerr, fderr, gmax)
		})
	}
}

// train32 trains the float32 MAP model of c at dimension d for steps steps
// (the first half on minibatches of nb x nb) and returns x and the
// iterations' losses and psi.
func train32(t *testing.T, c *Counts, d, steps, nb int, pool *optim.Pool) ([]float32, []float64) {
	t.Helper()
	m, err := NewMAP(c, Config{Dim: d, Tile: 16, Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, m.NumParams())
	m.Init32(x, rand.New(rand.NewPCG(3, 3)))
	var trace []float64
	tr := &Trainer{Model: m, Pool: pool, Steps: steps, MinibatchSteps: steps / 2, BatchWords: nb, Seed: 5}
	if err := tr.Run32(context.Background(), x, func(it *Iter) error {
		trace = append(trace, it.Loss, it.Psi)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return x, trace
}

// TestFloat32Workers checks that a float32 training run (minibatch and
// full-batch steps) gives the same bits inline and on 1, 2 and 3 workers.
func TestFloat32Workers(t *testing.T) {
	c := smallCounts(t, 31, 70, 5, 8)
	var x0 []float32
	var tr0 []float64
	for k, w := range []int{-1, 1, 2, 3} {
		var pool *optim.Pool
		if w > 0 {
			pool = optim.NewPool(w)
			defer pool.Close()
		}
		x, tr := train32(t, c, 5, 12, 30, pool)
		if k == 0 {
			x0, tr0 = x, tr
			continue
		}
		if !slices.Equal(x, x0) || !slices.Equal(tr, tr0) {
			t.Fatalf("%d workers: x or the losses differ from the inline run", w)
		}
	}
}

// TestFloat32Kernels checks that the float32 likelihood gives the same
// bits on every kernel path this CPU has (the float32 tile products' Go
// twin, AVX2, AVX-512; the float32 element-wise work's Go twin, AVX2 and
// AVX-512 kernels): what .ci/samebits.sh checks across builds through
// TestBits32, within one.
func TestFloat32Kernels(t *testing.T) {
	c := smallCounts(t, 7, 45, 2, 6)
	m, err := NewMAP(c, Config{Dim: 13, Tile: 16})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, m.NumParams())
	m.Init32(x, rand.New(rand.NewPCG(8, 8)))
	g0 := make([]float32, len(x))
	l0 := m.LocalLoss32(g0, x)
	e2, e5 := useElem32AVX2, useElem32AVX512
	defer func() { useElem32AVX2, useElem32AVX512 = e2, e5 }()
	for _, e := range []struct{ avx2, avx512 bool }{{false, false}, {e2, false}, {e2, e5}} {
		useElem32AVX2, useElem32AVX512 = e.avx2, e.avx512
		withGemm32(t, func(path string) {
			g := make([]float32, len(x))
			l := m.LocalLoss32(g, x)
			if math.Float64bits(l) != math.Float64bits(l0) || !slices.Equal(g, g0) {
				t.Fatalf("tile products %s, elem %+v: loss %v (want %v) or gradient differs", path, e, l, l0)
			}
		})
	}
}

// TestFloat32MatchesFloat64 trains the same model from the same (float32)
// start in both modes, 300 Adam steps (150 on minibatches, then full
// batches), and bounds how far the float32 run drifts: the loss at every
// step within 2e-5 relative of the float64 run's (measured 1.1e-6), psi at
// the end within 2e-2 relative (measured 1.4e-3; psi is small, 0.095, and
// Adam's normalised steps carry the float32 roundings of the small
// gradient entries into x), and the final parameters within 3e-2 of the
// largest entry (measured 2.6e-3).
func TestFloat32MatchesFloat64(t *testing.T) {
	c := smallCounts(t, 41, 60, 4, 8)
	const d, steps, nb = 6, 300, 25
	x32, tr32 := train32(t, c, d, steps, nb, nil)
	m, err := NewMAP(c, Config{Dim: d, Tile: 16})
	if err != nil {
		t.Fatal(err)
	}
	x0 := make([]float32, m.NumParams())
	m.Init32(x0, rand.New(rand.NewPCG(3, 3)))
	x64 := Widen(x0)
	var tr64 []float64
	tr := &Trainer{Model: m, Steps: steps, MinibatchSteps: steps / 2, BatchWords: nb, Seed: 5}
	if err := tr.Run(context.Background(), x64, func(it *Iter) error {
		tr64 = append(tr64, it.Loss, it.Psi)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var lossErr float64
	for s := 0; s < steps; s++ {
		lossErr = max(lossErr, math.Abs(tr32[2*s]-tr64[2*s])/math.Abs(tr64[2*s]))
	}
	psiErr := math.Abs(tr32[2*steps-1]-tr64[2*steps-1]) / math.Abs(tr64[2*steps-1])
	var xmax, xerr float64
	for i, v := range x64 {
		xmax = max(xmax, math.Abs(v))
		xerr = max(xerr, math.Abs(float64(x32[i])-v))
	}
	xerr /= xmax
	t.Logf("loss %v / %v; worst loss rel err %.2g, final psi rel err %.2g (psi %v), x err %.2g of the largest entry %v",
		tr32[2*steps-2], tr64[2*steps-2], lossErr, psiErr, tr64[2*steps-1], xerr, xmax)
	if !(lossErr <= 2e-5) || !(psiErr <= 2e-2) || !(xerr <= 3e-2) {
		t.Errorf("the float32 run drifted from the float64 run: loss %.2g, psi %.2g, x %.2g", lossErr, psiErr, xerr)
	}
	if tr64[2*steps-2] > 0.9*tr64[0] {
		t.Errorf("the run did not train: loss %v -> %v", tr64[0], tr64[2*steps-2])
	}
}

// gauge64 is a gauge step with no float32 rounds (it hides Round32).
type gauge64 struct{ optim.Gauge }

// TestRun32Gauge: Run32 runs the float32 gauge rounds (Goldstone-GD and
// Procrustes) after every K1 steps, through the minibatch and full-batch
// phases, with the same bits inline and on 2 workers.
func TestRun32Gauge(t *testing.T) {
	c := smallCounts(t, 31, 70, 5, 8)
	for _, mk := range []func() optim.Gauge{
		func() optim.Gauge { return &optim.Goldstone{Rate: 0.01, K2: 5} },
		func() optim.Gauge { return &optim.Procrustes{} },
	} {
		var ref []float32
		for _, w := range []int{0, 2} {
			var pool *optim.Pool
			if w > 0 {
				pool = optim.NewPool(w)
				defer pool.Close()
			}
			m, err := NewMAP(c, Config{Dim: 5, Tile: 16, Pool: pool})
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float32, m.NumParams())
			m.Init32(x, rand.New(rand.NewPCG(3, 3)))
			g := mk()
			rounds := 0
			tr := &Trainer{Model: m, Pool: pool, Steps: 12, MinibatchSteps: 6, BatchWords: 30, Seed: 5, Gauge: g, K1: 3}
			if err := tr.Run32(context.Background(), x, func(it *Iter) error {
				if it.Gauge != nil {
					rounds++
				}
				if math.IsNaN(it.Loss) || math.IsInf(it.Loss, 0) {
					t.Fatalf("%T: step %d: loss %v", g, it.Step, it.Loss)
				}
				return nil
			}); err != nil {
				t.Fatalf("%T: %v", g, err)
			}
			if rounds != 4 {
				t.Fatalf("%T: %d gauge rounds in 12 steps with K1 3, want 4", g, rounds)
			}
			if ref == nil {
				ref = x
			} else if !slices.Equal(x, ref) {
				t.Fatalf("%T: other bits on %d workers", g, w)
			}
		}
	}
}

// TestRun32Refuses checks Run32's setup errors.
func TestRun32Refuses(t *testing.T) {
	c := smallCounts(t, 1, 10, 2, 3)
	m, err := NewMAP(c, Config{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVariational(c, Config{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, m.NumParams())
	for _, tr := range []*Trainer{
		{Model: m, Gauge: gauge64{&optim.Goldstone{}}, K1: 2, Steps: 3},
		{Model: v, Steps: 3},
	} {
		if err := tr.Run32(context.Background(), x, nil); err == nil {
			t.Errorf("Run32 of %T with gauge %v: no error", tr.Model, tr.Gauge)
		}
	}
}

// TestBits32 records the float32 mode bit for bit against
// testdata/dwe-float32.bits.json (TestBits has the float64 mode's): MAP
// training in float32 on planted and random counts (minibatch and
// full-batch steps; the float32 tile products on their AVX-512/AVX2
// kernels or their Go twin, the element-wise work on AVX2 or in Go), its
// losses and psi, the final x and the float32 likelihood. .ci/samebits.sh
// runs it under every build.
func TestBits32(t *testing.T) {
	var v bitscheck.Values
	pool := optim.NewPool(2)
	defer pool.Close()
	c, _, err := Planted{V: 30, T: 4, Dim: 3}.Generate(rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	rc := RandomCounts(rand.New(rand.NewPCG(2, 2)), 40, 3, 6)
	for _, tc := range []struct {
		name string
		c    *Counts
		d    int
	}{{"planted d=3", c, 3}, {"random d=10", rc, 10}, {"random d=37", rc, 37}} {
		g := "MAP32 " + tc.name
		x, trace := train32(t, tc.c, tc.d, 16, 10, pool)
		v.Add(g, trace...)
		v.Add(g, Widen(x)...)
		m, err := NewMAP(tc.c, Config{Dim: tc.d, Tile: 16, Pool: pool})
		if err != nil {
			t.Fatal(err)
		}
		v.Add(g, m.NegLogLik32(x))
		grad := make([]float32, len(x))
		v.Add(g, m.LocalLoss32(grad, x))
		v.Add(g, Widen(grad)...)
	}
	bitscheck.Check(t, "dwe-float32", &v)
}
