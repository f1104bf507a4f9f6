package claims

import (
	"strings"
	"testing"
)

// TestStabilityClaim: a map where the kept fields diverge at rho' x 1 and
// x 1/2 and are stable below, the reset ones stable everywhere; the row
// and the section say so, with the concentration of each side.
func TestStabilityClaim(t *testing.T) {
	r := &Run{}
	for _, c := range []struct {
		scale    float64
		keep     bool
		lowered  float64
		diverged float64 // 0: no
		conc     float64
	}{
		{1, true, 0, 12, 40}, {0.5, true, 0, 300, 40}, {0.25, true, 0.9, 0, 38}, {0.125, true, 1, 0, 37},
		{1, false, 0.8, 0, 41}, {0.5, false, 1, 0, 40}, {0.25, false, 1, 0, 39}, {0.125, false, 1, 0, 39},
	} {
		tr := trial{variant: "paper", params: map[string]any{"gauge_lr_scale": c.scale, "keep_fields": c.keep},
			sum: map[string]float64{"gauge_lowered_share": c.lowered, "gauge_concentration_max": c.conc}}
		if c.diverged > 0 {
			tr.diverged, tr.sum["diverged_step"] = true, c.diverged
		}
		r.trials = append(r.trials, tr)
	}
	ours, verdict := stabilityClaim(r, Params{})
	t.Logf("ours: %s\nverdict: %s", ours, verdict)
	for _, want := range []string{
		"fields kept: stable up to rho' x 0.25; diverged at rho' x 1 (step 12), x 0.5 (step 300)",
		"fields reset: stable up to rho' x 1",
		"largest concentration: median 39 where stable, 40 where it diverged",
	} {
		if !strings.Contains(verdict, want) {
			t.Errorf("verdict lacks %q", want)
		}
	}
	if !strings.Contains(ours, "rho' x 1, fields kept: diverged at step 12, rounds that lowered psi 0%, largest concentration 40") {
		t.Errorf("ours lacks the first cell")
	}
	sec := stabilitySection(r, Params{})
	if !strings.Contains(sec, "| rho' x 0.5 | diverged at step 300, rounds that lowered psi 0%, largest concentration 40 | did not diverge, rounds that lowered psi 100%, largest concentration 40 |") {
		t.Errorf("section:\n%s", sec)
	}
}
