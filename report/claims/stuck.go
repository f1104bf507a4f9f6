package claims

import (
	"fmt"
	"slices"
	"strings"

	"goldstone/report/figures"
	"goldstone/train"
)

// stuckClaim (kind "stuck") reads a long run of one method (GD run 10x the
// paper's length) at the paper's length p.Horizon: of the seeds that have
// not reached L - L* < 1 by then, how many reach it by the end of the long
// run, and where the others end (final L - L*). Stuck: none of them gets
// there in the extra steps; slow: most do.
func stuckClaim(r *Run, p Params) (string, string) {
	metric := train.ExcessMetric(train.ExcessThresholds[0])
	m := r.bySeed(metric, nil, true)[p.Method]
	fin := r.bySeed("final_excess", nil, true)[p.Method]
	if len(m) == 0 {
		return notMeasured, notMeasured + " (needs variant " + p.Method + ")"
	}
	var early, late, never int
	var ends []float64
	for seed, v := range m {
		switch {
		case finite(v) && v <= p.Horizon:
			early++
		case finite(v):
			late++
		default:
			never++
			if e, ok := fin[seed]; ok && finite(e) {
				ends = append(ends, e)
			}
		}
	}
	n := len(m)
	ours := fmt.Sprintf("%s on %d seeds, %.0f steps: %d reach %s within %.0f steps, %d more by the end, %d never",
		p.Method, n, r.horizonOf(), early, thresholdText(train.ExcessThresholds[0]), p.Horizon, late, never)
	if len(ends) > 0 {
		ours += fmt.Sprintf(" (final L - L* of those: median %.3g, range %.3g-%.3g)", figures.Median(ends), slices.Min(ends), slices.Max(ends))
	}
	if f := r.failures(); len(f) > 0 {
		ours += "; " + strings.Join(f, "; ")
	}
	rest := late + never
	var verdict string
	switch {
	case rest == 0:
		verdict = fmt.Sprintf("not testable: every seed reaches the target within %.0f steps", p.Horizon)
	case late == 0:
		verdict = fmt.Sprintf("stuck, not slow: none of the %d seeds that miss the target at %.0f steps reaches it in %.0fx the steps", rest, p.Horizon, r.horizonOf()/p.Horizon)
	case 2*late > rest:
		verdict = fmt.Sprintf("slow, not stuck: %d of the %d seeds that miss the target at %.0f steps reach it later", late, rest, p.Horizon)
	default:
		verdict = fmt.Sprintf("mostly stuck: %d of the %d seeds that miss the target at %.0f steps reach it later", late, rest, p.Horizon)
	}
	return ours, verdict
}
