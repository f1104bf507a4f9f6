package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"goldstone/optim"
)

// TestLogisticMFBiasValue: one rating, D = 1: s = u v + b_item + c_bin + a_user.
func TestLogisticMFBiasValue(t *testing.T) {
	train := &Ratings{}
	train.Append(1, 1, 1, 1) // bin 1, user 1, item 1, x = +1
	m := NewLogisticMF(RatingsSpec{Train: train, Users: 2, Items: 2, D: 1, T: 2, Gamma: 0}, true)
	// blocks: bin 0 (u0, u1, v0, v1), bin 1 (u0, u1, v0, v1); biases b0, b1, c0, c1, a0, a1.
	x := []float64{0, 0, 0, 0, 0, 0.5, 0, 2, 0, 0.25, 0, -1, 3, 0.5}
	g := make([]float64, len(x))
	s := 0.5*2 + 0.25 - 1 + 0.5 // 0.75
	want := math.Log1p(math.Exp(-s))
	if got := m.LocalLoss(g, x); math.Abs(got-want) > 1e-15 {
		t.Errorf("loss %v, want %v", got, want)
	}
	c := -1 / (1 + math.Exp(s)) // dl/ds
	for k, w := range []float64{0, c, 0, c, 0, c} {
		if math.Abs(g[8+k]-w) > 1e-15 {
			t.Errorf("bias gradient %v, want %v at item 1, bin 1 and user 1", g[8:], c)
			break
		}
	}
}

// TestLogisticMFBiasUntouchedByGauge: the biases lie outside Blocks(), so a
// Goldstone round rotates the embeddings and leaves them bit for bit.
func TestLogisticMFBiasUntouchedByGauge(t *testing.T) {
	m := newLogisticTest(3, 200, 8, 7, 3, 5)
	m.Bias = true
	x := randVec(rand.New(rand.NewPCG(2, 2)), m.NumParams(), 1)
	before := append([]float64(nil), x...)
	var g optim.Goldstone
	if err := g.Init(m.Blocks(), m.Graph()); err != nil {
		t.Fatal(err)
	}
	st := g.Round(x)
	if st.Rejected || !(st.PsiAfter < st.PsiBefore) {
		t.Fatalf("round did nothing: %+v", st)
	}
	bo := m.BiasOffset()
	sameBits(t, "biases", x[bo:], before[bo:])
	var moved bool
	for i := range x[:bo] {
		moved = moved || x[i] != before[i]
	}
	if !moved {
		t.Fatal("the round did not move the embeddings")
	}
}

// TestLogisticMFBiasBeatsBaseRate: labels with a skewed global rate (75% +1)
// and per-item rates (items 0-4 mostly +1, 5-9 mostly -1 on top of it), no
// low-rank structure. With biases the trained model beats the base-rate
// predictor on held-out ratings (the true rates would give -0.499 against
// the base rate's -0.562; the embeddings' overfitting costs part of that).
func TestLogisticMFBiasBeatsBaseRate(t *testing.T) {
	const users, items, T = 30, 10, 4
	gen := func(seed uint64, n int) *Ratings {
		rng := rand.New(rand.NewPCG(seed, 9))
		r := &Ratings{}
		for range n {
			j := rng.IntN(items)
			p := 0.9
			if j >= 5 {
				p = 0.6
			}
			x := int8(-1)
			if rng.Float64() < p {
				x = 1
			}
			r.Append(int32(rng.IntN(T)), int32(rng.IntN(users)), int32(j), x)
		}
		return r
	}
	train, test := gen(1, 3000), gen(2, 2000)
	m := NewLogisticMF(RatingsSpec{Train: train, Users: users, Items: items, D: 2, T: T, Lambda: 1, Gamma: 1}, true)
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(3, 3)))
	d := optim.Driver{Method: &optim.AdaGrad{Rate: optim.Constant(0.5)}}
	if _, err := d.Run(m.Problem(), x, 1000, nil); err != nil {
		t.Fatal(err)
	}
	got, err := m.Evaluate(x, test)
	if err != nil {
		t.Fatal(err)
	}
	base := BaseRate(train, test)
	if !(got.LogLik > base.LogLik+0.01) {
		t.Errorf("with biases test log-lik %.4f, base rate %.4f: want at least 0.01 better", got.LogLik, base.LogLik)
	}
	nb := NewLogisticMF(RatingsSpec{Train: train, Users: users, Items: items, D: 2, T: T, Lambda: 1, Gamma: 1}, false)
	y := make([]float64, nb.NumParams())
	nb.Init(y, rand.New(rand.NewPCG(3, 3)))
	if _, err := d.Run(nb.Problem(), y, 1000, nil); err != nil {
		t.Fatal(err)
	}
	without, _ := nb.Evaluate(y, test)
	t.Logf("test log-lik: with biases %.4f, without %.4f, base rate %.4f", got.LogLik, without.LogLik, base.LogLik)
}
