package train

import (
	"context"
	"math"
	"slices"
	"testing"

	"goldstone/optim"
	"goldstone/runs"
	"goldstone/trialio"
)

func TestStepsToGapBelow(t *testing.T) {
	rel := func(vals ...float64) *trialio.Series {
		s := &trialio.Series{}
		for i, v := range vals {
			s.Add("gauge_gap_rel", 10*i, v)
			s.Add("psi", 10*i, 1) // other metrics are ignored
		}
		return s
	}
	for _, c := range []struct {
		name string
		s    *trialio.Series
		want float64
	}{
		{"falls and stays", rel(0.5, 0.2, 0.009, 0.001, 0), 20},
		{"dips then rises then falls", rel(0.5, 0.005, 0.3, 0.002, 0.001), 30},
		{"below from the start", rel(0.001, 0.002), 0},
		{"above at the end", rel(0.5, 0.001, 0.02), runs.Never},
		{"NaN at the end", rel(0.001, math.NaN()), runs.Never},
		{"exactly the tolerance is not below", rel(0.5, 0.01), runs.Never},
		{"no series", &trialio.Series{}, runs.Never},
		{"below at the last record only", rel(0.5, 0.3, 0), runs.Never},
		{"one record", rel(0), runs.Never},
	} {
		got := StepsToGapBelow(c.s, GapTolerance)
		if got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestGaugeCounts(t *testing.T) {
	s := &trialio.Series{}
	var c optim.Result
	add := func(r *optim.Result, s *trialio.Series, iterate int, st *optim.RoundStats) {
		recordRound(s, iterate, st)
		r.Add(st, 0)
	}
	add(&c, s, 5, &optim.RoundStats{PsiBefore: 9, PsiStep: 9, PsiAfter: 8, Predicted: -1, Rate: 0.5, Scale: 1})
	add(&c, s, 10, &optim.RoundStats{Rejected: true, PsiBefore: 8, PsiStep: 8, PsiAfter: 8, Predicted: 2, Rate: 0.5, Backtracks: 3})
	add(&c, s, 15, &optim.RoundStats{Flips: 3, PsiBefore: 8, PsiStep: 6, PsiAfter: 5.5, Predicted: -0.5, Rate: math.NaN(), Scale: 0.25, Backtracks: 2})
	add(&c, s, 20, &optim.RoundStats{Flips: 2, Rejected: true, PsiBefore: 5.5, PsiStep: 5, PsiAfter: 5, Predicted: math.NaN(), Rate: 0.25})
	sum := trialio.Summary{}
	gaugeSummary(sum, c, false)
	// Three rounds lowered psi: the applied ones and the rejected one
	// whose wall flips did.
	want := trialio.Summary{"gauge_rounds": 4, "gauge_rejected": 2, "gauge_flips": 5, "gauge_backtracks": 5, "gauge_accepted_share": 0.5, "gauge_lowered_share": 0.75}
	for k, v := range want {
		if sum[k] != v {
			t.Errorf("%s = %v, want %v", k, sum[k], v)
		}
	}
	// An unguarded round that raised psi is accepted and lowered nothing;
	// a run that diverged lowered psi in none of its rounds.
	var raised optim.Result
	add(&raised, &trialio.Series{}, 5, &optim.RoundStats{PsiBefore: 5, PsiStep: 5, PsiAfter: 1e200, Predicted: 3, Rate: 1, Scale: 1})
	add(&raised, &trialio.Series{}, 10, &optim.RoundStats{PsiBefore: 9, PsiStep: 9, PsiAfter: 8, Predicted: -1, Rate: 1, Scale: 1})
	for _, c := range []struct {
		counts   optim.Result
		diverged bool
		accepted float64
		lowered  float64
	}{{raised, false, 1, 0.5}, {raised, true, 1, 0}, {c, true, 0.5, 0}} {
		sum := trialio.Summary{}
		gaugeSummary(sum, c.counts, c.diverged)
		if sum["gauge_accepted_share"] != c.accepted || sum["gauge_lowered_share"] != c.lowered {
			t.Errorf("%+v diverged %v: accepted %v lowered %v, want %v %v", c.counts, c.diverged, sum["gauge_accepted_share"], sum["gauge_lowered_share"], c.accepted, c.lowered)
		}
	}
	gaugeSummary(sum, optim.Result{}, false)
	if !math.IsNaN(sum["gauge_accepted_share"]) || !math.IsNaN(sum["gauge_lowered_share"]) {
		t.Errorf("no rounds: shares %v %v, want NaN", sum["gauge_accepted_share"], sum["gauge_lowered_share"])
	}
	st, v := s.Of("gauge_rejected")
	if len(st) != 2 || st[0] != 10 || st[1] != 20 || v[0] != 1 || v[1] != 1 {
		t.Errorf("gauge_rejected series %v %v", st, v)
	}
	st, v = s.Of("gauge_flips")
	if len(st) != 2 || st[0] != 15 || st[1] != 20 || v[0] != 3 || v[1] != 2 {
		t.Errorf("gauge_flips series %v %v", st, v)
	}
	for _, c := range []struct {
		metric string
		steps  []float64
		vals   []float64
	}{
		{"round_accepted", []float64{5, 10, 15, 20}, []float64{1, 0, 1, 0}},
		{"round_psi_pred", []float64{5, 10, 15, 20}, []float64{-1, 2, -0.5, math.NaN()}},
		{"round_psi_real", []float64{5, 10, 15, 20}, []float64{-1, 0, -0.5, 0}},
		{"round_psi_flips", []float64{15, 20}, []float64{-2, -0.5}},
		{"round_rate", []float64{5, 10, 20}, []float64{0.5, 0.5, 0.25}},
		{"round_scale", []float64{5, 10, 15, 20}, []float64{1, 0, 0.25, 0}},
		{"round_backtracks", []float64{5, 10, 15, 20}, []float64{0, 3, 2, 0}},
	} {
		st, v := s.Of(c.metric)
		if !slices.Equal(st, c.steps) || !slices.EqualFunc(v, c.vals, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
			t.Errorf("%s: %v %v, want %v %v", c.metric, st, v, c.steps, c.vals)
		}
	}
}

// TestLoopRoundRecords trains a twisted chain with Goldstone-GD (exact
// rotations) and with the paper's linear form, recording the loss around
// every round: each round's predicted and realised change of psi agree to
// rounding; with exact rotations so do the predicted and realised changes
// of the loss (the local loss is invariant), while the linear form changes
// the local loss and the records show it; and the gap is recorded at the
// iterates GapAround steps either side of every round besides its own
// period.
func TestLoopRoundRecords(t *testing.T) {
	const T, N, D = 8, 6, 3
	b := optim.Blocks{T: T, N: N, D: D}
	g := optim.Chain(T, 2)
	target := make([]float64, b.Len())
	for t := 0; t < T; t++ { // Y_t = the same vectors rotated by 0.2 t in the first plane
		c, s := math.Cos(0.2*float64(t)), math.Sin(0.2*float64(t))
		for i := 0; i < N; i++ {
			u := []float64{math.Sin(float64(5*i + 1)), math.Cos(float64(3*i + 2)), math.Sin(float64(7*i + 3))}
			o := (t*N + i) * D
			target[o], target[o+1], target[o+2] = c*u[0]-s*u[1], s*u[0]+c*u[1], u[2]
		}
	}
	// A rotation-invariant local loss, a Gram fit per step: the sum over
	// pairs (i, j) of 1/2 (z_i.z_j - y_i.y_j)^2 / N.
	local := func(grad, x []float64) float64 {
		var l float64
		for t := 0; t < T; t++ {
			z, y, gz := b.Block(x, t), b.Block(target, t), b.Block(grad, t)
			for i := 0; i < N; i++ {
				for j := 0; j < N; j++ {
					var zz, yy float64
					for k := 0; k < D; k++ {
						zz += z[i*D+k] * z[j*D+k]
						yy += y[i*D+k] * y[j*D+k]
					}
					r := (zz - yy) / N
					l += 0.5 * r * (zz - yy)
					for k := 0; k < D; k++ {
						gz[i*D+k] += r * z[j*D+k]
						gz[j*D+k] += r * z[i*D+k]
					}
				}
			}
		}
		return l
	}
	eval := func(x []float64) float64 { return local(make([]float64, len(x)), x) }
	for _, rot := range []optim.Rotation{optim.RotationExact, optim.RotationLinear} {
		x := append([]float64(nil), target...)
		for i := range x {
			x[i] += 0.05 * math.Sin(float64(11*i+5))
		}
		gauge := &optim.Goldstone{Rotation: rot, NoGuard: rot == optim.RotationLinear, NoFlip: true}
		l := &Loop{Problem: optim.Problem{Local: local, Blocks: b, Graph: g},
			Opt:   &Optimizer{Method: &optim.GD{Rate: optim.Constant(0.01)}, Gauge: gauge, K1: 10},
			Steps: 40, LogEvery: 1, GapEvery: 7, GapAround: 2, Eval: eval, Series: &trialio.Series{}, Summary: trialio.Summary{}}
		if err := l.Run(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		s := l.Series
		rs, pred := s.Of("round_psi_pred")
		_, real := s.Of("round_psi_real")
		ls, lpred := s.Of("round_loss_pred")
		_, lreal := s.Of("round_loss_real")
		if !slices.Equal(rs, []float64{10, 20, 30, 40}) || !slices.Equal(ls, rs) {
			t.Fatalf("rotation %d: rounds recorded at %v (loss at %v), want 10, 20, 30, 40", rot, rs, ls)
		}
		gr, gap := s.Of("round_gap")
		if !slices.Equal(gr, rs) {
			t.Fatalf("rotation %d: round_gap at %v, want %v", rot, gr, rs)
		}
		linearMoved := false
		for k := range rs {
			// No rotation lowers psi by more than the gap of the round's
			// start point (the linear update is no rotation).
			if rot == optim.RotationExact && !(gap[k] >= 0 && real[k] >= -gap[k]*(1+1e-9)-1e-12) {
				t.Errorf("exact round %v: psi changed by %v, the gap was %v", rs[k], real[k], gap[k])
			}
			if math.Abs(pred[k]-real[k]) > 1e-10 {
				t.Errorf("rotation %d round %v: psi predicted %v, realised %v", rot, rs[k], pred[k], real[k])
			}
			if rot == optim.RotationExact && math.Abs(lpred[k]-lreal[k]) > 1e-10 {
				t.Errorf("exact round %v: loss predicted %v, realised %v", rs[k], lpred[k], lreal[k])
			}
			if rot == optim.RotationLinear && math.Abs(lpred[k]-lreal[k]) > 1e-8 {
				linearMoved = true
			}
		}
		if rot == optim.RotationLinear && !linearMoved {
			t.Errorf("linear rounds: the realised loss change equals psi's in every round: %v vs %v", lreal, lpred)
		}
		if sum := l.Summary; sum["gauge_accepted_share"] != 1 || sum["gauge_rounds"] != 4 {
			t.Errorf("rotation %d: summary %v", rot, sum)
		}
		gs, _ := s.Of("gauge_gap")
		want := []float64{0, 1, 8, 9, 10, 11, 12, 15, 18, 19, 20, 21, 22, 28, 29, 30, 31, 32, 36, 38, 39, 40}
		if !slices.Equal(gs, want) {
			t.Errorf("rotation %d: gap recorded at %v, want %v", rot, gs, want)
		}
	}
}

// TestLoopGapMetrics trains a tiny chain with plain GD and with exact gauge
// fixing: the gap is recorded from x_0 on, relative to psi at the same
// iterate, and gauge fixing (Procrustes, every 5 steps) brings it below 1%
// of psi at its first round and keeps it there, while plain GD from a
// random start does not get there in 20 steps.
func TestLoopGapMetrics(t *testing.T) {
	const T, N, D = 6, 4, 2
	b := optim.Blocks{T: T, N: N, D: D}
	g := optim.Chain(T, 1)
	target := make([]float64, b.Len())
	for i := range target {
		target[i] = math.Sin(float64(3*i + 1))
	}
	// Local loss 1/2 ||Z_t - Y_t||^2 with a differently rotated Y_t per step:
	// the fits disagree by rotations, which the gauge removes.
	local := func(grad, x []float64) float64 {
		var l float64
		for i, v := range x {
			d := v - target[i]
			l += 0.005 * d * d
			grad[i] += 0.01 * d
		}
		return l
	}
	run := func(gauge optim.Gauge, k1 int) (*trialio.Series, trialio.Summary) {
		x := make([]float64, b.Len())
		for i := range x {
			x[i] = math.Cos(float64(7*i + 2))
		}
		l := &Loop{Problem: optim.Problem{Local: local, Blocks: b, Graph: g},
			Opt:   &Optimizer{Method: &optim.GD{Rate: optim.Constant(0.01)}, Gauge: gauge, K1: k1},
			Steps: 20, LogEvery: 1, Series: &trialio.Series{}, Summary: trialio.Summary{}}
		if err := l.Run(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		return l.Series, l.Summary
	}
	s, sum := run(nil, 0)
	steps, rel := s.Of("gauge_gap_rel")
	if len(steps) != 21 || steps[0] != 0 || steps[20] != 20 {
		t.Fatalf("gauge_gap_rel recorded at %v, want iterates 0..20", steps)
	}
	_, gap := s.Of("gauge_gap")
	x0 := make([]float64, b.Len())
	for i := range x0 {
		x0[i] = math.Cos(float64(7*i + 2))
	}
	if psi0 := optim.Psi(x0, b, g); math.Abs(gap[0]/psi0-rel[0]) > 1e-12 || !(rel[0] > 0.01) {
		t.Fatalf("rel gap at x_0 = %v, gap/psi = %v", rel[0], gap[0]/psi0)
	}
	if v := sum["steps_to_gap_1pct"]; !runs.IsNever(v) {
		t.Errorf("plain GD: steps_to_gap_1pct = %v, want never (+Inf: gap not relaxed)", v)
	}
	if _, ok := sum["gauge_rounds"]; ok {
		t.Errorf("plain GD has gauge totals: %v", sum)
	}
	_, sum = run(&optim.Procrustes{}, 5)
	if v := sum["steps_to_gap_1pct"]; v != 5 {
		t.Errorf("Procrustes every 5 steps: steps_to_gap_1pct = %v, want 5 (first round)", v)
	}
	if sum["gauge_rounds"] != 4 || sum["gauge_rejected"] != 0 {
		t.Errorf("gauge totals %v", sum)
	}
}
