package artificial

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"goldstone/experiment/settings"
	"goldstone/report"
	"goldstone/report/figures"
)

// (TrainSettings: lambda, time_steps).
func scalingPoints(all []report.TrialResult) []report.ScalingPoint {
	out := make([]report.ScalingPoint, len(all))
	for i, r := range all {
		s := settings.MustDecode[TrainSettings](r.Trial.Settings)
		out[i] = report.ScalingPoint{Variant: r.Variant, Lambda: s.Prior.Lambda, T: s.Data.TimeSteps, Summary: r.Summary}
	}
	return out
}

// Scaling aggregates the trials of a chain-length sweep (several T and
// lambda, several seeds) into cells and log-log slopes, in metric, variant
// (first appearance), lambda, T order. It returns nothing when the trials
// sweep the chain length.
func scalingReport(dir string, points []report.ScalingPoint) (string, error) {
	cells, fits := report.Scaling(points)
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
	for _, m := range report.ScalingMetrics {
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
