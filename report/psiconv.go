package report

import (
	"encoding/json"
	"maps"
	"math"
	"slices"

	"goldstone/runs"
)

// PsiTolerances are the bands of the psi-convergence metric (paper Fig. 3:
// "both algorithms converge to the same value of psi, but Goldstone-GD
// converges at least an order of magnitude faster"): steps_to_psi_10pct and
// steps_to_psi_1pct.
var PsiTolerances = []float64{0.1, 0.01}

// PsiMetricName is the name of the psi-convergence metric for a tolerance
// (steps_to_psi_1pct for 0.01).
func PsiMetricName(tol float64) string {
	switch tol {
	case 0.1:
		return "steps_to_psi_10pct"
	case 0.01:
		return "steps_to_psi_1pct"
	}
	b, _ := json.Marshal(100 * tol)
	return "steps_to_psi_" + string(b) + "pct"
}

// StepsToPsiWithin returns the first recorded step from which psi stays
// within tol of ref, |psi - ref| <= tol |ref|, up to the last record, or
// runs.Never (+Inf) when it is within only at the last record or not at all
// (staying needs two records). steps and psi are one trial's psi series in
// step order.
func StepsToPsiWithin(steps, psi []float64, ref, tol float64) float64 {
	band := tol * math.Abs(ref)
	k := len(psi)
	for k > 0 && math.Abs(psi[k-1]-ref) <= band {
		k--
	}
	if k >= len(psi)-1 {
		return runs.Never
	}
	return steps[k]
}

// PsiTrial is one trial's psi series and the group of trials it is
// compared with (PsiGroups).
type PsiTrial struct {
	Group      string
	Steps, Psi []float64
	// Diverged: the trial's training diverged. Its psi converged to
	// nothing: its steps are runs.Never, and its last psi sets no
	// reference.
	Diverged bool
	// MaxGapRel is the largest gauge_gap/psi the trial recorded
	// (max_gap_rel; NaN or 0: none), which sets its group's gap-tied band.
	MaxGapRel float64
}

// GapBandFraction: the gap-tied psi band of a group is this fraction of the
// largest gap/psi any of its trials recorded (issue 27: a fixed 1% band
// lies above a gap that peaks at 0.3% of psi and cannot see the gauge
// modes; a band tied to the gap can).
const GapBandFraction = 0.1

// PsiConvergence is the psi-convergence metric of a run, a cross-trial
// quantity: per group of trials that differ only in the optimizer (variant)
// and the seed, the reference is the lowest final psi over the group, and
// each trial's steps_to_psi_* is the first step from which its psi stays
// within the band around it (StepsToPsiWithin). Ref[i] is trial i's
// reference and Steps[tol][i] its steps (runs.Never: never; a diverged
// trial's are never, and it sets no reference). A trial without psi
// records has NaN steps (not measured) and does not set its group's
// reference.
type PsiConvergence struct {
	Ref   []float64
	Steps map[float64][]float64
	// GapTol[i] is trial i's gap-tied band (GapBandFraction times the
	// largest max_gap_rel of its group's trials that did not diverge; NaN
	// when none recorded a gap) and GapSteps[i] its steps until psi stays
	// within that band of the reference (steps_to_psi_gaptol).
	GapTol, GapSteps []float64
}

// ComputePsiConvergence computes the metric for trials at the tolerances tols.
func ComputePsiConvergence(trials []PsiTrial, tols []float64) PsiConvergence {
	ref := map[string]float64{}
	for _, t := range trials {
		if len(t.Psi) == 0 || t.Diverged {
			continue
		}
		f := t.Psi[len(t.Psi)-1]
		if math.IsNaN(f) {
			continue
		}
		if r, ok := ref[t.Group]; !ok || f < r {
			ref[t.Group] = f
		}
	}
	gapTol := map[string]float64{}
	for _, t := range trials {
		if !t.Diverged && t.MaxGapRel > 0 && !math.IsInf(t.MaxGapRel, 0) {
			gapTol[t.Group] = max(gapTol[t.Group], GapBandFraction*t.MaxGapRel)
		}
	}
	out := PsiConvergence{Steps: map[float64][]float64{}}
	for _, t := range trials {
		r, ok := ref[t.Group]
		if !ok {
			r = math.NaN()
		}
		out.Ref = append(out.Ref, r)
		gt, gok := gapTol[t.Group]
		gs := math.NaN()
		switch {
		case !gok:
			gt = math.NaN()
		case t.Diverged:
			gs = runs.Never
		case ok && len(t.Psi) > 0:
			gs = StepsToPsiWithin(t.Steps, t.Psi, r, gt)
		}
		out.GapTol, out.GapSteps = append(out.GapTol, gt), append(out.GapSteps, gs)
		for _, tol := range tols {
			v := math.NaN()
			switch {
			case t.Diverged:
				v = runs.Never
			case ok && len(t.Psi) > 0:
				v = StepsToPsiWithin(t.Steps, t.Psi, r, tol)
			}
			out.Steps[tol] = append(out.Steps[tol], v)
		}
	}
	return out
}

// PsiGroups returns the group key of every trial: the values of the
// settings that vary between trials of the same variant (the grid), except
// the seed (and the bookkeeping keys name and variant). Trials with the same
// key differ only in their variant and seed: the same model on the same
// data, so their psi converge to the same value.
func PsiGroups(sets []map[string]any, variants []string) []string {
	skip := map[string]bool{"seed": true, "name": true, "variant": true}
	grid := map[string]bool{}
	first := map[string]map[string]any{} // variant -> sets of its first trial
	for i, s := range sets {
		f, ok := first[variants[i]]
		if !ok {
			first[variants[i]] = s
			continue
		}
		for k, v := range s {
			if !skip[k] && !sameValue(v, f[k]) {
				grid[k] = true
			}
		}
		for k := range f {
			if _, ok := s[k]; !ok && !skip[k] {
				grid[k] = true
			}
		}
	}
	keys := slices.Sorted(maps.Keys(grid))
	out := make([]string, len(sets))
	for i, s := range sets {
		m := map[string]any{}
		for _, k := range keys {
			m[k] = s[k]
		}
		b, err := json.Marshal(m)
		if err != nil {
			panic(err)
		}
		out[i] = string(b)
	}
	return out
}

func sameValue(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// PsiConvergenceOf computes the metric over a run's trial results (their
// psi series and settings).
func PsiConvergenceOf(all []TrialResult, tols []float64) PsiConvergence {
	var sets []map[string]any
	var variants []string
	for _, r := range all {
		sets = append(sets, r.Trial.Settings)
		variants = append(variants, r.Trial.Variant)
	}
	groups := PsiGroups(sets, variants)
	trials := make([]PsiTrial, len(all))
	for i, r := range all {
		trials[i].Group = groups[i]
		if r.Series != nil {
			trials[i].Steps, trials[i].Psi = r.Series.Of("psi")
		}
		_, trials[i].Diverged = r.Summary.Divergence()
		trials[i].MaxGapRel = r.Summary["max_gap_rel"]
	}
	return ComputePsiConvergence(trials, tols)
}
