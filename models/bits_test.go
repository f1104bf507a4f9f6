package models

import (
	"math/rand/v2"
	"slices"
	"testing"

	"goldstone/internal/bitscheck"
	"goldstone/optim"
)

// detRatings draws n ratings with rand's exact integer and Float64 draws
// (Zipf and NormFloat64 call math.Exp and math.Log, whose bits depend on the
// build).
func detRatings(rng *rand.Rand, n, users, items, bins int) *Ratings {
	r := &Ratings{}
	for range n {
		x := int8(-1)
		if rng.Float64() < 0.55 {
			x = 1
		}
		r.Append(int32(rng.IntN(bins)), int32(rng.IntN(users)), int32(rng.IntN(items)), x)
	}
	return r
}

// TestBits records what models computes, bit for bit, against
// testdata/models.bits.json: the artificial data and L*, the dense and
// logistic MF losses and gradients (the logistic one on the FMA kernels
// where the CPU has them, on their Go twins under -tags purego and
// elsewhere), initialisation, short training runs with Goldstone-GD on 2
// workers, the evaluation metrics and the planted-vector distance.
// .ci/run runs it under every build.
func TestBits(t *testing.T) {
	var v bitscheck.Values
	x := Artificial(7, 10, 10, 3, 1e-3)
	v.Add("Artificial", x...)
	v.Add("Artificial", OptimalLoss(x, 10, 10, 3, 30), OptimalLoss(x[:60], 6, 10, 2, 5))
	pool := optim.NewPool(2)
	defer pool.Close()

	dm := &DenseMF{X: [][]float64{x}, Rows: 10, Cols: 10, D: 3, T: 6, Lambda: 10, Gamma: 0.01, Pool: pool}
	if err := dm.Validate(); err != nil {
		t.Fatal(err)
	}
	p := make([]float64, dm.NumParams())
	dm.Init(p, rand.New(rand.NewPCG(1, 1)))
	v.Add("DenseMF", p...)
	g := make([]float64, len(p))
	v.Add("DenseMF", dm.LocalLoss(g, p))
	v.Add("DenseMF", g...)

	rng := rand.New(rand.NewPCG(2, 2))
	for _, c := range []struct {
		name  string
		d     int
		bias  bool
		batch int
	}{{"d=5", 5, false, 0}, {"d=12 bias minibatch", 12, true, 300}} {
		m := NewLogisticMF(RatingsSpec{Train: detRatings(rng, 2000, 40, 30, 4), Users: 40, Items: 30, D: c.d, T: 4,
			Lambda: 2, Gamma: 0.5, MinibatchSize: c.batch, Seed: 9, Pool: pool}, c.bias)
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		name := "LogisticMF " + c.name
		p := make([]float64, m.NumParams())
		m.Init(p, rand.New(rand.NewPCG(3, 3)))
		v.Add(name, p...)
		g := make([]float64, len(p))
		v.Add(name, m.LocalLoss(g, p))
		v.Add(name, g...)
		drv := &optim.Driver{Method: &optim.AdaGrad{Rate: optim.Constant(0.3)}, Gauge: &optim.Goldstone{Pool: pool}, K1: 5, Pool: pool}
		_, err := drv.Run(m.Problem(), p, 20, func(it *optim.Iter) error {
			v.Add(name, it.Loss, it.Psi)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		v.Add(name, p...)
		test := detRatings(rng, 500, 40, 30, 4)
		met, err := m.Evaluate(p, test)
		if err != nil {
			t.Fatal(err)
		}
		base := BaseRate(m.Train, test)
		v.Add(name, met.LogLik, met.Accuracy, met.AUC, base.LogLik, base.Accuracy, base.AUC)
		b := m.Blocks()
		truth := slices.Clone(p[:b.Len()])
		for i := range truth {
			truth[i] += float64(0.1 * (2*rng.Float64() - 1))
		}
		pd := PlantedDistance(p[:b.Len()], truth, b)
		v.Add(name, pd.R...)
		v.Add(name, pd.RelErr, pd.MeanCos)
	}
	v.Add("AUC", AUC([]float64{0.3, 0.9, 0.5}, []float64{0.1, 0.5, 0.7}))
	bitscheck.Check(t, "models", &v)
}
