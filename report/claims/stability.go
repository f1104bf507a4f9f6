package claims

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"goldstone/report/figures"
)

// The stability map of the paper's update (issue 27): the paper's rate
// rho' = 1/(T N <Z^2>) times 1, 1/2, 1/4, 1/8, with the gauge fields kept
// (the paper) and reset, one trial each. Each cell gives the share of
// gauge rounds that lowered psi, the step at which the training diverged
// (if it did) and the largest energy concentration any round saw (the
// largest eigenvalue of a time step's Gram matrix against the mean,
// gauge_concentration_max), so that a reader can see whether concentration
// explains the overshoot.

// stabilityCell is one (scale, keep) trial of a stability map.
type stabilityCell struct {
	scale    float64
	keep     bool
	lowered  float64 // gauge_lowered_share (0 for a diverged trial)
	diverged float64 // the step it diverged at; NaN: it did not
	conc     float64 // gauge_concentration_max; NaN: not measured
	failed   string  // the error of a failed trial
}

// stabilityCells reads the run's trials as cells, ordered by keep (kept
// first) and then by decreasing scale.
func stabilityCells(r *Run) []stabilityCell {
	var out []stabilityCell
	mk := func(t trial) stabilityCell {
		c := stabilityCell{scale: 1, keep: true, lowered: math.NaN(), diverged: math.NaN(), conc: math.NaN()}
		if v, ok := t.params["gauge_lr_scale"].(float64); ok {
			c.scale = v
		}
		if v, ok := t.params["keep_fields"].(bool); ok {
			c.keep = v
		}
		if v, ok := t.sum["gauge_lowered_share"]; ok {
			c.lowered = v
		}
		if v, ok := t.sum["gauge_concentration_max"]; ok {
			c.conc = v
		}
		if v, ok := t.sum["diverged_step"]; ok && t.diverged {
			c.diverged = v
		}
		return c
	}
	for _, t := range r.trials {
		out = append(out, mk(t))
	}
	for _, t := range r.failed {
		c := mk(t)
		c.failed = t.err
		out = append(out, c)
	}
	// Kept first, then by decreasing scale.
	slices.SortStableFunc(out, func(a, b stabilityCell) int {
		if a.keep != b.keep {
			return cmp.Compare(b2i(b.keep), b2i(a.keep))
		}
		return cmp.Compare(b.scale, a.scale)
	})
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (c stabilityCell) label() string {
	f := "kept"
	if !c.keep {
		f = "reset"
	}
	return fmt.Sprintf("rho' x %g, fields %s", c.scale, f)
}

func (c stabilityCell) text() string {
	var parts []string
	switch {
	case c.failed != "":
		parts = append(parts, "failed ("+c.failed+")")
	case !math.IsNaN(c.diverged):
		parts = append(parts, fmt.Sprintf("diverged at step %.0f", c.diverged))
	default:
		parts = append(parts, "did not diverge")
	}
	if !math.IsNaN(c.lowered) {
		parts = append(parts, fmt.Sprintf("rounds that lowered psi %.0f%%", 100*c.lowered))
	}
	if !math.IsNaN(c.conc) {
		parts = append(parts, fmt.Sprintf("largest concentration %.3g", c.conc))
	}
	return strings.Join(parts, ", ")
}

// stable: the trial ran to the end and at least half its rounds lowered psi.
func (c stabilityCell) stable() bool {
	return c.failed == "" && math.IsNaN(c.diverged) && c.lowered >= 0.5
}

// stabilityClaim (kind "stability") summarises the map: every cell, then
// the verdict: for fields kept and reset, the largest scale at which the
// update is stable and every scale at which it diverged, and the median
// largest concentration of the stable cells against the diverged ones.
func stabilityClaim(r *Run, _ Params) (string, string) {
	cells := stabilityCells(r)
	if len(cells) == 0 {
		return notMeasured, notMeasured
	}
	var ours []string
	for _, c := range cells {
		ours = append(ours, c.label()+": "+c.text())
	}
	var verdicts []string
	var concStable, concDiv []float64
	for _, keep := range []bool{true, false} {
		var stableAt []float64
		var divAt []string
		n := 0
		for _, c := range cells {
			if c.keep != keep {
				continue
			}
			n++
			switch {
			case c.stable():
				stableAt = append(stableAt, c.scale)
				concStable = append(concStable, c.conc)
			case !math.IsNaN(c.diverged):
				divAt = append(divAt, fmt.Sprintf("x %g (step %.0f)", c.scale, c.diverged))
				concDiv = append(concDiv, c.conc)
			}
		}
		if n == 0 {
			continue
		}
		f := "fields kept"
		if !keep {
			f = "fields reset"
		}
		v := f + ": "
		if len(stableAt) > 0 {
			v += fmt.Sprintf("stable up to rho' x %g", slices.Max(stableAt))
		} else {
			v += "stable at no scale tried"
		}
		if len(divAt) > 0 {
			v += "; diverged at rho' " + strings.Join(divAt, ", ")
		}
		verdicts = append(verdicts, v)
	}
	cs, cd := figures.Median(concStable), figures.Median(concDiv)
	if !math.IsNaN(cs) && !math.IsNaN(cd) {
		verdicts = append(verdicts, fmt.Sprintf("largest concentration: median %.3g where stable, %.3g where it diverged", cs, cd))
	}
	return strings.Join(ours, "; "), strings.Join(verdicts, "; ")
}

// stabilitySection renders the map as a table: one row per scale, columns
// fields kept and reset.
func stabilitySection(r *Run, _ Params) string {
	cells := stabilityCells(r)
	var scales []float64
	for _, c := range cells {
		if !slices.Contains(scales, c.scale) {
			scales = append(scales, c.scale)
		}
	}
	slices.Sort(scales)
	slices.Reverse(scales)
	var b strings.Builder
	b.WriteString("| rate | fields kept (the paper) | fields reset |\n|---|---|---|\n")
	for _, s := range scales {
		row := []string{"-", "-"}
		for _, c := range cells {
			if c.scale != s {
				continue
			}
			k := 0
			if !c.keep {
				k = 1
			}
			row[k] = c.text()
		}
		fmt.Fprintf(&b, "| rho' x %g | %s | %s |\n", s, row[0], row[1])
	}
	return b.String()
}
