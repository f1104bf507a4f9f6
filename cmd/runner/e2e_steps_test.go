package main

import (
	"strings"
	"testing"
)

// Rough edge: every series of a trial uses one step convention: step s is
// the iterate after s updates, so every series starts at the initial
// iterate (step 0) and none goes past the final one (step steps). The
// loss-like series end at steps-1 (the driver evaluates them before each
// update); the gauge gap is also measured at the final iterate. The series
// of gauge rounds have a point only at the iterates a round produced: for
// every round (round_*) or only where the event happened (rejections,
// flips).
func TestOneStepConvention(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "--experiment", "small", "--set", "seed=1", "--set", "steps=400", "--quiet")
	rows, err := e.db().Query(`SELECT metric, min(step), max(step) FROM series GROUP BY metric`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	sparse := map[string]bool{"gauge_rejected": true, "gauge_flips": true}
	for rows.Next() {
		var m string
		var lo, hi int
		rows.Scan(&m, &lo, &hi)
		seen[m] = true
		if sparse[m] || strings.HasPrefix(m, "round_") {
			// Event series: a point at the iterate a gauge round produced,
			// only for rounds where the event happened.
			if lo < 1 || hi > 400 {
				t.Errorf("%s: steps %d..%d, want within 1..400", m, lo, hi)
			}
			continue
		}
		if lo != 0 || hi < 399 || hi > 400 {
			t.Errorf("%s: steps %d..%d, want 0..399 or 0..400", m, lo, hi)
		}
	}
	for _, m := range []string{"loss", "psi", "gauge_gap"} {
		if !seen[m] {
			t.Errorf("no %s series", m)
		}
	}
}
