package dwe

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"goldstone/optim"
)

// Interpolate writes into dst (len 2V d, the layout of one Z_t) the means at
// time tau, linearly interpolated between the two training steps whose time
// stamps bracket tau; outside [times[0], times[T-1]] the nearest step is
// used. means has the layout b (b.T == len(times)). dst nil: allocated.
func Interpolate(dst, means []float64, b optim.Blocks, times []float64, tau float64) []float64 {
	if len(times) != b.T || len(means) < b.Offset+b.Len() {
		panic(fmt.Sprintf("dwe: Interpolate: %d times, blocks %+v, len(means)=%d", len(times), b, len(means)))
	}
	n := b.N * b.D
	if dst == nil {
		dst = make([]float64, n)
	}
	checkLen("dst", dst, n)
	k := sort.SearchFloat64s(times, tau) // first index with times[k] >= tau
	switch {
	case k == 0:
		copy(dst, b.Block(means, 0))
	case k == len(times):
		copy(dst, b.Block(means, b.T-1))
	default:
		a := (tau - times[k-1]) / (times[k] - times[k-1])
		z0, z1 := b.Block(means, k-1), b.Block(means, k)
		for i := range dst {
			dst[i] = float64((1-a)*z0[i]) + float64(a*z1[i])
		}
	}
	return dst
}

// PredictiveLogLik returns the predictive log-likelihood per test point of
// held-out steps: for every step of test (at its own time stamp), the means
// are interpolated (Interpolate) from the training steps at trainTimes, the
// exact log-likelihood of the step's counts is computed (StepNegLogLik,
// O(V^2 d), on pool; nil: inline), and the sum over steps is divided by
// sum_t sum_ij (n+ + n-).
func PredictiveLogLik(means []float64, b optim.Blocks, trainTimes []float64, test *Counts, pool *optim.Pool) (float64, error) {
	if err := test.Validate(); err != nil {
		return 0, fmt.Errorf("predictive loglik: %w", err)
	}
	if b.N != 2*test.V {
		return 0, fmt.Errorf("predictive loglik: test V=%d, model has %d columns", test.V, b.N)
	}
	z := make([]float64, b.N*b.D)
	vd := test.V * b.D
	var ll, tot float64
	for t := range test.Steps {
		Interpolate(z, means, b, trainTimes, test.Times[t])
		ll -= StepNegLogLik(z[:vd], z[vd:], &test.Steps[t], test.V, b.D, pool)
		tot += test.Steps[t].Total()
	}
	if !(tot > 0) {
		return 0, fmt.Errorf("predictive loglik: test set has total count %v", tot)
	}
	return ll / tot, nil
}

// cosine returns the cosine similarity of a and b (0 if either is zero).
func cosine(a, b []float64) float64 {
	var ab, aa, bb float64
	for i, v := range a {
		ab += float64(v * b[i])
		aa += float64(v * v)
		bb += float64(b[i] * b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// wordVec returns the word vector u_{t,i} (column i of Z_t).
func wordVec(means []float64, b optim.Blocks, t, i int) []float64 {
	z := b.Block(means, t)
	return z[i*b.D : (i+1)*b.D]
}

// WordAging returns the k words whose word vector at step to has the
// largest cosine similarity with the query's word vector at step from (the
// paper's "word aging" table: from the last step to the first), best first;
// ties go to the lower index. The query itself is a candidate (a word whose
// meaning did not change lists itself first). len(vocab) must be
// V = b.N/2.
func WordAging(means []float64, b optim.Blocks, vocab []string, query string, from, to, k int) ([]string, error) {
	v := b.N / 2
	if len(vocab) != v {
		return nil, fmt.Errorf("word aging: %d vocabulary words, model has V=%d", len(vocab), v)
	}
	q := slices.Index(vocab, query)
	if q < 0 {
		return nil, fmt.Errorf("word aging: %q not in the vocabulary", query)
	}
	if from < 0 || from >= b.T || to < 0 || to >= b.T {
		return nil, fmt.Errorf("word aging: time steps %d, %d out of [0, %d)", from, to, b.T)
	}
	qv := wordVec(means, b, from, q)
	cos := make([]float64, v)
	idx := make([]int, v)
	for i := range cos {
		cos[i] = cosine(wordVec(means, b, to, i), qv)
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, c int) int { return cmp.Compare(cos[c], cos[a]) })
	k = min(max(k, 0), v)
	out := make([]string, k)
	for r := range out {
		out[r] = vocab[idx[r]]
	}
	return out, nil
}

// FirstLastCosines returns, for every word, the cosine similarity between
// its word vectors at the first and the last step (0 for a zero vector).
func FirstLastCosines(means []float64, b optim.Blocks) []float64 {
	v := b.N / 2
	out := make([]float64, v)
	for i := range out {
		out[i] = cosine(wordVec(means, b, 0, i), wordVec(means, b, b.T-1, i))
	}
	return out
}
