package artificial

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"goldstone/experiment/settings"
	"goldstone/optim"
	"goldstone/report"
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
// (TrainSettings: lambda, time_steps).
func scalingPoints(all []report.TrialResult) []ScalingPoint {
	out := make([]ScalingPoint, len(all))
	for i, r := range all {
		s := settings.MustDecode[TrainSettings](r.Trial.Settings)
		out[i] = ScalingPoint{Variant: r.Variant, Lambda: s.Prior.Lambda, T: s.Data.TimeSteps, Summary: r.Summary}
	}
	return out
}

// Scaling aggregates the trials of a chain-length sweep (several T and
// lambda, several seeds) into cells and log-log slopes, in metric, variant
// (first appearance), lambda, T order. It returns nothing when the trials
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
// sweep the chain length.
func scalingReport(dir string, points []ScalingPoint) (string, error) {
	cells, fits := Scaling(points)
	if len(cells) == 0 {
		return "", nil
	}
	var lambdas []float64
	var variants []string
	for _, c := range cells {
		if !slices.Contains(lambdas, c.Lambda) {
			lambdas = append(lambdas, c.Lambda)
		}
		if !slices.Contains(variants, c.Variant) {
			variants = append(variants, c.Variant)
		}
	}
	slices.Sort(lambdas)
	var panels []figures.Panel
	for _, m := range ScalingMetrics {
		for _, lam := range lambdas {
			p := figures.Panel{Title: fmt.Sprintf("%s, lambda = %g", m, lam), XLabel: "chain length T", YLabel: "median steps over seeds", LogX: true, LogY: true}
			var ref *figures.Series
			var tlo, thi float64 = math.Inf(1), 0
			for _, v := range variants {
				s := figures.Series{Name: v, Group: v}
				for _, c := range cells {
					if c.Metric != m || c.Lambda != lam || c.Variant != v {
						continue
					}
					tlo, thi = min(tlo, float64(c.T)), max(thi, float64(c.T))
					if math.IsInf(c.Median, 1) {
						continue
					}
					s.X = append(s.X, float64(c.T))
					s.Y = append(s.Y, c.Median)
				}
				if ref == nil && len(s.X) > 0 {
					ref = &figures.Series{Name: "T^2 reference", Dashed: true, Color: color.Gray{Y: 110},
						X: []float64{s.X[0]}, Y: []float64{s.Y[0]}}
				}
				p.Series = append(p.Series, s)
			}
			if ref != nil {
				t0, y0 := ref.X[0], ref.Y[0]
				ref.X = []float64{tlo, thi}
				ref.Y = []float64{y0 * (tlo / t0) * (tlo / t0), y0 * (thi / t0) * (thi / t0)}
				p.Series = append(p.Series, *ref)
			}
			panels = append(panels, p)
		}
	}
	err := figures.Curves(filepath.Join(dir, "scaling.png"), figures.CurveSpec{
		Title: "steps against chain length T (median over seeds; not drawn: not reached on half the seeds)",
		Cols:  len(lambdas), Panels: panels,
	})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("\n## Steps against chain length T\n\n![scaling](scaling.png)\n\n")
	b.WriteString("Median over seeds; `never` = not reached within the run on at least half the seeds (reached/seeds in brackets).\n\n")
	b.WriteString("| metric | variant | lambda | T | median steps | reached |\n|---|---|---|---|---|---|\n")
	for _, c := range cells {
		med := "never"
		if !math.IsInf(c.Median, 1) {
			med = fmt.Sprintf("%.0f", c.Median)
		}
		fmt.Fprintf(&b, "| %s | %s | %g | %d | %s | %d/%d |\n", c.Metric, c.Variant, c.Lambda, c.T, med, c.Reached, c.Seeds)
	}
	b.WriteString("\nLog-log slope of median steps against T (least squares over the T whose median was reached; with censored T the true growth is steeper than the slope). The Goldstone-mode theory predicts 2 for plain GD at a constant rate.\n\n")
	b.WriteString("| metric | variant | lambda | slope | points | censored T |\n|---|---|---|---|---|---|\n")
	for _, f := range fits {
		sl := "n/a"
		if !math.IsNaN(f.Slope) {
			sl = fmt.Sprintf("%.2f", f.Slope)
		}
		fmt.Fprintf(&b, "| %s | %s | %g | %s | %d | %d |\n", f.Metric, f.Variant, f.Lambda, sl, f.Points, f.Censored)
	}
	return b.String(), nil
}
