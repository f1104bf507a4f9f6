package report

import (
	"math"
	"testing"

	"goldstone/runs"
)

// TestGapTiedBand: the band is a tenth of the largest max_gap_rel of the
// group's trials that did not diverge; steps are counted against it; a
// group without gap records has no band (NaN), and a diverged trial's
// steps are never.
func TestGapTiedBand(t *testing.T) {
	steps := []float64{0, 10, 20, 30, 40}
	trials := []PsiTrial{
		{Group: "a", Steps: steps, Psi: []float64{50, 101, 100.5, 100.1, 100}, MaxGapRel: 0.01},
		{Group: "a", Steps: steps, Psi: []float64{50, 120, 100.15, 100.1, 100.05}, MaxGapRel: 0.02},
		{Group: "a", Steps: steps[:2], Psi: []float64{50, 1e9}, MaxGapRel: 5, Diverged: true},
		{Group: "b", Steps: steps, Psi: []float64{1, 2, 3, 4, 5}},
	}
	pc := ComputePsiConvergence(trials, PsiTolerances)
	if pc.GapTol[0] != 0.002 || pc.GapTol[1] != 0.002 {
		t.Fatalf("band %v, want 0.002 (a tenth of the largest max_gap_rel 0.02; the diverged trial's 5 ignored)", pc.GapTol)
	}
	// Reference 100 (lowest final psi), band 0.2: trial 0 within from step 30, trial 1 from step 20.
	if pc.GapSteps[0] != 30 || pc.GapSteps[1] != 20 {
		t.Errorf("steps to the band %v, want 30 and 20", pc.GapSteps[:2])
	}
	if pc.GapSteps[2] != runs.Never {
		t.Errorf("diverged trial: %v, want never", pc.GapSteps[2])
	}
	if !math.IsNaN(pc.GapTol[3]) || !math.IsNaN(pc.GapSteps[3]) {
		t.Errorf("group without gaps: band %v steps %v, want NaN", pc.GapTol[3], pc.GapSteps[3])
	}
}
