package train

import (
	"context"
	"math"
	"testing"

	"goldstone/optim"
	"goldstone/runs"
	"goldstone/stages/trialio"
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
	var c gaugeCounts
	c.add(s, 5, &optim.RoundStats{})
	c.add(s, 10, &optim.RoundStats{Rejected: true})
	c.add(s, 15, &optim.RoundStats{Flips: 3})
	c.add(s, 20, &optim.RoundStats{Flips: 2, Rejected: true})
	sum := trialio.Summary{}
	c.summarize(sum)
	want := trialio.Summary{"gauge_rounds": 4, "gauge_rejected": 2, "gauge_flips": 5}
	for k, v := range want {
		if sum[k] != v {
			t.Errorf("%s = %v, want %v", k, sum[k], v)
		}
	}
	st, v := s.Of("gauge_rejected")
	if len(st) != 2 || st[0] != 10 || st[1] != 20 || v[0] != 1 || v[1] != 1 {
		t.Errorf("gauge_rejected series %v %v", st, v)
	}
	st, v = s.Of("gauge_flips")
	if len(st) != 2 || st[0] != 15 || st[1] != 20 || v[0] != 3 || v[1] != 2 {
		t.Errorf("gauge_flips series %v %v", st, v)
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
