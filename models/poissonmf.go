package models

import (
	"errors"
	"fmt"
	"math"

	"goldstone/optim"
)

// PoissonSettings are the settings of the Poisson likelihood for implicit
// counts (PoissonMF), the choice likelihood = "poisson". It has no options
// of its own.
type PoissonSettings struct{}

// Labels implements the pipeline's likelihood choice: the counts are the
// ratings' values.
func (PoissonSettings) Labels() Labels { return Explicit }

// New builds the model on spec.
func (PoissonSettings) New(spec RatingsSpec) RatingsModel { return NewPoissonMF(spec) }

// PoissonMF is sparse dynamic matrix factorisation of implicit counts (play
// counts, clicks) with a Poisson likelihood on the SparseMF core (offsets
// withMean): count y of user i for item j in bin t has the rate
//
//	mu = softplus(eta),  eta = u_{t,i}.v_{t,j} + a_i + b_j + c_t + m,
//
// and l = sum_{(t,i,j,y) in Train} [mu - y log mu] + the core's prior (the
// constant log y! of the data is left out of the training loss, not out of
// the held-out ll). The softplus rate, rather than the canonical exp, keeps
// dl/deta = sigmoid(eta) (1 - y/mu) within max(1, y) in size, so a
// learning rate that suits the other likelihoods does not overflow it.
// Counts are the ratings' values, finite and >= 0 (a non-integer value is
// read as the count it stands for: the loss and the deviance are defined
// for it, and log y! is log Gamma(y+1)). The intercept m starts at
// softplus^-1 of the mean training count (at least 1e-3).
type PoissonMF struct {
	SparseMF
}

// NewPoissonMF is the Poisson likelihood on the core of spec.
func NewPoissonMF(spec RatingsSpec) *PoissonMF {
	return bind(&PoissonMF{SparseMF: SparseMF{RatingsSpec: spec}})
}

var _ RatingsModel = (*PoissonMF)(nil)

func (m *PoissonMF) info() linkInfo {
	return linkInfo{name: "poissonmf", labels: Explicit, offsets: withMean, intercept: poissonIntercept}
}

func (m *PoissonMF) check(train *Ratings) error {
	if !train.Has(Explicit) {
		return errors.New("the training ratings have no values (the counts; binarized data?)")
	}
	for k, v := range train.Value {
		if v < 0 {
			return fmt.Errorf("training rating %d: count %v, want >= 0", k, v)
		}
	}
	return nil
}

// poissonIntercept is softplus^-1(max(mean count, 1e-3)) = c + log(1 - e^-c).
func poissonIntercept(r *Ratings) float64 {
	c := max(meanValue(r), 1e-3)
	return c + optim.Log1p(-optim.Exp(-c))
}

// softplusSigmoid returns softplus(eta) = log(1 + e^eta) and
// sigmoid(eta) = 1/(1 + e^-eta) with one exp.
func softplusSigmoid(eta float64) (sp, sig float64) {
	a := math.Abs(eta)
	ex := optim.Exp(-a)
	sp = max(eta, 0) + optim.Log1p(ex)
	if eta >= 0 {
		return sp, 1 / (1 + ex)
	}
	return sp, ex / (1 + ex)
}

// poissonTerm is mu - y log mu, the loss of count y at rate mu without
// log y! (mu alone for y = 0, whatever mu).
func poissonTerm(mu, y float64) float64 {
	if y == 0 {
		return mu
	}
	return mu - float64(y*optim.Log(mu))
}

// group sums mu - y log mu and sets dl/deta = sigmoid(eta) (1 - y/mu).
func (m *PoissonMF) group(acc *linkSum, eta, y, cf []float64, scale float64) {
	lik := acc.a
	for b, s := range eta {
		mu, sig := softplusSigmoid(s)
		lik += poissonTerm(mu, y[b])
		g := sig
		if y[b] != 0 {
			g = sig * (1 - y[b]/mu)
		}
		cf[b] = scale * g
	}
	acc.a = lik
	acc.kept += len(eta)
}

func (m *PoissonMF) blockLoss(acc *linkSum) float64 { return acc.a }

// HeldOut implements RatingsModel: ll (the mean Poisson log-likelihood per
// count, log y! included) and deviance (the mean Poisson deviance
// 2 [y log(y/mu) - (y - mu)] per count: 0 for a perfect fit); both take
// one pass, so all makes no difference.
func (m *PoissonMF) HeldOut(x []float64, r *Ratings, _ bool) ([]Metric, error) {
	return poissonHeldOut(m, x, r)
}

// HeldOut32 is HeldOut on float32 parameters: the metrics of the widened
// parameters, bit for bit, without a widened copy.
func (m *PoissonMF) HeldOut32(x []float32, r *Ratings, _ bool) ([]Metric, error) {
	return poissonHeldOut(m, x, r)
}

func poissonHeldOut[F optim.Float](m *PoissonMF, x []F, r *Ratings) ([]Metric, error) {
	if err := heldOutCheck(&m.SparseMF, x, r); err != nil {
		return nil, err
	}
	var p poissonMetrics
	for k := range r.Len() {
		mu, _ := softplusSigmoid(predictOf(&m.SparseMF, x, r, k))
		p.add(mu, float64(r.Value[k]))
	}
	return p.metrics(), nil
}

// Baseline implements RatingsModel: the mean training count (at least
// 1e-3) predicting every count of test (ll and deviance as in HeldOut).
func (m *PoissonMF) Baseline(test *Ratings) []Metric {
	mu := max(meanValue(m.Train), 1e-3)
	var p poissonMetrics
	for _, v := range test.Value {
		p.add(mu, float64(v))
	}
	return p.metrics()
}

// poissonMetrics sums the held-out terms of counts in order.
type poissonMetrics struct {
	ll, dev float64
	n       int
}

func (p *poissonMetrics) add(mu, y float64) {
	p.ll -= poissonTerm(mu, y) + logGamma1p(y)
	d := mu - y // y log(y/mu) - (y - mu), 0 log 0 = 0
	if y != 0 {
		d += float64(y * (optim.Log(y) - optim.Log(mu)))
	}
	p.dev += 2 * d
	p.n++
}

// metrics are ll and deviance per count (NaN for none).
func (p *poissonMetrics) metrics() []Metric {
	if p.n == 0 {
		return []Metric{{"ll", math.NaN()}, {"deviance", math.NaN()}}
	}
	n := float64(p.n)
	return []Metric{{"ll", p.ll / n}, {"deviance", p.dev / n}}
}

// logGamma1p returns log Gamma(y+1) = log y! for y >= 0 with optim's log
// (the same bits on every build): the recurrence log Gamma(z) =
// log Gamma(z+n) - log(z (z+1) ... (z+n-1)) up to z >= 16, then Stirling's
// series to z^-7 (relative error below 1e-14). 0 and 1 give 0 exactly.
func logGamma1p(y float64) float64 {
	if y == 0 || y == 1 {
		return 0
	}
	z, prod := y+1, 1.0
	for z < 16 {
		prod *= z
		z++
	}
	iz := 1 / z
	iz2 := iz * iz
	// 1/(12z) - 1/(360z^3) + 1/(1260z^5) - 1/(1680z^7), Horner in 1/z^2.
	series := float64(iz * (1.0/12 - float64(iz2*(1.0/360-float64(iz2*(1.0/1260-float64(iz2/1680)))))))
	stirling := float64((z-0.5)*optim.Log(z)) - z + float64(0.5*optim.Log(2*math.Pi)) + series
	return stirling - optim.Log(prod)
}

// Selection implements Selecting: the held-out Poisson deviance, lower better.
func (m *PoissonMF) Selection() (string, bool) { return "deviance", true }
