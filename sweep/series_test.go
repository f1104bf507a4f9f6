package sweep

import (
	"math"
	"reflect"
	"testing"

	"goldstone/runs"
)

func TestCompareSeries(t *testing.T) {
	pts := func(xs ...float64) []runs.Point { // step, value pairs
		var out []runs.Point
		for i := 0; i < len(xs); i += 2 {
			out = append(out, runs.Point{Step: int(xs[i]), Value: xs[i+1]})
		}
		return out
	}
	one := func(p []runs.Point) TrialSeries { return TrialSeries{"t": {"loss": p}} }
	nan := math.NaN()
	for _, c := range []struct {
		name string
		a, b TrialSeries
		tol  map[string]float64
		want []SeriesDrift
		n    int
	}{
		{"equal", one(pts(0, 1, 1, 2, 2, nan)), one(pts(0, 1, 1, 2, 2, nan)), nil, nil, 3},
		{"changed", one(pts(0, 1, 1, 2)), one(pts(0, 1, 1, 2.5)), nil, []SeriesDrift{{"t", "loss", 1, []float64{2}, []float64{2.5}}}, 2},
		{"within tolerance", one(pts(0, 1, 1, 2)), one(pts(0, 1, 1, 2.5)), map[string]float64{"loss": 1}, nil, 2},
		{"doubled", one(pts(0, 1, 1, 2, 1, 2, 2, 3)), one(pts(0, 1, 1, 2, 2, 3)), nil, []SeriesDrift{{"t", "loss", 1, []float64{2, 2}, []float64{2}}}, 4},
		{"missing", one(pts(0, 1, 2, 3)), one(pts(0, 1, 1, 2, 2, 3)), nil, []SeriesDrift{{"t", "loss", 1, nil, []float64{2}}}, 2},
		{"timing skipped", TrialSeries{"t": {"step_seconds": pts(0, 1)}}, TrialSeries{"t": {"step_seconds": pts(0, 2)}}, nil, nil, 0},
		{"trial in one only", TrialSeries{"u": {"psi": pts(4, 1)}}, TrialSeries{}, nil, []SeriesDrift{{"u", "psi", 4, []float64{1}, nil}}, 1},
	} {
		got, n := CompareSeries(c.a, c.b, c.tol)
		if !reflect.DeepEqual(got, c.want) || n != c.n {
			t.Errorf("%s: %+v (%d compared), want %+v (%d)", c.name, got, n, c.want, c.n)
		}
	}
	d := []SeriesDrift{{"t", "loss", 3, []float64{1, 1}, []float64{1}}, {"t", "loss", 4, nil, []float64{2}}}
	lines := DriftLines(d, "database", "cache", 1)
	want := []string{`trial "t" series loss step 3: database 1 twice, cache 1`, `trial "t" series loss: 1 more step differs`}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("DriftLines: %q, want %q", lines, want)
	}
}
