package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

// userItemRatings draws ratings whose sign depends on the user and the item:
// p(+1) = sigmoid(0.3 + a_i + b_j) with a_i, b_j ~ N(0, 1).
func userItemRatings(seed uint64, n, users, items int) (*Ratings, []float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	a, b := make([]float64, users), make([]float64, items)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	for j := range b {
		b[j] = rng.NormFloat64()
	}
	r := &Ratings{}
	for range n {
		i, j := rng.IntN(users), rng.IntN(items)
		x := int8(-1)
		if rng.Float64() < sigmoid(0.3+a[i]+b[j]) {
			x = 1
		}
		r.Append(0, int32(i), int32(j), x)
	}
	return r, a, b
}

// TestFitBiases: the fit meets the MAP optimality conditions (every
// gradient of likelihood + prior is 0), recovers the generating biases
// roughly, and on held-out ratings the user + item model beats the item
// model, which beats the base rate; with a huge prior it is the base rate.
func TestFitBiases(t *testing.T) {
	const users, items, gamma = 40, 30, 1.0
	train, a, _ := userItemRatings(1, 6000, users, items)
	test, _, _ := userItemRatings(1, 0, users, items) // same biases
	rng := rand.New(rand.NewPCG(9, 9))
	_, a2, b2 := userItemRatings(1, 0, users, items)
	for range 4000 { // held-out ratings from the same biases
		i, j := rng.IntN(users), rng.IntN(items)
		x := int8(-1)
		if rng.Float64() < sigmoid(0.3+a2[i]+b2[j]) {
			x = 1
		}
		test.Append(0, int32(i), int32(j), x)
	}
	ui, err := FitBiases(train, users, items, gamma)
	if err != nil {
		t.Fatal(err)
	}
	// Optimality: d/dv [sum softplus(-x s) + gamma/2 v^2] = 0 for every bias.
	gc, gu, gi := 0.0, make([]float64, users), make([]float64, items)
	for k := range train.X {
		i, j, x := train.User[k], train.Item[k], float64(train.X[k])
		c := -x * sigmoid(-x*(ui.C+ui.User[i]+ui.Item[j]))
		gc += c
		gu[i] += c
		gi[j] += c
	}
	worst := math.Abs(gc)
	for i := range gu {
		worst = max(worst, math.Abs(gu[i]+gamma*ui.User[i]))
	}
	for j := range gi {
		worst = max(worst, math.Abs(gi[j]+gamma*ui.Item[j]))
	}
	if worst > 1e-8 {
		t.Errorf("largest gradient at the fit %g, want 0", worst)
	}
	var num, den float64
	for i := range a {
		num += ui.User[i] * a[i]
		den += a[i] * a[i]
	}
	if r := num / den; r < 0.5 {
		t.Errorf("user biases barely follow the truth: regression slope %.2f", r)
	}
	it, err := FitBiases(train, 0, items, gamma)
	if err != nil {
		t.Fatal(err)
	}
	if it.User != nil {
		t.Fatal("users = 0 fitted user biases")
	}
	base := BaseRate(train, test).LogLik
	li, lui := it.Evaluate(test).LogLik, ui.Evaluate(test).LogLik
	t.Logf("held-out log-lik: base %.4f, item %.4f, user+item %.4f", base, li, lui)
	if !(lui > li+0.02 && li > base+0.02) {
		t.Errorf("held-out log-lik base %.4f, item %.4f, user+item %.4f: want each clearly better", base, li, lui)
	}
	huge, err := FitBiases(train, users, items, 1e12)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(huge.Evaluate(test).LogLik - base); d > 1e-8 {
		t.Errorf("gamma = 1e12: log-lik differs from the base rate by %g", d)
	}
	if _, err := FitBiases(&Ratings{}, users, items, 1); err == nil {
		t.Error("no ratings: no error")
	}
}
