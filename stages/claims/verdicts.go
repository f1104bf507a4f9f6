package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"goldstone/stages/artificial"
	"goldstone/stages/figures"
)

// Verdicts with intervals (issue 23): the rows of the artificial data (Fig.
// 2, its sensitivity to the initialisation scale, keeping the gauge fields)
// and of the word embeddings (Table 2, Fig. 4, the learning-rate schedule,
// the gauge overhead, variational inference). Every comparison pairs the
// variants by seed and says how sure it is:
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
//     inside the stated band (diffWord).

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
// reached) when withFailed is set, and are left out otherwise.
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

// failures says which variants of the run failed on how many seeds, with
// the first error of each ("goldstone-linear failed on 3 of 3 seeds
// (train: step 60: local loss +Inf: optim: loss diverged)"), in variant
// order; total counts each variant's trials.
func (r *Run) failures() []string {
	total, failed, first := map[string]int{}, map[string]int{}, map[string]string{}
	for _, t := range r.trials {
		total[t.variant]++
	}
	var vs []string
	for _, t := range r.failed {
		total[t.variant]++
		if failed[t.variant] == 0 {
			vs = append(vs, t.variant)
			first[t.variant] = t.err
		}
		failed[t.variant]++
	}
	slices.Sort(vs)
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%s failed on %d of %d seeds (%s)", v, failed[v], total[v], first[v]))
	}
	return out
}

// failedAll is the verdict of a row whose method failed on every seed.
func failedAll(r *Run, method string) (string, bool) {
	if r.failedOf(method, nil) == 0 {
		return "", false
	}
	for _, t := range r.trials {
		if t.variant == method {
			return "", false
		}
	}
	return fmt.Sprintf("not reproducible as run: %s failed on every seed (%d)", method, r.failedOf(method, nil)), true
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

// fig2Claim (kind "speedup") is the Fig. 2 row of one method against the
// baseline (GD) on the artificial data: at every threshold of
// artificial.ExcessThresholds the censored median steps of both, the ratio
// baseline/method with its bootstrap interval, and the verdict the
// interval gives against the paper's factor.
func fig2Claim(r *Run, p Params) (string, string) {
	method, base, bands := p.Method, p.Baseline, speedupBands(p.Factor)
	var ours, verdicts []string
	var m0 []float64
	for i, thr := range artificial.ExcessThresholds {
		m := r.bySeed(artificial.ExcessMetric(thr), nil, true)
		if m[base] == nil || m[method] == nil {
			return "", notMeasured + " (needs variants " + base + " and " + method + ")"
		}
		gd, me := pairOf(m, base, method)
		m0 = gd
		s := newSpeedup(gd, me, r.horizonOf())
		prefix := thresholdText(thr)
		if i == 0 {
			prefix = fmt.Sprintf("%d seeds; %s", len(gd), prefix)
		}
		o := fmt.Sprintf("%s: %s %s, %s %s, %s/%s %s", prefix, base, stepsShort(gd), method, stepsShort(me), base, method, s.Text())
		if both := s.BothText(); both != "" {
			o += " (" + both + ")"
		}
		ours = append(ours, o)
		verdicts = append(verdicts, fmt.Sprintf("%s: %s", thresholdText(thr), s.Verdict(bands, base, method)))
	}
	for _, v := range []string{method, base} {
		if n := r.failedOf(v, nil); n > 0 {
			ours = append(ours, fmt.Sprintf("%s diverged on %d of %d seeds (counted as never)", v, n, len(m0)))
		}
	}
	return strings.Join(ours, "; "), strings.Join(verdicts, "; ")
}

// initScales returns the init_scale values of a run's trials, sorted.
func (r *Run) initScales() []float64 {
	var out []float64
	for _, t := range append(slices.Clip(r.trials), r.failed...) {
		if v, ok := t.params["init_scale"].(float64); ok && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// fig2Setting is one (init scale, threshold) cell row of the sensitivity
// table.
type fig2Setting struct {
	init, thr float64
	gd        []float64
	cmp       map[string]speedup
}

// fig2Settings compares each of p.Methods with p.Baseline at every
// (init_scale, threshold) of the run.
func fig2Settings(r *Run, p Params) []fig2Setting {
	var out []fig2Setting
	for _, init := range r.initScales() {
		keep := func(t trial) bool { v, _ := t.params["init_scale"].(float64); return v == init }
		for _, thr := range artificial.ExcessThresholds {
			m := r.bySeed(artificial.ExcessMetric(thr), keep, true)
			st := fig2Setting{init: init, thr: thr, cmp: map[string]speedup{}}
			for _, meth := range p.Methods {
				if m[p.Baseline] == nil || m[meth] == nil {
					continue
				}
				gd, me := pairOf(m, p.Baseline, meth)
				st.gd = gd
				st.cmp[meth] = newSpeedup(gd, me, r.horizonOf())
			}
			out = append(out, st)
		}
	}
	return out
}

// initClaim (kind "init-scale") summarises the sensitivity table: at how
// many (init scale, threshold) settings each method's speed-up over the
// baseline (GD) reproduces the paper's factor.
func initClaim(r *Run, p Params) (string, string) {
	bands := speedupBands(p.Factor)
	sets := fig2Settings(r, p)
	if len(sets) == 0 {
		return "no init_scale in the run's settings", notMeasured
	}
	var ours, verdict []string
	for _, meth := range p.Methods {
		var yes []string
		n := 0
		for _, st := range sets {
			s, ok := st.cmp[meth]
			if !ok {
				continue
			}
			n++
			if s.Word(bands) == "reproduces" {
				yes = append(yes, fmt.Sprintf("init %g %s", st.init, thresholdText(st.thr)))
			}
		}
		if n == 0 {
			continue
		}
		ours = append(ours, fmt.Sprintf("%s reproduces at %d of %d settings", meth, len(yes), n))
		switch {
		case len(yes) == 0:
			verdict = append(verdict, fmt.Sprintf("%s: at none of the %d settings", meth, n))
		case len(yes) == n:
			verdict = append(verdict, fmt.Sprintf("%s: at all %d settings", meth, n))
		default:
			verdict = append(verdict, fmt.Sprintf("%s: only at %s", meth, strings.Join(yes, ", ")))
		}
	}
	return fmt.Sprintf("init_scale %s x %s, %d seeds; ", floatsText(r.initScales()), thresholdsText(), len(sets[0].gd)) +
			strings.Join(ours, "; ") + " (table below)",
		fmt.Sprintf("reproduces (interval of %s/method steps >= %gx) ", p.Baseline, bands.Reproduce) + strings.Join(verdict, "; ")
}

func floatsText(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%g", x))
	}
	return strings.Join(s, "/")
}

func thresholdsText() string {
	var s []string
	for _, t := range artificial.ExcessThresholds {
		s = append(s, fmt.Sprintf("%g", t))
	}
	return "L-L* < " + strings.Join(s, "/")
}

// initSection (section kind "speedup-per-setting") renders the
// sensitivity table: one line per (init scale, threshold), one column per
// method.
func initSection(r *Run, p Params) string {
	bands := speedupBands(p.Factor)
	var b strings.Builder
	fmt.Fprintf(&b, "| init_scale | target | %s: median steps (reached) |", p.Baseline)
	for _, m := range p.Methods {
		b.WriteString(" " + m + " |")
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(p.Methods)) + "\n")
	for _, st := range fig2Settings(r, p) {
		fmt.Fprintf(&b, "| %g | %s | %s |", st.init, thresholdText(st.thr), stepsShort(st.gd))
		for _, m := range p.Methods {
			s, ok := st.cmp[m]
			if !ok {
				b.WriteString(" - |")
				continue
			}
			fmt.Fprintf(&b, " %s; %s/%s %s: %s |", stepsShort(s.Method), p.Baseline, m, s.Text(), s.Word(bands))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// keepBands: the paper gives no factor for keeping the fields; a speed-up
// of at least 1.5x (the whole interval) counts.
var keepBands = ratioBands{Reproduce: 1.5, Effect: 1.5, Neither: "not testable: neither reaches it on most seeds"}

// keepClaim (kind "keep-fields") compares each Goldstone-GD variant of
// p.Methods with fields kept between rounds (the paper's) against the same
// with fields reset (variant "<name>-reset"): steps(reset)/steps(kept) per
// threshold.
func keepClaim(r *Run, p Params) (string, string) {
	var ours, verdicts []string
	var seeds int
	for _, meth := range p.Methods {
		var parts, vparts []string
		for _, thr := range artificial.ExcessThresholds {
			m := r.bySeed(artificial.ExcessMetric(thr), nil, true)
			if m[meth] == nil || m[meth+"-reset"] == nil {
				break
			}
			reset, kept := pairOf(m, meth+"-reset", meth)
			seeds = len(kept)
			s := newSpeedup(reset, kept, r.horizonOf())
			p := fmt.Sprintf("%s: kept %s, reset %s, reset/kept %s", thresholdText(thr), stepsShort(kept), stepsShort(reset), s.Text())
			if both := s.BothText(); both != "" && s.neither() {
				p += " (" + both + ")"
			}
			parts = append(parts, p)
			vparts = append(vparts, fmt.Sprintf("%s %s", thresholdText(thr), s.Verdict(keepBands, "reset", "kept")))
		}
		if len(parts) == 0 {
			continue
		}
		ours = append(ours, meth+" ("+p.Labels[meth]+"): "+strings.Join(parts, ", "))
		verdicts = append(verdicts, meth+": "+strings.Join(vparts, ", "))
	}
	if len(ours) == 0 {
		return "", notMeasured + " (needs a variant and its -reset twin)"
	}
	return fmt.Sprintf("%d seeds; ", seeds) + strings.Join(ours, "; "),
		"keeping the fields (reset/kept steps, interval >= 1.5x: reproduces) " + strings.Join(verdicts, "; ")
}

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

// table2Bands: differences of the held-out log-likelihood within ±0.0005
// nats are no difference (the paper's Table 2 difference is +0.0006).
var table2Bands = diffBands{Band: 0.0005}

// fig4Bands: differences of the median cos(first, last) within ±0.02 are no
// effect; the paper's baseline has no word above 0.6 where Goldstone-GD's
// stay aligned, so a gain of at least 0.1 reproduces it.
var fig4Bands = diffBands{Band: 0.02, Reproduce: 0.1}

// dweBase is the baseline variant of a dwe run.
func dweBase(vs map[string]map[int]float64) string {
	for _, b := range []string{"adam", "adagrad", "baseline", "none"} {
		if vs[b] != nil {
			return b
		}
	}
	return ""
}

// sortedVariants returns the keys of m other than skip, sorted.
func sortedVariants(m map[string]map[int]float64, skip string) []string {
	var vs []string
	for v := range m {
		if v != skip {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs
}

// llIntervalClaim (kind "heldout-ll") is Table 2 with an interval:
// held-out log-likelihood per test point, each method minus the baseline,
// paired by seed. The verdict is judged on p.Method (the row's algorithm)
// and quotes the paper's difference p.PaperGain; the others are reported.
func llIntervalClaim(r *Run, p Params) (string, string) {
	method, paper := p.Method, fmt.Sprintf("(paper %+g)", p.PaperGain)
	m := r.bySeed("test_ll", nil, false)
	base := dweBase(m)
	fails := strings.Join(r.failures(), "; ")
	if v, ok := failedAll(r, method); ok {
		return fails, v
	}
	if base == "" || m[method] == nil {
		return fails, notMeasured + " (needs a baseline and " + method + ")"
	}
	var parts []string
	var verdict string
	for _, v := range sortedVariants(m, base) {
		b, x := pairOf(m, base, v)
		p := newPairedDiff(b, x)
		parts = append(parts, fmt.Sprintf("%s %.4f vs %s %.4f, difference %s", v, p.MethodM, base, p.BaseM, p.Text(5)))
		if v != method {
			continue
		}
		switch p.Word(table2Bands) {
		case "no difference":
			verdict = fmt.Sprintf("no difference: %s nats, interval within ±%g %s", p.Text(5), table2Bands.Band, paper)
		case "higher":
			verdict = fmt.Sprintf("reproduces the sign: %s better by %s nats %s", method, p.Text(5), paper)
		case "lower":
			verdict = fmt.Sprintf("reversed: %s worse, %s nats %s", method, p.Text(5), paper)
		case "no interval":
			verdict = fmt.Sprintf("not judged: %s nats from one seed, no interval", p.Text(5))
		default:
			verdict = fmt.Sprintf("inconclusive: %s nats, the interval is wider than ±%g and includes 0", p.Text(5), table2Bands.Band)
		}
	}
	if fails != "" {
		parts = append(parts, fails)
	}
	return fmt.Sprintf("test_ll (mean over %d seeds; difference to %s with its 95%% t interval) ", len(m[base]), base) + strings.Join(parts, "; "), verdict
}

// alignIntervalClaim (kind "alignment") is Fig. 4 with an interval: each
// trial's median over words of cos(first, last), p.Method minus the
// baseline, paired by seed.
func alignIntervalClaim(r *Run, p Params) (string, string) {
	method := p.Method
	m := r.bySeed("median_first_last_cos", nil, false)
	base := dweBase(m)
	fails := strings.Join(r.failures(), "; ")
	if v, ok := failedAll(r, method); ok {
		return fails, v
	}
	if base == "" || m[method] == nil {
		return fails, notMeasured + " (needs a baseline and " + method + ")"
	}
	var parts []string
	var verdict string
	for _, v := range sortedVariants(m, base) {
		b, x := pairOf(m, base, v)
		p := newPairedDiff(b, x)
		parts = append(parts, fmt.Sprintf("%s %.3f vs %s %.3f, difference %s", v, p.MethodM, base, p.BaseM, p.Text(3)))
		if v != method {
			continue
		}
		switch p.Word(fig4Bands) {
		case "no difference":
			verdict = fmt.Sprintf("no effect: %s, interval within ±%g", p.Text(3), fig4Bands.Band)
		case "reproduces":
			verdict = fmt.Sprintf("reproduces: %s more aligned by %s (interval >= %g)", method, p.Text(3), fig4Bands.Reproduce)
		case "higher":
			verdict = fmt.Sprintf("smaller effect: %s more aligned by %s (interval above 0, not above %g)", method, p.Text(3), fig4Bands.Reproduce)
		case "lower":
			verdict = fmt.Sprintf("reversed: %s less aligned, %s", method, p.Text(3))
		case "no interval":
			verdict = fmt.Sprintf("not judged: %s from one seed, no interval", p.Text(3))
		default:
			verdict = fmt.Sprintf("inconclusive: %s, the interval is wider than ±%g and includes 0", p.Text(3), fig4Bands.Band)
		}
	}
	if fails != "" {
		parts = append(parts, fails)
	}
	return fmt.Sprintf("median cos(first, last) (mean over %d seeds; difference to %s with its 95%% t interval) ", len(m[base]), base) + strings.Join(parts, "; "), verdict
}

// scheduleClaim (kind "schedule"): the decaying learning-rate schedule (variant NAME) against
// a constant rate (variant NAME-constant), paired by seed: held-out
// log-likelihood (decaying minus constant; the verdict, with Table 2's band)
// and the final training loss (reported).
func scheduleClaim(r *Run, _ Params) (string, string) {
	ll := r.bySeed("test_ll", nil, false)
	loss := r.bySeed("final_loss", nil, false)
	var ours, verdicts []string
	for _, v := range sortedVariants(ll, "") {
		if strings.HasSuffix(v, "-constant") || ll[v+"-constant"] == nil {
			continue
		}
		c, d := pairOf(ll, v+"-constant", v)
		p := newPairedDiff(c, d)
		lc, ld := pairOf(loss, v+"-constant", v)
		var rel []float64
		for i := range lc {
			rel = append(rel, (ld[i]-lc[i])/math.Abs(lc[i]))
		}
		lm, llo, lhi := figures.TInterval(rel, level)
		ours = append(ours, fmt.Sprintf("%s: test_ll decaying %.4f vs constant %.4f, difference %s; final loss decaying/constant - 1 = %+.2f%% [%+.2f%%, %+.2f%%]",
			v, p.MethodM, p.BaseM, p.Text(5), 100*lm, 100*llo, 100*lhi))
		w := p.Word(table2Bands)
		switch w {
		case "higher":
			w = "decaying better"
		case "lower":
			w = "constant better"
		}
		verdicts = append(verdicts, fmt.Sprintf("%s: %s (test_ll %s)", v, w, p.Text(5)))
	}
	if len(ours) == 0 {
		return "", notMeasured + " (needs a variant and its -constant twin)"
	}
	return strings.Join(ours, "; "), "held-out log-likelihood, ±0.0005 band: " + strings.Join(verdicts, "; ")
}

// overheadClaim (kind "overhead"): the share of Goldstone-GD's training
// time spent in gauge rounds, gauge_seconds / (wall_seconds - gap_seconds)
// (the gap records are a measurement every variant pays), per trial of the
// goldstone variants, against the paper's share p.PaperShare.
func overheadClaim(r *Run, p Params) (string, string) {
	paper := p.PaperShare
	g := r.bySeed("gauge_seconds", nil, false)
	w := r.bySeed("wall_seconds", nil, false)
	gp := r.bySeed("gap_seconds", nil, false)
	rounds := r.bySeed("gauge_rounds", nil, false)
	rejected := r.bySeed("gauge_rejected", nil, false)
	var parts []string
	var verdict []string
	for _, v := range sortedVariants(g, "") {
		if !strings.HasPrefix(v, "goldstone") {
			continue
		}
		var share []float64
		for s, gs := range g[v] {
			gap := gp[v][s]
			if math.IsNaN(gap) {
				gap = 0
			}
			share = append(share, gs/(w[v][s]-gap))
		}
		slices.Sort(share)
		if len(share) == 0 {
			continue
		}
		med := figures.Median(share)
		p := fmt.Sprintf("%s: %.1f%% (median of %d trials; %.1f%%-%.1f%%)", v, 100*med, len(share), 100*share[0], 100*share[len(share)-1])
		if a := acceptedText(rounds[v], rejected[v]); a != "" {
			p += "; " + a
		}
		parts = append(parts, p)
		word := "about the paper's"
		switch {
		case med > 2*paper:
			word = "higher than the paper's"
		case med < paper/2:
			word = "lower than the paper's"
		}
		verdict = append(verdict, fmt.Sprintf("%s: %s (%.1f%% vs %.0f%%)", v, word, 100*med, 100*paper))
	}
	if len(parts) == 0 {
		return "", notMeasured + " (needs a goldstone variant)"
	}
	return "share of training time in gauge rounds, gauge_seconds / (wall_seconds - gap_seconds): " + strings.Join(parts, "; "),
		strings.Join(verdict, "; ") + " (within a factor 2 of the paper's counts as about the paper's; machine and sizes differ)"
}

// acceptedText is the share of gauge rounds the guard kept, summed over a
// variant's trials: "accepted 388 of 400 gauge rounds (97.0%)"; "" without
// rounds.
func acceptedText(rounds, rejected map[int]float64) string {
	var n, rej float64
	for s, k := range rounds {
		if finite(k) && finite(rejected[s]) {
			n += k
			rej += rejected[s]
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("accepted %.0f of %.0f gauge rounds (%.1f%%)", n-rej, n, 100*(n-rej)/n)
}

// dweKeepClaim (kind "keep-fields-gap"): Goldstone-GD with the fields kept (variant NAME) against
// reset (NAME-reset) on word embeddings: steps until the gauge gap stays
// below 1% of psi (reset/kept, censored ratio with its bootstrap interval),
// and the held-out log-likelihood (reported).
func dweKeepClaim(r *Run, _ Params) (string, string) {
	st := r.bySeed("steps_to_gap_1pct", nil, true)
	ll := r.bySeed("test_ll", nil, false)
	var ours, verdicts []string
	for _, v := range sortedVariants(st, "") {
		if strings.HasSuffix(v, "-reset") || st[v+"-reset"] == nil {
			continue
		}
		reset, kept := pairOf(st, v+"-reset", v)
		s := newSpeedup(reset, kept, r.horizonOf())
		lr, lk := pairOf(ll, v+"-reset", v)
		p := newPairedDiff(lr, lk)
		ours = append(ours, fmt.Sprintf("%s: gap < 1%% psi from kept %s, reset %s, reset/kept %s; test_ll kept - reset %s",
			v, stepsShort(kept), stepsShort(reset), s.Text(), p.Text(5)))
		verdicts = append(verdicts, fmt.Sprintf("%s: %s", v, s.Verdict(keepBands, "reset", "kept")))
	}
	if len(ours) == 0 {
		return "", notMeasured + " (needs a variant and its -reset twin)"
	}
	return strings.Join(ours, "; "), "keeping the fields (reset/kept steps, interval >= 1.5x: reproduces) " + strings.Join(verdicts, "; ")
}
