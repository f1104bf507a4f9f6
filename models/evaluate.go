package models

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"goldstone/optim"
)

// Metrics are held-out metrics of a binary rating predictor.
type Metrics struct {
	N        int     // number of held-out ratings
	LogLik   float64 // mean log-likelihood per rating (natural log)
	AUC      float64 // area under the ROC curve, ties counted 1/2; NaN without both classes
	Accuracy float64 // fraction predicted correctly by the sign of the score, a zero score counted 1/2
}

// EvaluateRatings scores held-out ratings with the embeddings in x (laid out
// as b, users first: N = users + items): the score of (t, i, j) is
// s = u_{t,i}.v_{t,j} and p(x) = sigmoid(x s). A user or item without
// training ratings in bin t still has the learned (prior-smoothed) vector of
// that bin. It returns an error naming the first rating out of range.
func EvaluateRatings(x []float64, b optim.Blocks, users int, test *Ratings) (Metrics, error) {
	return evaluateRatings(x, b, users, nil, test)
}

// EvaluateRatingsBias is EvaluateRatings for a model with biases
// (LogisticMF.Bias): x holds, right after the blocks, the Items item biases,
// then the T bin biases, then the Users user biases, and the score of
// (t, i, j) is u_{t,i}.v_{t,j} + b_j + c_t + a_i.
func EvaluateRatingsBias(x []float64, b optim.Blocks, users int, test *Ratings) (Metrics, error) {
	end := b.Offset + b.Len()
	if n := (b.N - users) + b.T + users; len(x) != end+n {
		panic(fmt.Sprintf("models: EvaluateRatingsBias: len(x)=%d, want blocks %+v + %d biases", len(x), b, n))
	}
	return evaluateRatings(x, b, users, x[end:], test)
}

// evaluateRatings scores test; bias is nil or the item biases followed by
// the bin biases and the user biases. On float32 parameters every entry is
// widened to float64 before it is used (a product of two widened float32
// entries is exact), so the scores are those of the widened parameters,
// bit for bit.
func evaluateRatings[F optim.Float](x []F, b optim.Blocks, users int, bias []F, test *Ratings) (Metrics, error) {
	if len(x) < b.Offset+b.Len() || users <= 0 || users >= b.N {
		panic(fmt.Sprintf("models: EvaluateRatings: len(x)=%d blocks=%+v users=%d", len(x), b, users))
	}
	items := b.N - users
	if err := test.Validate(b.T, users, b.N-users); err != nil {
		return Metrics{}, fmt.Errorf("evaluate: %w", err)
	}
	if !test.Has(Binary) {
		return Metrics{}, fmt.Errorf("evaluate: the ratings have no binary labels")
	}
	scores := make([]float64, test.Len())
	n := b.N * b.D
	for k := range scores {
		t := int(test.T[k])
		u := x[b.Offset+t*n : b.Offset+(t+1)*n]
		uo := int(test.User[k]) * b.D
		vo := (users + int(test.Item[k])) * b.D
		var s float64
		for j, a := range u[uo : uo+b.D] {
			s += float64(float64(a) * float64(u[vo+j]))
		}
		if bias != nil {
			s += float64(bias[test.Item[k]]) + float64(bias[items+int(test.T[k])]) + float64(bias[items+b.T+int(test.User[k])])
		}
		scores[k] = s
	}
	return scoreMetrics(scores, test.X), nil
}

// Evaluate is EvaluateRatings with the model's layout.
func (m *LogisticMF) Evaluate(x []float64, test *Ratings) (Metrics, error) {
	return evaluateLogistic(m, x, test)
}

// evaluateLogistic is Evaluate on parameters of type F (widened entry by
// entry: see evaluateRatings).
func evaluateLogistic[F optim.Float](m *LogisticMF, x []F, test *Ratings) (Metrics, error) {
	checkLen("x", x, m.NumParams())
	b := m.Blocks()
	if m.Bias {
		end := b.Offset + b.Len()
		return evaluateRatings(x, b, m.Users, x[end:], test)
	}
	return evaluateRatings(x, b, m.Users, nil, test)
}

// BaseRate evaluates the predictor that gives every rating probability
// p = (fraction of +1 in train) of being +1: its AUC is 1/2 and it predicts
// the majority class of train.
func BaseRate(train, test *Ratings) Metrics {
	var pos int
	for _, v := range train.X {
		if v > 0 {
			pos++
		}
	}
	p := float64(pos) / float64(train.Len())
	s := optim.Log(p) - optim.Log1p(-p) // logit(p): sigmoid(s) = p
	scores := make([]float64, test.Len())
	for k := range scores {
		scores[k] = s
	}
	return scoreMetrics(scores, test.X)
}

func scoreMetrics(scores []float64, x []int8) Metrics {
	m := Metrics{N: len(scores)}
	if m.N == 0 {
		m.LogLik, m.AUC, m.Accuracy = math.NaN(), math.NaN(), math.NaN()
		return m
	}
	var ll, acc float64
	var pos, neg []float64
	for k, s := range scores {
		y := float64(x[k]) * s
		ll -= softplus(-y)
		switch {
		case y > 0:
			acc++
		case y == 0:
			acc += 0.5
		}
		if x[k] > 0 {
			pos = append(pos, s)
		} else {
			neg = append(neg, s)
		}
	}
	m.LogLik = ll / float64(m.N)
	m.Accuracy = acc / float64(m.N)
	m.AUC = AUC(pos, neg)
	return m
}

// softplus returns log(1 + e^y) without overflow.
func softplus(y float64) float64 {
	if y > 0 {
		return y + optim.Log1p(optim.Exp(-y))
	}
	return optim.Log1p(optim.Exp(y))
}

// AUC returns the exact area under the ROC curve of scores of positives pos
// and negatives neg: P(s+ > s-) + 1/2 P(s+ == s-). It is NaN if either set is
// empty or a score is NaN. The inputs are not modified.
func AUC(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	for _, s := range pos {
		if math.IsNaN(s) {
			return math.NaN()
		}
	}
	sorted := slices.Clone(neg)
	slices.Sort(sorted)
	if math.IsNaN(sorted[0]) {
		return math.NaN()
	}
	var wins float64 // 2 x (pairs won + 1/2 pairs tied), exact in float64 up to 2^53
	for _, s := range pos {
		below := sort.SearchFloat64s(sorted, s) // negatives < s
		upto := below + sort.Search(len(sorted)-below, func(i int) bool { return sorted[below+i] > s })
		wins += float64(2*below + (upto - below))
	}
	return wins / (2 * float64(len(pos)) * float64(len(neg)))
}
