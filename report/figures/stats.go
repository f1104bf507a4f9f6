package figures

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval estimates over seeds, for verdicts that must say how sure they
// are (the claims table). Every function here is deterministic: the same
// inputs give the same bits on every build.

// CensoredRatio returns CensoredMedian(base) / CensoredMedian(method): how
// many times the steps of method the base needs to reach a target, where
// NaN and +Inf in the inputs mean "never reached". It is +Inf when only the
// base's median is censored, 0 when only the method's is, and NaN when both
// are (the ratio is unknown) or either input is empty.
func CensoredRatio(base, method []float64) float64 {
	b, m := CensoredMedian(base), CensoredMedian(method)
	switch {
	case math.IsNaN(b) || math.IsNaN(m):
		return math.NaN()
	case math.IsInf(b, 1) && math.IsInf(m, 1):
		return math.NaN()
	case math.IsInf(b, 1):
		return math.Inf(1)
	case math.IsInf(m, 1):
		return 0
	}
	return b / m
}

// CensoredRatioBounds bounds the ratio of medians median(base) /
// median(method) of step counts right-censored at horizon: NaN and ±Inf
// mean "not reached within horizon steps", so the true value is above
// horizon but unknown. lo puts the base's censored values at horizon and the
// method's at +Inf (the smallest ratio the data allow), hi the other way
// round (the largest). With nothing censored at either median lo = hi =
// CensoredRatio; with only the base's median censored lo = H/m > 0 and
// hi = +Inf (at least lo); with only the method's, lo = 0 and hi = b/H (at
// most hi); with both, lo = 0 and hi = +Inf (unknown). Both are NaN when
// either input is empty. A reader of lo alone ("at least lo times") is never
// misled by the horizon the runs happened to have.
func CensoredRatioBounds(base, method []float64, horizon float64) (lo, hi float64) {
	if len(base) == 0 || len(method) == 0 {
		return math.NaN(), math.NaN()
	}
	at := func(xs []float64) float64 {
		v := make([]float64, len(xs))
		for i, x := range xs {
			if !finite(x) {
				x = horizon
			}
			v[i] = x
		}
		return Median(v)
	}
	return at(base) / CensoredMedian(method), CensoredMedian(base) / at(method)
}

// Reached returns how many values are finite (a step count that was
// reached; NaN and ±Inf mean never).
func Reached(values []float64) int {
	n := 0
	for _, v := range values {
		if finite(v) {
			n++
		}
	}
	return n
}

// Bootstrap returns the percentile interval at level (0.95: the 2.5% and
// 97.5% quantiles) of stat over reps resamples of n units drawn with
// replacement. The resamples come from a PCG seeded with seed, so the
// interval is the same on every run and build. stat receives the indices of
// one resample (len n; the slice is reused between calls). A resample whose
// statistic is NaN (undefined, e.g. a ratio of two censored medians) counts
// as -Inf for the lower bound and as +Inf for the upper: an undefined
// resample can only widen the interval. Both bounds are NaN when n or reps
// is 0.
func Bootstrap(n, reps int, seed uint64, level float64, stat func(idx []int) float64) (lo, hi float64) {
	if n <= 0 || reps <= 0 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, 0x626f6f74))
	idx := make([]int, n)
	low := make([]float64, reps)
	high := make([]float64, reps)
	for r := range reps {
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		v := stat(idx)
		low[r], high[r] = v, v
		if math.IsNaN(v) {
			low[r], high[r] = math.Inf(-1), math.Inf(1)
		}
	}
	sort.Float64s(low)
	sort.Float64s(high)
	k := int(math.Floor((1 - level) / 2 * float64(reps)))
	k = min(max(k, 0), reps-1)
	return low[k], high[reps-1-k]
}

// TInterval returns the mean of the finite values of xs and its Student t
// interval at level (the mean ± t_{(1+level)/2, n-1} s/sqrt(n), s the sample
// standard deviation): the interval of a mean paired difference over seeds.
// The bounds are NaN with fewer than two finite values; the mean is NaN
// with none.
func TInterval(xs []float64, level float64) (mean, lo, hi float64) {
	var v []float64
	for _, x := range xs {
		if finite(x) {
			v = append(v, x)
		}
	}
	n := len(v)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	var s float64
	for _, x := range v {
		s += x
	}
	mean = s / float64(n)
	if n < 2 {
		return mean, math.NaN(), math.NaN()
	}
	var ss float64
	for _, x := range v {
		d := x - mean
		ss += float64(d * d)
	}
	se := math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile((1 + level) / 2)
	h := float64(t * se)
	return mean, mean - h, mean + h
}

// FisherExact returns the two-sided p-value of Fisher's exact test on the
// 2 x 2 table [[a, b], [c, d]] (rows: two groups; columns: reached, did
// not): the sum of the hypergeometric probabilities, with the margins
// fixed, of every table no more probable than the observed one (with a
// relative slack of 1e-7 for ties, as R's fisher.test). NaN for a negative
// count.
func FisherExact(a, b, c, d int) float64 {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return math.NaN()
	}
	r1, c1, n := a+b, a+c, a+b+c+d
	lf := func(k int) float64 { v, _ := math.Lgamma(float64(k + 1)); return v }
	// log P(X = x) for X hypergeometric: x of the c1 "reached" in row 1.
	logp := func(x int) float64 {
		return lf(r1) + lf(n-r1) + lf(c1) + lf(n-c1) - lf(n) - lf(x) - lf(r1-x) - lf(c1-x) - lf(n-r1-c1+x)
	}
	obs := logp(a)
	p := 0.0
	for x := max(0, r1+c1-n); x <= min(r1, c1); x++ {
		if lp := logp(x); lp <= obs+1e-7 {
			p += math.Exp(lp)
		}
	}
	return min(p, 1)
}
