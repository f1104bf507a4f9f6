package claims

import (
	"fmt"
	"math"
	"slices"

	"goldstone/report/figures"
)

// The comparisons the verdicts rest on (issue 23), shared by the rows of
// the artificial data and of the word embeddings. Every comparison pairs
// the variants by seed and says how sure it is:
//
//   - Speed-ups: the ratio of the medians of the steps to a target, where a
//     seed that never reaches it within the run, or whose trial diverged, is
//     right-censored at the run length: the ratio is bounded, not infinite
//     (figures.CensoredRatioBounds: "at least 43x" when the base's median is
//     censored), with a 95% percentile bootstrap interval over seeds
//     (figures.Bootstrap: bootReps resamples of the seeds, drawn with
//     replacement and taking both methods' values of each drawn seed, from
//     a PCG seeded with bootSeed; the lower end from the resamples' lower
//     bounds, the upper from their upper bounds). The verdict reads the
//     interval (speedup.Word).
//   - Differences (held-out log-likelihood, cosine): the mean paired
//     difference over seeds with its 95% Student t interval
//     (figures.TInterval); "no difference" only when the whole interval lies
//     inside the stated band (pairedDiff.Word).

const (
	bootReps = 10000
	bootSeed = 1
	level    = 0.95
)

// seedOf is a trial's seed (0 when it has none).
func seedOf(t trial) int {
	s, _ := t.params["seed"].(float64)
	return int(s)
}

// bySeed returns each variant's metric by seed over the trials keep
// accepts (nil: all). Failed trials give NaN (a censored step count: never
// reached) when withFailed is set, and are left out otherwise; diverged
// trials give their summary's values (never for a step count, NaN for a
// final or held-out value).
func (r *Run) bySeed(metric string, keep func(trial) bool, withFailed bool) map[string]map[int]float64 {
	out := map[string]map[int]float64{}
	add := func(t trial, v float64) {
		if keep != nil && !keep(t) {
			return
		}
		if out[t.variant] == nil {
			out[t.variant] = map[int]float64{}
		}
		out[t.variant][seedOf(t)] = v
	}
	for _, t := range r.trials {
		v, ok := t.sum[metric]
		if !ok {
			v = math.NaN()
		}
		add(t, v)
	}
	if withFailed {
		for _, t := range r.failed {
			add(t, math.NaN())
		}
	}
	return out
}

// pairOf returns the values of variants a and b over the seeds both have,
// in seed order.
func pairOf(m map[string]map[int]float64, a, b string) (x, y []float64) {
	var seeds []int
	for s := range m[a] {
		if _, ok := m[b][s]; ok {
			seeds = append(seeds, s)
		}
	}
	slices.Sort(seeds)
	for _, s := range seeds {
		x = append(x, m[a][s])
		y = append(y, m[b][s])
	}
	return x, y
}

// failedOf counts the failed trials of a variant that keep accepts.
func (r *Run) failedOf(variant string, keep func(trial) bool) int {
	n := 0
	for _, t := range r.failed {
		if t.variant == variant && (keep == nil || keep(t)) {
			n++
		}
	}
	return n
}

// divergedOf counts the trials of a variant ("": of every variant) that
// keep accepts whose training diverged (status diverged, whose thresholds
// are never in their summary).
func (r *Run) divergedOf(variant string, keep func(trial) bool) int {
	n := 0
	for _, t := range r.trials {
		if t.diverged && (variant == "" || t.variant == variant) && (keep == nil || keep(t)) {
			n++
		}
	}
	return n
}

// failures says which variants of the run diverged or failed on how many
// seeds, with the first divergence or error of each ("goldstone-linear
// diverged on 3 of 3 seeds (diverged at step 60: local loss +Inf)",
// "goldstone-linear failed on 3 of 3 seeds (train: step 60: local loss
// +Inf: optim: loss diverged)" for a run recorded before a divergence was
// a result), in variant order; total counts each variant's trials.
func (r *Run) failures() []string {
	total := map[string]int{}
	for _, t := range append(slices.Clip(r.trials), r.failed...) {
		total[t.variant]++
	}
	var out []string
	for _, c := range []struct {
		word   string
		trials []trial
		keep   func(trial) bool
	}{{"diverged", r.trials, func(t trial) bool { return t.diverged }}, {"failed", r.failed, nil}} {
		n, first := map[string]int{}, map[string]string{}
		var vs []string
		for _, t := range c.trials {
			if c.keep != nil && !c.keep(t) {
				continue
			}
			if n[t.variant] == 0 {
				vs = append(vs, t.variant)
				first[t.variant] = t.err
			}
			n[t.variant]++
		}
		slices.Sort(vs)
		for _, v := range vs {
			out = append(out, fmt.Sprintf("%s %s on %d of %d seeds (%s)", v, c.word, n[v], total[v], first[v]))
		}
	}
	return out
}

// failedAll is the verdict of a row whose method diverged or failed on
// every seed.
func failedAll(r *Run, method string) (string, bool) {
	failed, diverged := r.failedOf(method, nil), r.divergedOf(method, nil)
	if failed+diverged == 0 {
		return "", false
	}
	for _, t := range r.trials {
		if t.variant == method && !t.diverged {
			return "", false
		}
	}
	word := "failed"
	switch {
	case failed == 0:
		word = "diverged"
	case diverged > 0:
		word = "diverged or failed"
	}
	return fmt.Sprintf("not reproducible as run: %s %s on every seed (%d)", method, word, failed+diverged), true
}

// speedup is the comparison of the steps two methods need to reach a
// target, paired by seed. Step counts are right-censored: a seed that does
// not reach the target within the run's Horizon steps (or whose trial
// diverged) needs more than Horizon steps, how many more is unknown. So the
// ratio base/method of the censored medians is known only within
// [Low, High] (figures.CensoredRatioBounds: equal when neither median is
// censored; [H/m, +Inf] "at least" when only the base's is; [0, b/H] "at
// most" when only the method's is), and the 95% bootstrap interval [Lo, Hi]
// takes Lo from the resamples' Low and Hi from their High (the same
// resamples: one PCG seed).
type speedup struct {
	Base, Method []float64
	Horizon      float64
	Low, High    float64
	Lo, Hi       float64
}

// horizonOf is the run length a censored step count exceeds: the trials'
// steps setting, else (runs whose trials do not record it) the largest
// step count reached, which every censored one exceeds too.
func (r *Run) horizonOf() float64 {
	h := 0.0
	for _, t := range append(slices.Clip(r.trials), r.failed...) {
		if v, ok := t.params["steps"].(float64); ok {
			h = max(h, v)
		}
	}
	return h
}

func newSpeedup(base, method []float64, horizon float64) speedup {
	for _, x := range append(slices.Clip(base), method...) {
		if finite(x) {
			horizon = max(horizon, x)
		}
	}
	s := speedup{Base: base, Method: method, Horizon: horizon}
	s.Low, s.High = figures.CensoredRatioBounds(base, method, horizon)
	b, m := make([]float64, len(base)), make([]float64, len(method))
	resample := func(idx []int) {
		for i, k := range idx {
			b[i], m[i] = base[k], method[k]
		}
	}
	s.Lo, _ = figures.Bootstrap(len(base), bootReps, bootSeed, level, func(idx []int) float64 {
		resample(idx)
		lo, _ := figures.CensoredRatioBounds(b, m, horizon)
		return lo
	})
	_, s.Hi = figures.Bootstrap(len(base), bootReps, bootSeed, level, func(idx []int) float64 {
		resample(idx)
		_, hi := figures.CensoredRatioBounds(b, m, horizon)
		return hi
	})
	return s
}

// neither: both censored medians are beyond the horizon, so the ratio is
// unknown.
func (s speedup) neither() bool { return s.Low == 0 && math.IsInf(s.High, 1) }

// ratioText formats a ratio: "9.74x", "inf" for +Inf, "undefined" for NaN.
func ratioText(v float64) string {
	switch {
	case math.IsNaN(v):
		return "undefined"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return fmt.Sprintf("%.3gx", v)
}

// PointText is the ratio of the medians: "9.74x", ">= 43x" (the base's
// median censored), "<= 0.2x" (the method's), "undefined" (both).
func (s speedup) PointText() string {
	switch {
	case s.neither() || math.IsNaN(s.Low):
		return "undefined"
	case math.IsInf(s.High, 1):
		return ">= " + ratioText(s.Low)
	case s.Low == 0 && s.High > 0:
		return "<= " + ratioText(s.High)
	}
	return ratioText(s.Low)
}

// Text is "ratio [lo, hi]": "9.74x [6.1x, 12x]", ">= 43x [7.4x, inf]".
func (s speedup) Text() string {
	return fmt.Sprintf("%s [%s, %s]", s.PointText(), ratioText(s.Lo), ratioText(s.Hi))
}

// BothText is the median over the seeds where both methods reach the
// target of the per-seed ratio base/method, "" when there is none: how
// much faster the method is where the baseline converges at all.
func (s speedup) BothText() string {
	var r []float64
	for i := range s.Base {
		if finite(s.Base[i]) && finite(s.Method[i]) && s.Method[i] > 0 {
			r = append(r, s.Base[i]/s.Method[i])
		}
	}
	if len(r) == 0 {
		return ""
	}
	return fmt.Sprintf("on the %d seeds both reach, median per-seed ratio %s", len(r), ratioText(figures.Median(r)))
}

// Verdict is the word of the interval with the numbers it rests on.
func (s speedup) Verdict(b ratioBands, base, method string) string {
	w := s.Word(b)
	if w == "neither reaches" {
		return fmt.Sprintf("%s (%s %d/%d, %s %d/%d)", b.Neither,
			base, figures.Reached(s.Base), len(s.Base), method, figures.Reached(s.Method), len(s.Method))
	}
	return fmt.Sprintf("%s (%s/%s %s)", w, base, method, s.Text())
}

// ratioBands are the bars a speed-up's interval is read against: the whole
// interval at or above Reproduce reproduces the claim; within
// [1/Effect, Effect] it shows no effect.
type ratioBands struct {
	Reproduce, Effect float64
	Neither           string // the verdict when neither median reaches the target
}

// speedupBands are the bands of a speed-up the paper states as factor (Fig.
// 2: about 10x): half of it reproduces the claim.
func speedupBands(factor float64) ratioBands {
	return ratioBands{Reproduce: factor / 2, Effect: 1.5, Neither: "not reproduced: neither reaches it on most seeds"}
}

// Word is the verdict of the interval against the bands:
//
//	neither reaches  both medians are censored (no ratio)
//	reproduces       lo >= Reproduce
//	reversed         hi <= 1/Effect
//	smaller effect   lo >= Effect and hi < Reproduce
//	faster           lo > 1 (size not settled by the interval)
//	no effect        1/Effect < lo and hi < Effect
//	slower           hi < 1 (size not settled)
//	inconclusive     otherwise: the interval spans 1 and a band's edge
func (s speedup) Word(b ratioBands) string {
	switch {
	case s.neither():
		return "neither reaches"
	case s.Lo >= b.Reproduce:
		return "reproduces"
	case s.Hi <= 1/b.Effect:
		return "reversed"
	case s.Lo >= b.Effect && s.Hi < b.Reproduce:
		return "smaller effect"
	case s.Lo > 1/b.Effect && s.Hi < b.Effect:
		return "no effect"
	case s.Lo > 1:
		return "faster"
	case s.Hi < 1:
		return "slower"
	}
	return "inconclusive"
}

// stepsShort is "median (k/n reach)" of a method's steps.
func stepsShort(xs []float64) string {
	m := figures.CensoredMedian(xs)
	med := "never"
	if !math.IsInf(m, 1) && !math.IsNaN(m) {
		med = fmt.Sprintf("%.0f", m)
	}
	return fmt.Sprintf("%s (%d/%d reach)", med, figures.Reached(xs), len(xs))
}

// thresholdText names an excess threshold: "L-L* < 0.1".
func thresholdText(thr float64) string { return fmt.Sprintf("L-L* < %g", thr) }

// diffBands: a difference whose whole interval lies within ±Band is "no
// difference"; Reproduce (0: none) is the bar the whole interval must clear
// for "reproduces".
type diffBands struct{ Band, Reproduce float64 }

// pairedDiff is the mean over seeds of method - base (paired by seed) with
// its t interval.
type pairedDiff struct {
	N              int
	Mean, Lo, Hi   float64
	BaseM, MethodM float64 // the means of each
}

func newPairedDiff(base, method []float64) pairedDiff {
	var d []float64
	var bs, ms []float64
	for i := range base {
		if finite(base[i]) && finite(method[i]) {
			d = append(d, method[i]-base[i])
			bs, ms = append(bs, base[i]), append(ms, method[i])
		}
	}
	p := pairedDiff{N: len(d)}
	p.Mean, p.Lo, p.Hi = figures.TInterval(d, level)
	p.BaseM, _, _ = figures.TInterval(bs, level)
	p.MethodM, _, _ = figures.TInterval(ms, level)
	return p
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Text is "+0.0001 [-0.0002, +0.0004]" (digits: decimals).
func (p pairedDiff) Text(digits int) string {
	if math.IsNaN(p.Lo) {
		return fmt.Sprintf("%+.*f (no interval: %d paired seeds)", digits, p.Mean, p.N)
	}
	return fmt.Sprintf("%+.*f [%+.*f, %+.*f]", digits, p.Mean, digits, p.Lo, digits, p.Hi)
}

// Word reads the interval against the bands:
//
//	not measured      no paired seed
//	no interval       one paired seed
//	no difference     -Band < lo and hi < Band
//	reproduces        lo >= Reproduce (> 0)
//	higher / lower    the interval excludes 0 (and the band's far side)
//	inconclusive      otherwise: the interval is wider than the band and spans 0
func (p pairedDiff) Word(b diffBands) string {
	switch {
	case p.N == 0:
		return notMeasured
	case math.IsNaN(p.Lo):
		return "no interval"
	case p.Lo > -b.Band && p.Hi < b.Band:
		return "no difference"
	case b.Reproduce > 0 && p.Lo >= b.Reproduce:
		return "reproduces"
	case p.Lo > 0:
		return "higher"
	case p.Hi < 0:
		return "lower"
	}
	return "inconclusive"
}
