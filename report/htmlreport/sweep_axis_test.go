package htmlreport

import (
	"math"
	"strings"
	"testing"

	"goldstone/report/figures"
	"goldstone/runs"
)

// TestSweepLogAxis: a sweep figure's metric goes on a log axis when its
// finite values are positive and span three decades (a diverged trial
// beside converged ones), and its caption says so; never-reached values
// do not count, a zero or a narrow span keeps the linear axis.
func TestSweepLogAxis(t *testing.T) {
	pts := func(vs ...float64) []figures.SweepPoint {
		var out []figures.SweepPoint
		for i, v := range vs {
			out = append(out, figures.SweepPoint{Variant: "gd", Settings: map[string]string{"lambda": []string{"3", "10"}[i%2]}, Value: v})
		}
		return out
	}
	for _, c := range []struct {
		vals []float64
		want bool
	}{
		{[]float64{0.07, 8.4e111, 5959}, true},
		{[]float64{0.07, 60, runs.Never}, false},
		{[]float64{0.07, 80, runs.Never, math.NaN()}, true},
		{[]float64{0, 1e6}, false},
		{[]float64{-1, 1e6}, false},
	} {
		if got := logWorthy(pts(c.vals...)); got != c.want {
			t.Errorf("logWorthy(%v) = %v, want %v", c.vals, got, c.want)
		}
	}
	spec := figures.SweepSpec{Metric: "final_excess", Settings: []string{"lambda"}, Points: pts(0.07, 8.4e111), LogY: true}
	if c := sweepCaption("final_excess", spec, []string{"lambda"}); !strings.Contains(c, "final_excess on a log axis") {
		t.Errorf("caption does not name the log axis: %s", c)
	}
	spec.LogY = false
	if c := sweepCaption("final_excess", spec, []string{"lambda"}); strings.Contains(c, "log axis") {
		t.Errorf("caption of a linear axis names a log axis: %s", c)
	}
}
