package train

import (
	"slices"

	"goldstone/runs"
	"goldstone/trialio"
)

// FineGapTolerance is the stricter relative gap of issue 27: psi still
// rises from the data fit long after the gauge modes have relaxed, and a
// gap that peaks at a few per cent of psi is below 1% almost at once, so
// steps_to_gap_0.1pct (gauge_gap < 0.001 psi to the end of the run)
// separates variants that steps_to_gap_1pct cannot.
const FineGapTolerance = 0.001

// PeakGapFraction: steps_to_gap_10pct_peak is the first recorded iterate
// from which the gauge gap stays below this fraction of the largest gap
// the run recorded (a scale of the run's own, not of psi).
const PeakGapFraction = 0.1

// GapSummary adds the gauge-mode metrics that see the relaxation of the
// Goldstone modes apart from psi's own drift (issue 27) to a summary:
// steps_to_gap_0.1pct, max_gap_rel (the largest gap/psi recorded, the
// scale a psi tolerance must be tied to: a tolerance above it cannot see
// the gauge modes at all) and steps_to_gap_10pct_peak. Nothing is added
// when the run recorded no gap (no tree coupling).
func GapSummary(s *trialio.Series, sum trialio.Summary) {
	_, rel := s.Of("gauge_gap_rel")
	if len(rel) == 0 {
		return
	}
	sum["max_gap_rel"] = slices.Max(rel)
	sum["steps_to_gap_0.1pct"] = StepsToGapBelow(s, FineGapTolerance)
	sum["steps_to_gap_10pct_peak"] = StepsToGapBelowPeak(s, PeakGapFraction)
}

// StepsToGapBelowPeak returns the first recorded iterate from which the
// gauge gap (series gauge_gap) stays below frac times its largest recorded
// value up to the last record, or runs.Never when that holds only at the
// last record or not at all (two records needed, as in StepsToGapBelow).
// A gap that is never positive is below at once (step of the first
// record). A NaN gap (a diverged iterate) is never below.
func StepsToGapBelowPeak(s *trialio.Series, frac float64) float64 {
	steps, gap := s.Of("gauge_gap")
	if len(gap) == 0 {
		return runs.Never
	}
	peak := 0.0
	for _, v := range gap {
		peak = max(peak, v)
	}
	k := len(gap)
	for k > 0 && (gap[k-1] < frac*peak || peak == 0 && gap[k-1] == 0) {
		k--
	}
	if k >= len(gap)-1 {
		return runs.Never
	}
	return steps[k]
}
