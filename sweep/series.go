package sweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"goldstone/runs"
	"goldstone/trialio"
)

// TrialSeries are the step-wise series of some trials: trial key (id or
// name) -> metric -> points in step order. A step may appear more than
// once where the series was read from a file (a doubled point); the
// results database holds each (trial, metric, step) once.
type TrialSeries map[string]map[string][]runs.Point

// SeriesOf returns a series file's points by metric, in step order (a
// stable sort: a doubled step keeps its two points, in file order).
func SeriesOf(s *trialio.Series) map[string][]runs.Point {
	out := map[string][]runs.Point{}
	for i, m := range s.Metric {
		out[m] = append(out[m], runs.Point{Step: int(s.Step[i]), Value: s.Value[i]})
	}
	for _, ps := range out {
		slices.SortStableFunc(ps, func(a, b runs.Point) int { return a.Step - b.Step })
	}
	return out
}

// SeriesDrift is one step of a trial's series whose points differ between
// two records of it: A and B are the values at Step in each (none: the
// step is missing there; two or more: a doubled point).
type SeriesDrift struct {
	Trial, Metric string
	Step          int
	A, B          []float64
}

// values renders the values of one side of a drift: "1.5", "missing",
// "1.5 twice", "1.5 and 1.7".
func values(vs []float64) string {
	switch {
	case len(vs) == 0:
		return "missing"
	case len(vs) == 2 && trialio.SameValue(vs[0], vs[1], 0):
		return fmtValue(vs[0]) + " twice"
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmtValue(v)
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + " (a doubled step)"
	}
	return parts[0]
}

func fmtValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// CompareSeries compares two records of the same trials' series point by
// point: for each trial and metric (timings, _seconds, aside), every step
// must hold exactly one point in each, with values that agree within
// tol[metric] (trialio.SameValue; absent: exactly). A step missing on one
// side, doubled on either, or with other values is a drift; so is every
// point of a trial or metric that one side lacks. It returns the drifts in
// (trial, metric, step) order and the number of points compared.
func CompareSeries(a, b TrialSeries, tol map[string]float64) ([]SeriesDrift, int) {
	var out []SeriesDrift
	n := 0
	for _, t := range unionKeys(a, b) {
		ma, mb := a[t], b[t]
		for _, m := range unionKeys(ma, mb) {
			if trialio.IsTiming(m) {
				continue
			}
			pa, pb := ma[m], mb[m]
			n += len(pa)
			i, j := 0, 0
			for i < len(pa) || j < len(pb) {
				step := nextStep(pa, pb, i, j)
				var va, vb []float64
				for ; i < len(pa) && pa[i].Step == step; i++ {
					va = append(va, pa[i].Value)
				}
				for ; j < len(pb) && pb[j].Step == step; j++ {
					vb = append(vb, pb[j].Value)
				}
				if len(va) != 1 || len(vb) != 1 || !trialio.SameValue(va[0], vb[0], tol[m]) {
					out = append(out, SeriesDrift{Trial: t, Metric: m, Step: step, A: va, B: vb})
				}
			}
		}
	}
	return out, n
}

// nextStep is the smaller of the steps at pa[i] and pb[j] (either may be
// past its end, not both).
func nextStep(pa, pb []runs.Point, i, j int) int {
	switch {
	case i >= len(pa):
		return pb[j].Step
	case j >= len(pb):
		return pa[i].Step
	}
	return min(pa[i].Step, pb[j].Step)
}

// DriftLines renders drifts for people, at most perSeries lines per trial
// and metric (a changed code or setting moves every point: the first steps
// say where, a count says how many more), with labels a and b for the two
// sides ("recorded", "now").
func DriftLines(drifts []SeriesDrift, a, b string, perSeries int) []string {
	var out []string
	for i := 0; i < len(drifts); {
		j := i
		for j < len(drifts) && drifts[j].Trial == drifts[i].Trial && drifts[j].Metric == drifts[i].Metric {
			j++
		}
		for k := i; k < j && k < i+perSeries; k++ {
			d := drifts[k]
			out = append(out, fmt.Sprintf("trial %q series %s step %d: %s %s, %s %s", d.Trial, d.Metric, d.Step, a, values(d.A), b, values(d.B)))
		}
		if more := j - i - perSeries; more == 1 {
			out = append(out, fmt.Sprintf("trial %q series %s: 1 more step differs", drifts[i].Trial, drifts[i].Metric))
		} else if more > 1 {
			out = append(out, fmt.Sprintf("trial %q series %s: %d more steps differ", drifts[i].Trial, drifts[i].Metric, more))
		}
		i = j
	}
	return out
}
