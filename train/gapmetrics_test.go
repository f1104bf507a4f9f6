package train

import (
	"math"
	"testing"

	"goldstone/runs"
	"goldstone/trialio"
)

func gapSeries(gap, psi []float64) *trialio.Series {
	s := &trialio.Series{}
	for k := range gap {
		s.Add("gauge_gap", 10*k, gap[k])
		s.Add("gauge_gap_rel", 10*k, gap[k]/psi[k])
	}
	return s
}

// TestGapSummary: psi drifts up from the data fit while a gap that peaks
// at 2.6% of psi relaxes; steps_to_gap_1pct fires early, the new metrics
// see the relaxation.
func TestGapSummary(t *testing.T) {
	psi := []float64{100, 120, 140, 160, 180, 187, 187, 187}
	gap := []float64{1, 3.12, 2, 1, 0.2, 0.15, 0.1, 0.05}
	sum := trialio.Summary{}
	GapSummary(gapSeries(gap, psi), sum)
	if got := sum["max_gap_rel"]; math.Abs(got-0.026) > 1e-15 {
		t.Errorf("max_gap_rel %v, want 0.026", got)
	}
	// gap/psi: .01 .026 .0143 .00625 .00111 .000802 .000535 .000267
	if got := sum["steps_to_gap_0.1pct"]; got != 50 {
		t.Errorf("steps_to_gap_0.1pct %v, want 50", got)
	}
	// 10% of the peak 3.12 is 0.312: below from the record at step 40
	if got := sum["steps_to_gap_10pct_peak"]; got != 40 {
		t.Errorf("steps_to_gap_10pct_peak %v, want 40", got)
	}
	if got := StepsToGapBelow(gapSeries(gap, psi), GapTolerance); got != 30 {
		t.Errorf("steps_to_gap_1pct %v, want 30", got)
	}
}

func TestStepsToGapBelowPeakEdges(t *testing.T) {
	for _, c := range []struct {
		name string
		gap  []float64
		want float64
	}{
		{"below only at the last record", []float64{1, 2, 2, 0.1}, runs.Never},
		{"never below", []float64{1, 2, 2, 2}, runs.Never},
		{"zero throughout", []float64{0, 0, 0}, 0},
		{"a rise postpones it", []float64{2, 0.1, 0.1, 1, 0.1, 0.1}, 40},
		{"diverged", []float64{2, 0.1, math.NaN(), 0.1, 0.1}, runs.Never},
		{"no records", nil, runs.Never},
	} {
		s := &trialio.Series{}
		for k, v := range c.gap {
			s.Add("gauge_gap", 10*k, v)
		}
		if got := StepsToGapBelowPeak(s, PeakGapFraction); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	sum := trialio.Summary{}
	GapSummary(&trialio.Series{}, sum)
	if len(sum) != 0 {
		t.Errorf("a run without gap records got %v", sum)
	}
}
