package search

import (
	"math"
	"math/rand/v2"
	"slices"

	"goldstone/optim"
)

// TPE is the tree-structured Parzen estimator, as Optuna's default
// TPESampler (independent per parameter, Bergstra et al. 2011; Watanabe
// 2023): the first Startup suggestions are random; after them the
// observations are split at the gamma quantile into a good group (the
// best min(ceil(0.1 n), 25)) and the others, a Parzen estimator (a mixture
// of truncated normals in the parameter's internal space, or of smoothed
// categorical kernels, with a prior component over the whole range) is fit
// to each group, and the suggestion is the one of Candidates draws from the
// good estimator l that maximizes l(x)/g(x). A conditional parameter is
// fit to the observations it exists in. Observations are weighted as
// Optuna's default_weights (older ones ramped down past 25), the prior has
// weight 1, and the kernels' widths follow Optuna's "magic clip".
//
// All suggestions of one wave (one Suggest call) see the same history and
// differ by their random streams.
type TPE struct {
	Startup    int // random suggestions before the model (Optuna: 10)
	Candidates int // draws from l per parameter (Optuna: 24)
}

// NewTPE is TPE with Optuna's defaults.
func NewTPE() TPE { return TPE{Startup: 10, Candidates: 24} }

// Suggest implements Sampler.
func (t TPE) Suggest(sp *Space, seed uint64, history []Observation, start, n int) ([]Point, error) {
	if len(history) < t.Startup {
		return Random{}.Suggest(sp, seed, history, start, n)
	}
	below, above := split(history)
	out := make([]Point, n)
	for i := range out {
		r := stream(seed, start+i, 3)
		pt := Point{}
		for j := range sp.Params {
			p := &sp.Params[j]
			if p.Active(pt) {
				pt[p.Key] = t.sampleParam(p, below, above, r)
			}
		}
		out[i] = pt
	}
	return out, nil
}

// gamma is the size of the good group of n observations (Optuna's
// default_gamma).
func gamma(n int) int { return min(int(math.Ceil(0.1*float64(n))), 25) }

// split divides the history into the good (lowest values) and the other
// observations, each in the order they were suggested. Ties go by order;
// values that are not finite are the worst.
func split(history []Observation) (below, above []Observation) {
	idx := make([]int, len(history))
	for i := range idx {
		idx[i] = i
	}
	key := func(i int) float64 {
		v := history[i].Value
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.Inf(1)
		}
		return v
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		va, vb := key(a), key(b)
		switch {
		case va < vb:
			return -1
		case va > vb:
			return 1
		}
		return 0
	})
	nb := gamma(len(history))
	good := idx[:nb]
	slices.Sort(good)
	rest := slices.Clone(idx[nb:])
	slices.Sort(rest)
	for _, i := range good {
		below = append(below, history[i])
	}
	for _, i := range rest {
		above = append(above, history[i])
	}
	return below, above
}

// weights are Optuna's default_weights of n observations in suggestion
// order: 1 for all when n < 25, else a ramp from 1/n to 1 over the oldest
// n-25 and 1 for the newest 25.
func weights(n int) []float64 {
	w := make([]float64, n)
	if n < 25 {
		for i := range w {
			w[i] = 1
		}
		return w
	}
	ramp := n - 25
	for i := range ramp {
		if ramp == 1 {
			w[i] = 1.0 / float64(n)
			continue
		}
		// numpy.linspace(1/n, 1, ramp)
		lo := 1.0 / float64(n)
		w[i] = lo + float64(float64(i)*((1-lo)/float64(ramp-1)))
	}
	for i := ramp; i < n; i++ {
		w[i] = 1
	}
	return w
}

// sampleParam chooses one parameter's value: Candidates draws from the
// good group's estimator, the one of the largest log l - log g.
func (t TPE) sampleParam(p *Param, below, above []Observation, r *rand.Rand) any {
	l, g := fit(p, below), fit(p, above)
	best, bestScore := any(nil), math.Inf(-1)
	for range t.Candidates {
		x := l.sample(p, r)
		if s := l.logPDF(p, x) - g.logPDF(p, x); best == nil || s > bestScore {
			best, bestScore = x, s
		}
	}
	return best
}

// parzen is a one-dimensional Parzen estimator: a weighted mixture of
// truncated normals (numeric parameters, in the internal space) or of
// categorical kernels (choices: probs per choice).
type parzen struct {
	w         []float64 // normalized component weights
	mu, sigma []float64 // numeric: the components
	lo, hi    float64   // numeric: the internal range
	logZ      []float64 // numeric: log of each component's mass inside [lo, hi]
	probs     []float64 // choice: the mixture's probability of each choice
}

// fit builds the estimator of p over the observations that have it.
func fit(p *Param, obs []Observation) *parzen {
	var vals []any
	for _, o := range obs {
		if v, ok := o.Point[p.Key]; ok {
			vals = append(vals, v)
		}
	}
	w := weights(len(vals))
	w = append(w, 1) // the prior
	total := 0.0
	for _, x := range w {
		total += x
	}
	for i := range w {
		w[i] /= total
	}
	if p.Dist == Choice {
		return fitChoice(p, vals, w)
	}
	return fitNumeric(p, vals, w)
}

func fitChoice(p *Param, vals []any, w []float64) *parzen {
	k := len(p.Choices)
	probs := make([]float64, k)
	prior := w[len(w)-1]
	for c := range probs {
		probs[c] = prior / float64(k)
	}
	for i, v := range vals {
		if c := p.choiceIndex(v); c >= 0 { // a value no longer in the space counts for none
			probs[c] += w[i]
		}
	}
	return &parzen{w: w, probs: probs}
}

func fitNumeric(p *Param, vals []any, w []float64) *parzen {
	lo, hi := p.bounds()
	mus := make([]float64, 0, len(vals)+1)
	for _, v := range vals {
		x, _ := p.internal(v)
		mus = append(mus, min(max(x, lo), hi))
	}
	sigmas := magicClip(mus, lo, hi)
	mus = append(mus, float64(0.5*(lo+hi)))
	sigmas = append(sigmas, hi-lo)
	pz := &parzen{w: w, mu: mus, sigma: sigmas, lo: lo, hi: hi, logZ: make([]float64, len(mus))}
	for i := range mus {
		z := normCDF((hi-mus[i])/sigmas[i]) - normCDF((lo-mus[i])/sigmas[i])
		pz.logZ[i] = optim.Log(max(z, 1e-300))
	}
	return pz
}

// magicClip gives each observation's kernel width: the larger distance to
// its neighbours in sorted order (the range's ends counting as neighbours,
// except that the first and last use their inner neighbour only), clipped
// to [(hi-lo)/min(100, 1+n), hi-lo] (Optuna's consider_magic_clip with
// consider_endpoints false).
func magicClip(mus []float64, lo, hi float64) []float64 {
	n := len(mus)
	if n == 0 {
		return nil
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case mus[a] < mus[b]:
			return -1
		case mus[a] > mus[b]:
			return 1
		}
		return 0
	})
	ends := make([]float64, 0, n+2)
	ends = append(ends, lo)
	for _, i := range order {
		ends = append(ends, mus[i])
	}
	ends = append(ends, hi)
	sorted := make([]float64, n)
	for k := range sorted {
		sorted[k] = max(ends[k+1]-ends[k], ends[k+2]-ends[k+1])
	}
	if len(ends) >= 4 {
		sorted[0] = ends[2] - ends[1]
		sorted[n-1] = ends[n] - ends[n-1]
	}
	maxSigma := hi - lo
	minSigma := maxSigma / min(100.0, 1.0+float64(n))
	out := make([]float64, n)
	for k, i := range order {
		out[i] = min(max(sorted[k], minSigma), maxSigma)
	}
	return out
}

// sample draws one value of p from the estimator.
func (pz *parzen) sample(p *Param, r *rand.Rand) any {
	if p.Dist == Choice {
		return p.Choices[pick(pz.probs, unit(r))]
	}
	c := pick(pz.w, unit(r))
	// Rejection from the normal: the mean lies in [lo, hi] and the width
	// is at most hi-lo, so at least a third of the draws land inside.
	x := pz.mu[c]
	for range 1000 {
		y := pz.mu[c] + float64(pz.sigma[c]*optim.NormFloat64(r))
		if y >= pz.lo && y <= pz.hi {
			x = y
			break
		}
	}
	return p.external(x)
}

// pick is the index whose cumulative share of ws holds u.
func pick(ws []float64, u float64) int {
	total := 0.0
	for _, w := range ws {
		total += w
	}
	acc := 0.0
	for i, w := range ws {
		acc += w
		if u*total < acc {
			return i
		}
	}
	return len(ws) - 1
}

// logPDF is the log density (choices: log probability) of value v.
func (pz *parzen) logPDF(p *Param, v any) float64 {
	if p.Dist == Choice {
		return optim.Log(pz.probs[p.choiceIndex(v)])
	}
	x, _ := p.internal(v)
	const halfLog2Pi = 0.91893853320467274178
	terms := make([]float64, len(pz.mu))
	top := math.Inf(-1)
	for i := range pz.mu {
		z := (x - pz.mu[i]) / pz.sigma[i]
		terms[i] = optim.Log(pz.w[i]) - float64(0.5*float64(z*z)) - optim.Log(pz.sigma[i]) - halfLog2Pi - pz.logZ[i]
		top = max(top, terms[i])
	}
	sum := 0.0
	for _, t := range terms {
		sum += optim.Exp(t - top)
	}
	return top + optim.Log(sum)
}

// normCDF is the standard normal distribution function, from Abramowitz
// and Stegun's 7.1.26 approximation of erf (absolute error below 1.5e-7):
// enough for the mass of a kernel inside its range, which is at least a
// third (its mean lies inside, its width is at most the range).
func normCDF(z float64) float64 {
	x := math.Abs(z) / math.Sqrt2
	const (
		p  = 0.3275911
		a1 = 0.254829592
		a2 = -0.284496736
		a3 = 1.421413741
		a4 = -1.453152027
		a5 = 1.061405429
	)
	t := 1 / (1 + float64(p*x))
	poly := float64(t * (a1 + float64(t*(a2+float64(t*(a3+float64(t*(a4+float64(t*a5)))))))))
	erf := 1 - float64(poly*optim.Exp(-float64(x*x)))
	if z < 0 {
		return 0.5 * (1 - erf)
	}
	return 0.5 * (1 + erf)
}
