package report

import (
	"math"
	"slices"

	"goldstone/optim"
	"goldstone/report/figures"
)

// ScalingMetrics are the summary metrics the chain-length scaling report
// puts against T: steps to L - L* < 1 and steps until the gauge gap stays
// below 1% of psi.
var ScalingMetrics = []string{"steps_to_excess_1", "steps_to_gap_1pct"}

// ScalingCell is one (metric, variant, lambda, T) of a chain-length sweep:
// the seeds' values with "never" (runs.Never, +Inf: not reached within the run; NaN in results of older versions) counted
// as +Inf, so the median is censored, never flattered.
type ScalingCell struct {
	Metric, Variant string
	Lambda          float64
	T               int
	Seeds, Reached  int
	Median          float64 // +Inf when at least half the seeds did not reach it
}

// ScalingFit is the least-squares slope of log(median steps) against
// log(T) for one (metric, variant, lambda) over the T whose median is
// finite; Points says how many those are, Censored how many T were left
// out because the median was not reached (then the slope is a lower bound
// on the true growth). Slope is NaN with fewer than 2 points.
type ScalingFit struct {
	Metric, Variant  string
	Lambda           float64
	Slope            float64
	Points, Censored int
}

// ScalingPoint is one trial of a chain-length sweep: its variant, lambda,
// chain length T and summary metrics.
type ScalingPoint struct {
	Variant string
	Lambda  float64
	T       int
	Summary map[string]float64
}

// scalingPoints reads the points of a report's trials from their settings
// have fewer than two chain lengths.
func Scaling(points []ScalingPoint) ([]ScalingCell, []ScalingFit) {
	type key struct {
		metric, variant string
		lambda          float64
		t               int
	}
	vals := map[key][]float64{}
	var variants []string
	var lambdas []float64
	var ts []int
	for _, r := range points {
		v, lam, t := r.Variant, r.Lambda, r.T
		if !slices.Contains(variants, v) {
			variants = append(variants, v)
		}
		if !slices.Contains(lambdas, lam) {
			lambdas = append(lambdas, lam)
		}
		if !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
		for _, m := range ScalingMetrics {
			x, ok := r.Summary[m]
			if !ok || math.IsNaN(x) {
				x = math.Inf(1)
			}
			k := key{m, v, lam, t}
			vals[k] = append(vals[k], x)
		}
	}
	if len(ts) < 2 {
		return nil, nil
	}
	slices.Sort(lambdas)
	slices.Sort(ts)
	var cells []ScalingCell
	var fits []ScalingFit
	for _, m := range ScalingMetrics {
		for _, v := range variants {
			for _, lam := range lambdas {
				var lx, ly []float64
				censored := 0
				for _, t := range ts {
					xs, ok := vals[key{m, v, lam, t}]
					if !ok {
						continue
					}
					c := ScalingCell{Metric: m, Variant: v, Lambda: lam, T: t, Seeds: len(xs), Median: figures.CensoredMedian(xs)}
					for _, x := range xs {
						if !math.IsInf(x, 1) {
							c.Reached++
						}
					}
					cells = append(cells, c)
					if math.IsInf(c.Median, 1) || c.Median <= 0 {
						censored++
						continue
					}
					lx = append(lx, optim.Log(float64(t)))
					ly = append(ly, optim.Log(c.Median))
				}
				fits = append(fits, ScalingFit{Metric: m, Variant: v, Lambda: lam, Slope: slope(lx, ly), Points: len(lx), Censored: censored})
			}
		}
	}
	return cells, fits
}

// slope is the least-squares slope of y against x, NaN with fewer than two
// distinct x.
func slope(x, y []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(x))
	var sxy, sxx float64
	for i := range x {
		sxy += float64((x[i] - mx) * (y[i] - my))
		sxx += float64((x[i] - mx) * (x[i] - mx))
	}
	if sxx == 0 {
		return math.NaN()
	}
	return sxy / sxx
}

// scalingReport draws scaling.png (one panel per metric and lambda: median
// steps against T on log-log axes per variant, with a dashed T^2 line
// through the first finite point of the first variant) and returns a
// Markdown section with the cells and slopes; "" when the trials do not
