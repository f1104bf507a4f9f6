package runs

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
)

// Headline is a summary metric a report leads with, and which way is
// better.
type Headline struct {
	Metric string
	Lower  bool // lower is better (steps, losses); else higher (likelihoods)
	// Range is the interval the metric's values lie in; the confidence
	// interval of a mean is cut to it (the mean lies in it too, so the
	// cut interval covers the mean whenever the uncut one does: with two
	// seeds the t-interval of steps otherwise reaches far below zero).
	// The zero Range is the whole line.
	Range Range
}

// Range is a closed interval [Lo, Hi]; Lo == Hi (the zero Range) means
// the whole line.
type Range struct{ Lo, Hi float64 }

// The ranges of the headline metrics.
var (
	NonNegative  = Range{0, math.Inf(1)} // steps, a loss above its optimum, an RMSE
	UnitInterval = Range{0, 1}           // an AUC, a fraction
	Cosine       = Range{-1, 1}          // a cosine similarity
)

// cut returns [lo, hi] intersected with r.
func (r Range) cut(lo, hi float64) (float64, float64) {
	if r.Lo == r.Hi {
		return lo, hi
	}
	return math.Max(lo, r.Lo), math.Min(hi, r.Hi)
}

// Cell is the statistics of one metric over the trials of one variant and
// one combination of the swept settings (the trials that differ only by
// seed).
type Cell struct {
	Variant  string
	Settings []string // values of Aggregate.Settings, in order
	N        int      // trials with the metric
	Never    int      // of them never reached the threshold (Never)
	Missing  int      // of them with no value (NaN)
	// Mean, SD and the 95% confidence interval of the mean (Student's t,
	// cut to the metric's Range) are over the finite values; NaN where
	// there are too few (SD and the interval need two).
	Mean, SD, Lo, Hi float64
	// Median counts a never as +Inf (a censored median): Never when at
	// least half the trials never reached the threshold.
	Median float64
	Values []float64 // the values, in enumeration order (the seed points)
	Best   bool
}

// Finite is the number of finite values.
func (c Cell) Finite() int { return c.N - c.Never - c.Missing }

// Aggregate is one headline metric of a run over seeds: one Cell per
// variant and combination of swept settings, in enumeration order.
type Aggregate struct {
	Headline
	Settings []string // the swept settings (those that take several values within a variant), sorted; the seed is not one
	Cells    []Cell
}

// Unswept are the trial parameters never treated as swept settings: the
// seed (the aggregates are over it), and what names the trial.
var unswept = map[string]bool{"seed": true, "name": true, "variant": true}

// TrialVariant is a trial's variant: its "variant" parameter, else its
// "gauge" (runs of older versions), as text.
func TrialVariant(params map[string]string) string {
	if v := paramText(params["variant"]); v != "" {
		return v
	}
	return paramText(params["gauge"])
}

// paramText is a parameter's JSON text as plain text: a string unquoted.
func paramText(s string) string {
	var str string
	if json.Unmarshal([]byte(s), &str) == nil {
		return str
	}
	return s
}

// SweptSettings returns the parameters that take more than one value
// within some variant among the trials (not the seed), sorted.
func SweptSettings(trials []TrialRow) []string {
	vals := map[string]map[string]string{} // variant -> key -> first value
	set := map[string]bool{}
	for _, t := range trials {
		v := TrialVariant(t.Params)
		if vals[v] == nil {
			vals[v] = map[string]string{}
		}
		for k, p := range t.Params {
			if unswept[k] {
				continue
			}
			if f, ok := vals[v][k]; !ok {
				vals[v][k] = p
			} else if f != p {
				set[k] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Aggregates computes, for each headline metric a trial has, its
// statistics over seeds per variant and swept setting (swept among all the
// run's trials, so a partial run's cells keep their settings), over the
// trials that have a result: done (or cached) and diverged (whose thresholds
// count as never and final values as missing). The best cell of each
// metric is marked: the fewest nevers, then the best mean; none when no
// cell has a value.
func Aggregates(trials []TrialRow, heads []Headline) []Aggregate {
	var ok []TrialRow
	for _, t := range trials {
		if HasResult(t.Status) {
			ok = append(ok, t)
		}
	}
	// The swept settings of every trial, ended or not: a run in progress
	// whose finished trials share one dim keeps its dim column.
	swept := SweptSettings(trials)
	var out []Aggregate
	for _, h := range heads {
		a := Aggregate{Headline: h, Settings: swept}
		index := map[string]int{}
		for _, t := range ok {
			v, has := t.Summary[h.Metric]
			if !has {
				continue
			}
			c := Cell{Variant: TrialVariant(t.Params)}
			for _, k := range swept {
				c.Settings = append(c.Settings, paramText(t.Params[k]))
			}
			key, _ := json.Marshal(append([]string{c.Variant}, c.Settings...))
			i, seen := index[string(key)]
			if !seen {
				i = len(a.Cells)
				index[string(key)] = i
				a.Cells = append(a.Cells, c)
			}
			a.Cells[i].Values = append(a.Cells[i].Values, v)
		}
		if len(a.Cells) == 0 {
			continue
		}
		for i := range a.Cells {
			a.Cells[i].summarize(h.Range)
		}
		a.markBest()
		out = append(out, a)
	}
	return out
}

// summarize fills the statistics from Values.
func (c *Cell) summarize(r Range) {
	c.N = len(c.Values)
	var fin []float64
	for _, v := range c.Values {
		switch {
		case IsNever(v):
			c.Never++
		case math.IsNaN(v) || math.IsInf(v, 0):
			c.Missing++
		default:
			fin = append(fin, v)
		}
	}
	c.Mean, c.SD, c.Lo, c.Hi = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if k := len(fin); k > 0 {
		var sum float64
		for _, v := range fin {
			sum += v
		}
		c.Mean = sum / float64(k)
		if k > 1 {
			var ss float64
			for _, v := range fin {
				d := v - c.Mean
				ss += float64(d * d)
			}
			c.SD = math.Sqrt(ss / float64(k-1))
			half := float64(tQuantile975(k-1)*c.SD) / math.Sqrt(float64(k))
			c.Lo, c.Hi = r.cut(c.Mean-half, c.Mean+half)
		}
	}
	c.Median = CensoredMedian(c.Values)
}

// markBest marks the best cell: the fewest nevers, then the best mean
// (lower or higher as the metric says); cells without a finite value
// never are.
func (a *Aggregate) markBest() {
	best := -1
	for i, c := range a.Cells {
		if c.Finite() == 0 {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := a.Cells[best]
		switch {
		case c.Never != b.Never:
			if c.Never < b.Never {
				best = i
			}
		case a.Lower && c.Mean < b.Mean, !a.Lower && c.Mean > b.Mean:
			best = i
		}
	}
	if best >= 0 && len(a.Cells) > 1 && !TiedWithNext(a.Cells, best, a.Lower) {
		a.Cells[best].Best = true
	}
}

// TiedWithNext reports whether cells[best] cannot be told from the next
// best cell (the fewest nevers, then the best mean, among the others with
// a finite value): the same number of nevers and Tied means.
func TiedWithNext(cells []Cell, best int, lower bool) bool {
	next := -1
	for i, c := range cells {
		if i == best || c.Finite() == 0 {
			continue
		}
		if next < 0 {
			next = i
			continue
		}
		n := cells[next]
		switch {
		case c.Never != n.Never:
			if c.Never < n.Never {
				next = i
			}
		case lower && c.Mean < n.Mean, !lower && c.Mean > n.Mean:
			next = i
		}
	}
	return next >= 0 && cells[next].Never == cells[best].Never && Tied(cells[best], cells[next])
}

// Tied reports whether two cells' means cannot be told apart: equal
// within 1e-9 of their size, or, where both have two or more finite values
// (seeds), the 95% Welch interval of the difference of the means holds 0.
func Tied(a, b Cell) bool {
	d := math.Abs(a.Mean - b.Mean)
	if d <= 1e-9*math.Max(math.Abs(a.Mean), math.Abs(b.Mean)) {
		return true
	}
	na, nb := a.Finite(), b.Finite()
	if na < 2 || nb < 2 || math.IsNaN(a.SD) || math.IsNaN(b.SD) {
		return false
	}
	va := float64(a.SD*a.SD) / float64(na)
	vb := float64(b.SD*b.SD) / float64(nb)
	if va+vb == 0 {
		return false
	}
	den := float64(va*va)/float64(na-1) + float64(vb*vb)/float64(nb-1)
	df := max(1, int(float64((va+vb)*(va+vb))/den)) // Welch-Satterthwaite, rounded down
	return d <= float64(tQuantile975(df)*math.Sqrt(va+vb))
}

// t975 are the 0.975 quantiles of Student's t with 1..30 degrees of
// freedom (gonum's distuv.StudentsT, printed once: the same bits on every
// build, which a quantile computed with math's special functions is not).
var t975 = [...]float64{
	12.706204736174692, 4.302652729749462, 3.182446305283708, 2.7764451051977934, 2.570581835636315,
	2.4469118511449692, 2.364624251592785, 2.3060041352041662, 2.262157162798205, 2.2281388519862744,
	2.2009851600916392, 2.178812829667228, 2.1603686564627926, 2.1447866879178026, 2.1314495455597733,
	2.1199052992212533, 2.109815577833316, 2.1009220402410373, 2.09302405440831, 2.0859634472658626,
	2.0796138447276817, 2.0738730679040236, 2.068657610419049, 2.063898561628026, 2.059538552753296,
	2.0555294386428717, 2.051830516480288, 2.0484071417952427, 2.045229642132703, 2.042272456301239,
}

// The Cornish-Fisher expansion of t's quantile in 1/df around the normal
// one, z = 1.96: exact constants, evaluated by the compiler.
const (
	z975 = 1.959963984540054
	cf1  = (z975*z975*z975 + z975) / 4
	cf2  = (5*z975*z975*z975*z975*z975 + 16*z975*z975*z975 + 3*z975) / 96
	cf3  = (3*z975*z975*z975*z975*z975*z975*z975 + 19*z975*z975*z975*z975*z975 + 17*z975*z975*z975 - 15*z975) / 384
	cf4  = (79*z975*z975*z975*z975*z975*z975*z975*z975*z975 + 776*z975*z975*z975*z975*z975*z975*z975 +
		1482*z975*z975*z975*z975*z975 - 1920*z975*z975*z975 - 945*z975) / 92160
)

// tQuantile975 is the 0.975 quantile of Student's t with df >= 1 degrees
// of freedom: the table up to 30, the expansion beyond (within 1e-6).
func tQuantile975(df int) float64 {
	if df <= len(t975) {
		return t975[df-1]
	}
	v := float64(df)
	v2 := float64(v * v)
	return z975 + cf1/v + cf2/v2 + cf3/float64(v2*v) + cf4/float64(v2*v2)
}

// CensoredMedian is the median of values with a never counted as +Inf and
// NaN left out; NaN when nothing is left.
func CensoredMedian(values []float64) float64 {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}
