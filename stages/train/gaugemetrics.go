package train

import (
	"goldstone/optim"
	"goldstone/runs"
	"goldstone/stages/trialio"
)

// GapTolerance is the relative gauge gap below which the Goldstone modes
// count as relaxed: steps_to_gap_1pct is the first recorded iterate from
// which gauge_gap < GapTolerance * psi holds to the end of the run.
const GapTolerance = 0.01

// gaugeCounts accumulates what the gauge rounds of one run did.
type gaugeCounts struct {
	rounds, rejected, flips int
}

// add records one round: the sparse series gauge_rejected (value 1) and
// gauge_flips (number of time steps reflected) get a point, labelled with
// the iterate the round produced, only for rounds where that happened.
func (c *gaugeCounts) add(s *trialio.Series, iterate int, st *optim.RoundStats) {
	c.rounds++
	if st.Rejected {
		c.rejected++
		s.Add("gauge_rejected", iterate, 1)
	}
	if st.Flips > 0 {
		c.flips += st.Flips
		s.Add("gauge_flips", iterate, float64(st.Flips))
	}
}

// summarize writes the totals. (The gauge's share of the training time is
// gauge_seconds / wall_seconds; it is not stored, as timings are not
// results.)
func (c *gaugeCounts) summarize(sum trialio.Summary) {
	sum["gauge_rounds"] = float64(c.rounds)
	sum["gauge_rejected"] = float64(c.rejected)
	sum["gauge_flips"] = float64(c.flips)
}

// recordGap records, for the iterate x_k (k = iterate), the gauge gap
// psi(Z) - min over rotations psi(R Z) as "gauge_gap" and the gap relative
// to psi at the same iterate as "gauge_gap_rel" (0 when psi is 0).
func (m *gapMeter) record(s *trialio.Series, iterate int, x []float64) {
	gap := m.gap(x)
	psi := optim.Psi(x, m.b, m.g)
	rel := 0.0
	if psi != 0 || gap != 0 {
		rel = gap / psi
	}
	s.Add("gauge_gap", iterate, gap)
	s.Add("gauge_gap_rel", iterate, rel)
}

// StepsToGapBelow returns the first recorded iterate from which the relative
// gauge gap (series gauge_gap_rel) stays below tol up to the last recorded
// one, or runs.Never (+Inf) when it is below tol only at the last record or not at all
// (staying below needs two records: with exact gauge fixing the gap is
// zero right after every round, so a last record that falls on a round
// alone says nothing). It does not depend on what the final value is, only on the
// relaxation of the Goldstone modes, so a longer run can only confirm it or,
// when the gap rises again later, postpone it.
func StepsToGapBelow(s *trialio.Series, tol float64) float64 {
	steps, rel := s.Of("gauge_gap_rel")
	k := len(rel)
	for k > 0 && rel[k-1] < tol {
		k--
	}
	if k >= len(rel)-1 {
		return runs.Never
	}
	return steps[k]
}
