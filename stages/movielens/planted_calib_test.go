package movielens

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"goldstone/models"
)

func TestPriorDrift(t *testing.T) {
	// lambda = 10, gamma = 1: phi + 1/phi = 2.1, phi = 0.72984...
	phi := (2.1 - math.Sqrt(2.1*2.1-4)) / 2
	if got, want := PriorDrift(10, 1), math.Sqrt(1-phi*phi); math.Abs(got-want) > 1e-15 || math.Abs(got-0.6836) > 1e-3 {
		t.Errorf("PriorDrift(10, 1) = %v, want %v", got, want)
	}
	// Stronger coupling drifts more slowly.
	if !(PriorDrift(100, 1) < PriorDrift(10, 1)) {
		t.Error("drift does not fall with lambda")
	}
	// The AR(1) it describes has the prior's precision: diagonal
	// (1+phi^2)/tau^2 = gamma + 2 lambda and off-diagonal phi/tau^2 = lambda.
	tau2 := phi / 10
	if d := (1 + phi*phi) / tau2; math.Abs(d-21) > 1e-12 {
		t.Errorf("diagonal precision %v, want 21", d)
	}
	if !math.IsNaN(PriorDrift(10, 0)) || !math.IsNaN(PriorDrift(0, 1)) {
		t.Error("PriorDrift without a stationary scale is not NaN")
	}
}

func TestOracleGain(t *testing.T) {
	if g := OracleGain(0, 10); math.Abs(g) > 1e-9 {
		t.Errorf("no signal: gain %v", g)
	}
	// A huge scale makes every label certain: the gain tends to log 2.
	if g := OracleGain(10, 10); math.Abs(g-math.Ln2) > 1e-2 {
		t.Errorf("certain labels: gain %v, want about log 2", g)
	}
	// D = 1, tiny scale: y = s^2 a b, H(sigmoid(y)) ~ log 2 - y^2/8, so the
	// gain is about s^4 E[(ab)^2] / 8 = s^4 / 8.
	if g, want := OracleGain(0.1, 1), 1e-4/8; math.Abs(g-want) > 0.05*want {
		t.Errorf("small-signal gain %v, want about %v", g, want)
	}
	for _, gain := range []float64{0.01, 0.08, 0.3} {
		s := ScaleForGain(gain, 30)
		if got := OracleGain(s, 30); math.Abs(got-gain) > 1e-8 {
			t.Errorf("ScaleForGain(%v): scale %v gives %v", gain, s, got)
		}
	}
	if !math.IsNaN(ScaleForGain(0.7, 30)) {
		t.Error("a gain above log 2 has a scale")
	}
}

// TestBiasOnlyFit: the fit satisfies the MAP optimality conditions and, with
// much data, recovers the biases that generated the labels.
func TestBiasOnlyFit(t *testing.T) {
	const items, T, per = 40, 5, 2000
	rng := rand.New(rand.NewPCG(3, 4))
	bItem, bBin := make([]float64, items), make([]float64, T)
	for j := range bItem {
		bItem[j] = 1.5 * rng.NormFloat64()
	}
	for t := range bBin {
		bBin[t] = 0.5 * rng.NormFloat64()
	}
	r := &models.Ratings{}
	for j := range items {
		for k := range per {
			tt := k % T
			x := int8(-1)
			if rng.Float64() < 1/(1+math.Exp(-(bItem[j]+bBin[tt]))) {
				x = 1
			}
			r.Append(int32(tt), int32(k%7), int32(j), x)
		}
	}
	const gamma = 1.0
	bi, bb, err := BiasOnlyFit(r, items, T, gamma)
	if err != nil {
		t.Fatal(err)
	}
	// Gradient of the MAP objective at the fit: gamma b - sum x sigmoid(-x s).
	gi, gb := make([]float64, items), make([]float64, T)
	for j := range gi {
		gi[j] = gamma * bi[j]
	}
	for tt := range gb {
		gb[tt] = gamma * bb[tt]
	}
	for k, x := range r.X {
		s := bi[r.Item[k]] + bb[r.T[k]]
		d := -float64(x) / (1 + math.Exp(float64(x)*s))
		gi[r.Item[k]] += d
		gb[r.T[k]] += d
	}
	for _, g := range append(gi, gb...) {
		if math.Abs(g) > 1e-7 {
			t.Fatalf("gradient %v at the fit, want 0", g)
		}
	}
	// Only b_j + c_t is identified from the labels (the prior splits a
	// common shift): compare sums.
	var worst float64
	for j := range items {
		for tt := range T {
			worst = max(worst, math.Abs(bi[j]+bb[tt]-bItem[j]-bBin[tt]))
		}
	}
	if worst > 0.35 {
		t.Errorf("recovered b_j + c_t off by %v", worst)
	}
	truth := BiasOnlyLogLik(r, bItem, bBin)
	if fit := BiasOnlyLogLik(r, bi, bb); !(fit >= truth-1e-3) || fit > 0 {
		t.Errorf("fit log-lik %v, truth's %v", fit, truth)
	}
}

// TestBiasOnlyFitError: a system that is not positive definite to working
// precision (gamma so small that the one item's and the one bin's bias are
// not separately identified) and a bad gamma give an error naming the cause,
// not a panic.
func TestBiasOnlyFitError(t *testing.T) {
	r := &models.Ratings{}
	for k := range 10 {
		r.Append(0, int32(k), 0, int8(1-2*(k%2)))
	}
	if _, _, err := BiasOnlyFit(r, 1, 1, 1e-300); err == nil || !strings.Contains(err.Error(), "Newton iteration 1: the Schur complement") {
		t.Errorf("gamma 1e-300: error %v, want the Schur complement's", err)
	}
	for _, g := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, _, err := BiasOnlyFit(r, 1, 1, g); err == nil || !strings.Contains(err.Error(), "gamma") {
			t.Errorf("gamma %v: error %v, want one naming gamma", g, err)
		}
	}
}
