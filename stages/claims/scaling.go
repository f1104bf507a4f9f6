package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"goldstone/stages/artificial"
)

// scalingClaim (kind "scaling"): log-log slopes of steps to L-L* < 1
// against T at the paper's lambda p.Lambda (else the middle one swept), of
// the baseline p.Baseline (GD: theory T^2 at a constant rate) and
// p.Method (Goldstone-GD, which should grow more slowly).
func scalingClaim(r *Run, p Params) (string, string) {
	var all []artificial.ScalingPoint
	for _, t := range r.trials {
		T, _ := t.params["time_steps"].(float64)
		lam, _ := t.params["lambda"].(float64)
		all = append(all, artificial.ScalingPoint{Variant: t.variant, Lambda: lam, T: int(T), Summary: t.sum})
	}
	_, fits := artificial.Scaling(all)
	if len(fits) == 0 {
		return "fewer than two chain lengths in the run", notMeasured
	}
	lam := p.Lambda
	has := false
	var lams []float64
	for _, f := range fits {
		has = has || f.Lambda == lam
		if !slices.Contains(lams, f.Lambda) {
			lams = append(lams, f.Lambda)
		}
	}
	if !has {
		slices.Sort(lams)
		lam = lams[len(lams)/2]
	}
	slope := map[string]artificial.ScalingFit{}
	var parts []string
	for _, f := range fits {
		if f.Lambda != lam {
			continue
		}
		if f.Metric == "steps_to_excess_1" {
			slope[f.Variant] = f
		}
		s := "n/a"
		if !math.IsNaN(f.Slope) {
			s = fmt.Sprintf("%.2f", f.Slope)
		}
		parts = append(parts, fmt.Sprintf("%s %s: slope %s (%d T, %d censored)", f.Variant, f.Metric, s, f.Points, f.Censored))
	}
	ours := fmt.Sprintf("lambda = %g: ", lam) + strings.Join(parts, "; ")
	gd, ok := slope[p.Baseline]
	gs, ok2 := slope[p.Method]
	switch {
	case !ok || !ok2:
		return ours, "inconclusive: needs variants " + p.Baseline + " and " + p.Method
	case math.IsNaN(gd.Slope) && gd.Censored > 0:
		return ours, "GD does not reach L-L* < 1 at enough chain lengths to fit a slope (censored): growth faster than the run can show"
	case math.IsNaN(gd.Slope) || math.IsNaN(gs.Slope):
		return ours, "inconclusive: too few chain lengths reached to fit slopes"
	case gd.Slope >= 1.5 && gs.Slope <= gd.Slope-0.5:
		return ours, fmt.Sprintf("supports the mechanism: GD grows like T^%.1f (theory T^2 at a constant rate), Goldstone-GD like T^%.1f", gd.Slope, gs.Slope)
	case gd.Slope < 1:
		return ours, fmt.Sprintf("does not support the mechanism: GD grows only like T^%.1f", gd.Slope)
	}
	return ours, fmt.Sprintf("inconclusive: GD grows like T^%.1f, Goldstone-GD like T^%.1f", gd.Slope, gs.Slope)
}
