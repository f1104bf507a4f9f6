package models

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"goldstone/optim"
)

// GaussianSettings are the settings of the Gaussian likelihood for explicit
// ratings (GaussianMF), the choice likelihood = "gaussian".
//
// The noise variance is a setting, not fitted: the dynamic model has more
// parameters than ratings (T (Users+Items) D against one rating per
// (user, item, bin) at most), so its training residual can be driven to 0
// and a jointly fitted MAP sigma^2 collapses towards 0. With sigma^2 fixed
// the held-out log-likelihood is an affine function of the mean squared
// error, the same for every predictor compared with it.
type GaussianSettings struct {
	NoiseVar float64 `set:"rating_noise_var" default:"1" check:">0" doc:"gaussian: variance sigma^2 of the rating noise (fixed, not fitted: it weighs the data against the prior and enters the held-out log-likelihood)"`
}

// Labels implements the pipeline's likelihood choice: explicit ratings.
func (GaussianSettings) Labels() Labels { return Explicit }

// New builds the model on spec.
func (s GaussianSettings) New(spec RatingsSpec) RatingsModel {
	return NewGaussianMF(spec, s.NoiseVar)
}

// GaussianMF is sparse dynamic matrix factorisation of explicit ratings
// with a Gaussian likelihood on the SparseMF core (offsets withMean):
// rating y of user i for item j in bin t has the prediction
//
//	s = u_{t,i}.v_{t,j} + a_i + b_j + c_t + mu
//
// with a bias per user a_i, per item b_j and per bin c_t and a global mean
// mu, and
//
//	l = sum_{(t,i,j,y) in Train} [(y - s)^2 / (2 sigma^2) + log(2 pi sigma^2)/2]
//	    + Gamma/2 (sum_t ||Z_t||_F^2 + ||a||^2 + ||b||^2 + ||c||^2).
//
// The embeddings get the same dynamic prior as LogisticMF's and the same
// symmetry: every term is invariant under a common orthogonal map of the
// columns of a Z_t, so Goldstone-GD and Procrustes apply unchanged. mu has
// a flat prior and starts at the mean training rating, the biases at 0.
// Each rating's coefficient is dl/ds = (s - y)/sigma^2.
type GaussianMF struct {
	SparseMF
	NoiseVar float64 // sigma^2; 0 means 1
}

var _ RatingsModel = (*GaussianMF)(nil)

// NewGaussianMF is the Gaussian likelihood of noise variance noiseVar on the
// core of spec.
func NewGaussianMF(spec RatingsSpec, noiseVar float64) *GaussianMF {
	return bind(&GaussianMF{SparseMF: SparseMF{RatingsSpec: spec}, NoiseVar: noiseVar})
}

func (m *GaussianMF) info() linkInfo {
	return linkInfo{name: "gaussianmf", labels: Explicit, offsets: withMean, intercept: meanValue}
}

func (m *GaussianMF) check(train *Ratings) error {
	if !train.Has(Explicit) {
		return errors.New("the training ratings have no explicit values (binarized data?)")
	}
	if !(m.NoiseVar >= 0) || math.IsInf(m.NoiseVar, 0) {
		return fmt.Errorf("NoiseVar=%v, want finite >= 0", m.NoiseVar)
	}
	return nil
}

func (m *GaussianMF) noiseVar() float64 {
	if m.NoiseVar == 0 {
		return 1
	}
	return m.NoiseVar
}

// meanValue is the mean of r's values (0 without ratings), summed in order.
func meanValue(r *Ratings) float64 {
	if len(r.Value) == 0 {
		return 0
	}
	var s float64
	for _, v := range r.Value {
		s += float64(v)
	}
	return s / float64(len(r.Value))
}

// group sums the squared residuals and sets dl/ds = (s - y)/sigma^2.
func (m *GaussianMF) group(acc *linkSum, eta, y, cf []float64, scale float64) {
	coef := scale / m.noiseVar() // dl/ds = coef (s - y)
	sq := acc.a
	for b, s := range eta {
		r := s - y[b]
		sq += float64(r * r)
		cf[b] = coef * r
	}
	acc.a = sq
	acc.kept += len(eta)
}

func (m *GaussianMF) blockLoss(acc *linkSum) float64 {
	nv := m.noiseVar()
	return float64(acc.a/(2*nv)) + float64(float64(acc.kept)*halfLog2Pi(nv))
}

// halfLog2Pi is log(2 pi v)/2, the normalising term of N(y; s, v).
func halfLog2Pi(v float64) float64 { return float64(0.5 * optim.Log(2*math.Pi*v)) }

// HeldOut implements RatingsModel: ll (the mean Gaussian log-likelihood per
// rating with the model's sigma^2), rmse and mae (root mean squared and mean
// absolute error of the prediction s, not clipped to the rating scale). All
// three take one pass, so all makes no difference.
func (m *GaussianMF) HeldOut(x []float64, r *Ratings, all bool) ([]Metric, error) {
	return gaussianHeldOut(m, x, r)
}

// HeldOut32 is HeldOut on float32 parameters: the metrics of the widened
// parameters, bit for bit, without a widened copy.
func (m *GaussianMF) HeldOut32(x []float32, r *Ratings, all bool) ([]Metric, error) {
	return gaussianHeldOut(m, x, r)
}

func gaussianHeldOut[F optim.Float](m *GaussianMF, x []F, r *Ratings) ([]Metric, error) {
	if err := heldOutCheck(&m.SparseMF, x, r); err != nil {
		return nil, err
	}
	var sq, abs float64
	for k := range r.Len() {
		e := float64(r.Value[k]) - predictOf(&m.SparseMF, x, r, k)
		sq += float64(e * e)
		abs += math.Abs(e)
	}
	return gaussianMetrics(sq, abs, r.Len(), m.noiseVar()), nil
}

// Baseline implements RatingsModel: the global mean of the training
// ratings predicting every rating of test (ll, rmse, mae as in HeldOut).
func (m *GaussianMF) Baseline(test *Ratings) []Metric {
	mean := meanValue(m.Train)
	var sq, abs float64
	for _, v := range test.Value {
		e := float64(v) - mean
		sq += float64(e * e)
		abs += math.Abs(e)
	}
	return gaussianMetrics(sq, abs, len(test.Value), m.noiseVar())
}

// gaussianMetrics are ll, rmse and mae from the sum of squared and of
// absolute residuals of n ratings (NaN for none).
func gaussianMetrics(sq, abs float64, n int, v float64) []Metric {
	if n == 0 {
		return []Metric{{"ll", math.NaN()}, {"rmse", math.NaN()}, {"mae", math.NaN()}}
	}
	mse := sq / float64(n)
	return []Metric{{"ll", -mse/(2*v) - halfLog2Pi(v)}, {"rmse", math.Sqrt(mse)}, {"mae", abs / float64(n)}}
}

// BiasOnly returns the parameters of the bias-only predictor
// s = a_i + b_j + c_t + mu (embeddings 0) that maximise the model's own
// posterior on the training ratings: the MAP of its biases and mu with the
// embeddings fixed at 0. That is a ridge regression, (A'A + D) theta = A'y
// with A the ratings' indicator design and D = Gamma sigma^2 on the biases
// (0 on mu); it is solved by conjugate gradients with the diagonal as
// preconditioner until the residual is below 1e-13 of A'y (at most 1000
// iterations). Serial and in a fixed order: deterministic.
func (m *GaussianMF) BiasOnly() []float64 {
	if err := m.Validate(); err != nil {
		panic(err)
	}
	r := m.Train
	x := make([]float64, m.NumParams())
	if r.Len() == 0 {
		return x
	}
	bo := m.BiasOffset()
	theta := x[bo:] // item biases, bin biases, user biases, mu
	p := len(theta)
	items, bins := m.Items, m.T
	ridge := m.Gamma * m.noiseVar() // prior precision over noise precision
	// apply sets out = (A'A + D) v; ridge as the diagonal's extra on the biases.
	apply := func(out, v []float64) {
		for q := range out[:p-1] {
			out[q] = ridge * v[q]
		}
		out[p-1] = 0
		for k := range r.Len() {
			j, t, i := int(r.Item[k]), items+int(r.T[k]), items+bins+int(r.User[k])
			s := v[j] + v[t] + v[i] + v[p-1]
			out[j] += s
			out[t] += s
			out[i] += s
			out[p-1] += s
		}
	}
	rhs, diag := make([]float64, p), make([]float64, p)
	for q := range diag[:p-1] {
		diag[q] = ridge
	}
	for k := range r.Len() {
		y := float64(r.Value[k])
		for _, q := range [4]int{int(r.Item[k]), items + int(r.T[k]), items + bins + int(r.User[k]), p - 1} {
			rhs[q] += y
			diag[q]++
		}
	}
	// Preconditioned CG from theta = 0.
	res, z, dir, ad := slices.Clone(rhs), make([]float64, p), make([]float64, p), make([]float64, p)
	precond := func() {
		for q, v := range res {
			z[q] = 0
			if diag[q] > 0 {
				z[q] = v / diag[q]
			}
		}
	}
	dot := func(a, b []float64) float64 {
		var s float64
		for q, v := range a {
			s += float64(v * b[q])
		}
		return s
	}
	tol := 1e-13 * math.Sqrt(dot(rhs, rhs))
	precond()
	copy(dir, z)
	rz := dot(res, z)
	for range 1000 {
		if math.Sqrt(dot(res, res)) <= tol || rz == 0 {
			break
		}
		apply(ad, dir)
		alpha := rz / dot(dir, ad)
		for q := range theta {
			theta[q] += float64(alpha * dir[q])
			res[q] -= float64(alpha * ad[q])
		}
		precond()
		next := dot(res, z)
		beta := next / rz
		rz = next
		for q := range dir {
			dir[q] = z[q] + float64(beta*dir[q])
		}
	}
	return x
}

// Selection implements Selecting: the held-out RMSE, lower better.
func (m *GaussianMF) Selection() (string, bool) { return "rmse", true }
