package dwe

import (
	"context"
	"math/rand/v2"
	"testing"

	"goldstone/internal/bitscheck"
	"goldstone/optim"
)

// TestBits records what dwe computes, bit for bit, against
// testdata/dwe.bits.json: planted and random counts, the exact step
// likelihood, MAP and variational training with Goldstone-GD (the tile
// products on optim's FMA kernels where the CPU has them, on their Go
// twins under -tags purego and elsewhere; the inline exp and log), and the
// evaluation. .ci/run runs it under every build.
func TestBits(t *testing.T) {
	var v bitscheck.Values
	pool := optim.NewPool(2)
	defer pool.Close()
	c, truth, err := Planted{V: 30, T: 4, Dim: 3}.Generate(rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Steps {
		v.Add("Planted", st.Pos...)
	}
	v.Add("Planted", truth...)
	rc := RandomCounts(rand.New(rand.NewPCG(2, 2)), 40, 3, 6)
	for _, st := range rc.Steps {
		v.Add("RandomCounts", st.Pos...)
		v.Add("RandomCounts", st.NegA...)
		v.Add("RandomCounts", st.NegB...)
	}
	for _, tc := range []struct {
		name string
		c    *Counts
		d    int
	}{{"planted d=3", c, 3}, {"random d=10", rc, 10}} {
		cfg := Config{Dim: tc.d, Tile: 16, Pool: pool}
		mp, err := NewMAP(tc.c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, mp.NumParams())
		mp.Init(x, rand.New(rand.NewPCG(3, 3)))
		g := "MAP " + tc.name
		v.Add(g, x...)
		tr := &Trainer{Model: mp, Gauge: &optim.Goldstone{Pool: pool}, K1: 4, Pool: pool, Steps: 16,
			MinibatchSteps: 8, BatchWords: 10, BatchContexts: 12, Seed: 5}
		if err := tr.Run(context.Background(), x, func(it *Iter) error { v.Add(g, it.Loss, it.Psi); return nil }); err != nil {
			t.Fatal(err)
		}
		v.Add(g, x...)
		b := mp.Blocks()
		vd := tc.c.V * tc.d
		v.Add(g, StepNegLogLik(x[:vd], x[vd:2*vd], &tc.c.Steps[0], tc.c.V, tc.d, pool))
		ll, err := PredictiveLogLik(x, b, tc.c.Times, tc.c, pool)
		if err != nil {
			t.Fatal(err)
		}
		v.Add(g, ll)
		v.Add(g, FirstLastCosines(x, b)...)

		vm, err := NewVariational(tc.c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float64, vm.NumParams())
		vm.Init(y, rand.New(rand.NewPCG(4, 4)))
		g = "Variational " + tc.name
		tr = &Trainer{Model: vm, Gauge: &optim.Goldstone{Pool: pool}, K1: 4, Pool: pool, Steps: 12, Seed: 6}
		if err := tr.Run(context.Background(), y, func(it *Iter) error { v.Add(g, it.Loss, it.Psi); return nil }); err != nil {
			t.Fatal(err)
		}
		v.Add(g, y...)
	}
	bitscheck.Check(t, "dwe", &v)
}
