package models

import (
	"errors"

	"goldstone/optim"
)

// LogisticSettings are the settings of the paper's binarized logistic
// likelihood (LogisticMF), the choice likelihood = "logistic".
type LogisticSettings struct {
	Bias bool `set:"bias" default:"false" doc:"logistic: add a bias per user, a bias per item and a global bias per time bin to the score (beyond the paper; outside the rotated blocks, so gauge steps do not touch them)"`
}

// Labels implements the pipeline's likelihood choice: binarized ratings.
func (LogisticSettings) Labels() Labels { return Binary }

// New builds the model on spec.
func (s LogisticSettings) New(spec RatingsSpec) RatingsModel {
	return NewLogisticMF(spec, s.Bias)
}

// LogisticMF is sparse dynamic logistic matrix factorisation (model 2 of the
// paper) on the SparseMF core: rating x = +1 or -1 has the score
// s = u_{t,i}.v_{t,j} and
//
//	l = -sum_{(t,i,j,x) in Train} log sigmoid(x s) + Gamma/2 sum_t ||Z_t||_F^2.
//
// With Bias the score adds a bias per item b_j, a global bias per bin c_t
// and a bias per user a_i: s = u_{t,i}.v_{t,j} + (b_j + c_t + a_i) (beyond
// the paper; the core's offsets withBiases, with their prior Gamma/2 inside
// the local loss). They start at 0.
type LogisticMF struct {
	SparseMF
	Bias bool
}

// NewLogisticMF is the logistic likelihood on the core of spec (with biases:
// bias).
func NewLogisticMF(spec RatingsSpec, bias bool) *LogisticMF {
	return bind(&LogisticMF{SparseMF: SparseMF{RatingsSpec: spec}, Bias: bias})
}

var _ RatingsModel = (*LogisticMF)(nil)

func (m *LogisticMF) info() linkInfo {
	off := noOffsets
	if m.Bias {
		off = withBiases
	}
	return linkInfo{name: "logisticmf", labels: Binary, offsets: off}
}

func (m *LogisticMF) check(train *Ratings) error {
	if !train.Has(Binary) {
		return errors.New("the training ratings have no binary labels (x = +1 or -1): binarize them")
	}
	return nil
}

// group: with y = x eta, loss = softplus(-y) and dl/deta = -x sigmoid(-y).
// With a = |y| and ex = e^-a: softplus(-y) = log(1+ex) + max(-y, 0) and
// sigmoid(-y) = (y >= 0 ? ex : 1) / (1+ex). The log terms of a group are
// summed as the log of a product of factors in (1, 2]: the error is a few
// 1e-16 absolute per rating, with one log per group.
func (m *LogisticMF) group(acc *linkSum, eta, x, cf []float64, scale float64) {
	lik, prod := acc.a, 1.0
	for b, s := range eta {
		y := x[b] * s
		a, num, neg := y, 1.0, 0.0
		if y < 0 {
			a, neg = -y, -y
		}
		ex := optim.Exp(-a)
		if y >= 0 {
			num = ex
		}
		opx := 1 + ex
		prod *= opx
		lik += neg
		cf[b] = -x[b] * (num / opx * scale)
	}
	acc.a = lik + optim.Log(prod)
	acc.kept += len(eta)
}

func (m *LogisticMF) blockLoss(acc *linkSum) float64 { return acc.a }

// HeldOut implements RatingsModel: ll (the mean log-likelihood per rating),
// and with all also auc and acc (see Metrics).
func (m *LogisticMF) HeldOut(x []float64, r *Ratings, all bool) ([]Metric, error) {
	return logisticHeldOut(m, x, r, all)
}

// HeldOut32 is HeldOut on float32 parameters: the metrics of the widened
// parameters, bit for bit, without a widened copy.
func (m *LogisticMF) HeldOut32(x []float32, r *Ratings, all bool) ([]Metric, error) {
	return logisticHeldOut(m, x, r, all)
}

func logisticHeldOut[F optim.Float](m *LogisticMF, x []F, r *Ratings, all bool) ([]Metric, error) {
	met, err := evaluateLogistic(m, x, r)
	if err != nil {
		return nil, err
	}
	out := []Metric{{"ll", met.LogLik}}
	if all {
		out = append(out, Metric{"auc", met.AUC}, Metric{"acc", met.Accuracy})
	}
	return out, nil
}

// Baseline implements RatingsModel: the base rate's ll and acc (BaseRate).
func (m *LogisticMF) Baseline(test *Ratings) []Metric {
	b := BaseRate(m.Train, test)
	return []Metric{{"ll", b.LogLik}, {"acc", b.Accuracy}}
}
