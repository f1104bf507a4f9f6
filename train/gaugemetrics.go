package train

import (
	"math"
	"slices"
	"time"

	"goldstone/optim"
	"goldstone/runs"
	"goldstone/trialio"
)

// GapTolerance is the relative gauge gap below which the Goldstone modes
// count as relaxed: steps_to_gap_1pct is the first recorded iterate from
// which gauge_gap < GapTolerance * psi holds to the end of the run.
const GapTolerance = 0.01

// recordRound records the series of one gauge round. The sparse series
// gauge_rejected (value 1) and gauge_flips (number of time steps reflected)
// get a point, labelled with the iterate the round produced, only for
// rounds where that happened; the round_* series get a point for every
// round (README, "Summary metrics"): round_accepted (1, or 0 when the guard
// undid the step), round_psi_pred and round_psi_real (predicted and
// realised change of psi by the continuous step), round_psi_flips (change
// by the wall flips, rounds with flips only), round_rate (the gauge
// learning rate rho', Goldstone only), round_scale (the step's factor
// along the gauge direction) and round_backtracks. The counts are the
// driver's (optim.Result).
func recordRound(s *trialio.Series, iterate int, st *optim.RoundStats) {
	acc := 1.0
	if st.Rejected {
		acc = 0
		s.Add("gauge_rejected", iterate, 1)
	}
	if st.Flips > 0 {
		s.Add("gauge_flips", iterate, float64(st.Flips))
		s.Add("round_psi_flips", iterate, st.PsiStep-st.PsiBefore)
	}
	s.Add("round_accepted", iterate, acc)
	s.Add("round_psi_pred", iterate, st.Predicted)
	s.Add("round_psi_real", iterate, st.PsiAfter-st.PsiStep)
	if !math.IsNaN(st.Rate) {
		s.Add("round_rate", iterate, st.Rate)
	}
	s.Add("round_scale", iterate, st.Scale)
	s.Add("round_backtracks", iterate, float64(st.Backtracks))
	if !math.IsNaN(st.Concentration) {
		s.Add("round_concentration", iterate, st.Concentration)
	}
}

// concentrationSummary writes gauge_concentration_max, the largest
// round_concentration the run recorded (gauge_concentration; nothing when
// it recorded none).
func concentrationSummary(s *trialio.Series, sum trialio.Summary) {
	_, c := s.Of("round_concentration")
	if len(c) == 0 {
		return
	}
	sum["gauge_concentration_max"] = slices.Max(c)
}

// gaugeSummary writes the driver's totals of the rounds (r),
// gauge_accepted_share, the share of rounds whose step was applied (not
// rejected: an unguarded round is always applied, whatever it did to psi),
// and gauge_lowered_share, the share of rounds after which psi was lower
// than before (a rejected round lowered it only by its wall flips). In a
// run that diverged every round counts as one that raised psi:
// gauge_lowered_share is 0. Both are NaN without rounds. (The gauge's share
// of the training time is gauge_seconds / wall_seconds; it is not stored,
// as timings are not results.)
func gaugeSummary(sum trialio.Summary, r optim.Result, diverged bool) {
	sum["gauge_rounds"] = float64(r.Rounds)
	sum["gauge_rejected"] = float64(r.Rejected)
	sum["gauge_flips"] = float64(r.Flips)
	sum["gauge_backtracks"] = float64(r.Backtracks)
	accepted, lowered := math.NaN(), math.NaN()
	if r.Rounds > 0 {
		accepted = float64(r.Accepted()) / float64(r.Rounds)
		lowered = float64(r.Lowered) / float64(r.Rounds)
		if diverged {
			lowered = 0
		}
	}
	sum["gauge_accepted_share"] = accepted
	sum["gauge_lowered_share"] = lowered
}

// roundRecorder wraps a gauge step to record what only the round's start
// point shows, labelled with the iterate the round produced. With eval (the
// local loss, which must not change any state of the training) it
// evaluates the loss before and after every round and records
// round_loss_pred (the change of the total loss the round predicts: its
// change of psi, the local loss being invariant under the maps) and
// round_loss_real (the realised change: local loss plus psi). With gap (a
// tree coupling and gauge_gap_around > 0) it records round_gap, the gauge
// gap psi - min_R psi of the iterate the round starts from: the most any
// rotation or reflection of the time steps could lower psi there, against
// which round_psi_pred and round_psi_real are read. The time spent in eval
// and gap is kept apart so that the gauge's time does not include it.
type roundRecorder[F optim.Float] struct {
	inner   optim.Gauge
	eval    func(x []F) float64 // nil: no loss records
	gap     *gapMeter[F]        // nil: no round_gap
	series  *trialio.Series
	iterate int // label of the next round
	seconds float64
}

func (r *roundRecorder[F]) Init(b optim.Blocks, g *optim.Graph) error { return r.inner.Init(b, g) }

// State forwards the wrapped gauge's state (optim.Stateful) to the loop's
// checkpoints.
func (r *roundRecorder[F]) State() [][]float64 { return optim.StateOf(r.inner) }

func (r *roundRecorder[F]) Round(x []float64) optim.RoundStats {
	return r.round(any(x).([]F), func() optim.RoundStats { return r.inner.Round(x) })
}

// Round32 implements optim.Gauge32 (the loop checked that the inner gauge
// is one).
func (r *roundRecorder[F]) Round32(x []float32) optim.RoundStats {
	return r.round(any(x).([]F), func() optim.RoundStats { return r.inner.(optim.Gauge32).Round32(x) })
}

// round records around inner, the inner gauge's round on x.
func (r *roundRecorder[F]) round(x []F, inner func() optim.RoundStats) optim.RoundStats {
	start := time.Now()
	var l0 float64
	if r.eval != nil {
		l0 = r.eval(x)
	}
	if r.gap != nil {
		r.series.Add("round_gap", r.iterate, r.gap.gap(x))
	}
	r.seconds += time.Since(start).Seconds()
	st := inner()
	if r.eval == nil {
		return st
	}
	start = time.Now()
	l1 := r.eval(x)
	r.seconds += time.Since(start).Seconds()
	pred := st.PsiStep - st.PsiBefore
	if !st.Rejected {
		pred += st.Predicted
	}
	r.series.Add("round_loss_pred", r.iterate, pred)
	r.series.Add("round_loss_real", r.iterate, (l1-l0)+(st.PsiAfter-st.PsiBefore))
	return st
}

// recordGap records, for the iterate x_k (k = iterate), the gauge gap
// psi(Z) - min over rotations psi(R Z) as "gauge_gap" and the gap relative
// to psi at the same iterate as "gauge_gap_rel" (0 when psi is 0).
func (m *gapMeter[F]) record(s *trialio.Series, iterate int, x []F) {
	gap := m.gap(x)
	psi := optim.PsiOf(x, m.b, m.g)
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
