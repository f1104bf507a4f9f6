package sweep

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/pipeline"
	"goldstone/runs"
)

// Unit tests of sweep's pure functions: the comparisons of repro, the
// choice of the best search point and its statistics, and the small
// helpers of a run.

func TestWorkersPerTrial(t *testing.T) {
	for _, c := range [][3]int{{1, 8, 8}, {3, 8, 2}, {8, 2, 1}, {0, 4, 4}, {4, 0, 1}} {
		if got := workersPerTrial(c[0], c[1]); got != c[2] {
			t.Errorf("workersPerTrial(%d jobs, %d cores) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

// Compare: timings are skipped, NaN equals NaN, a metric of one run only
// drifts (the other side NaN), a difference beyond the tolerance drifts
// and one within it does not; drifts come in trial, then metric order.
func TestCompare(t *testing.T) {
	nan := math.NaN()
	rec := map[string]map[string]float64{
		"a": {"loss": 1, "train_seconds": 3, "auc": nan, "only_rec": 2},
		"b": {"loss": 1},
	}
	now := map[string]map[string]float64{
		"a": {"loss": 1.05, "train_seconds": 9, "auc": nan},
		"b": {"loss": 2},
		"c": {"loss": 0},
	}
	got := Compare(rec, now, map[string]string{"a": "A"}, map[string]float64{"loss": 0.1})
	var keys []string
	for _, d := range got {
		keys = append(keys, d.Trial+"/"+d.Metric)
	}
	if want := []string{"a/only_rec", "b/loss", "c/loss"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("drifts %v, want %v", keys, want)
	}
	if d := got[0]; d.Name != "A" || d.Recorded != 2 || !math.IsNaN(d.Now) {
		t.Errorf("a/only_rec drift %+v", d)
	}
	if d := got[2]; !math.IsNaN(d.Recorded) || d.Now != 0 || d.Tolerance != 0.1 {
		t.Errorf("c/loss drift %+v", d)
	}
}

// CompareStatus: only recorded trials with a result count; cached and
// done are the same outcome; a trial missing now drifts.
func TestCompareStatusOutcomes(t *testing.T) {
	rec := map[string]string{"a": runs.StatusDone, "b": runs.StatusCached, "c": runs.StatusDiverged, "d": runs.StatusFailed, "e": runs.StatusDone}
	now := map[string]string{"a": runs.StatusCached, "b": runs.StatusDone, "c": runs.StatusDone, "d": runs.StatusDone}
	got := CompareStatus(rec, now)
	want := []StatusDrift{{Trial: "c", Recorded: runs.StatusDiverged, Now: runs.StatusDone}, {Trial: "e", Recorded: runs.StatusDone}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CompareStatus = %+v, want %+v", got, want)
	}
}

func TestByName(t *testing.T) {
	got := ByName(map[string]int{"id1": 1, "id2": 2}, func(id string) string { return "n" + id[2:] })
	if !reflect.DeepEqual(got, map[string]int{"n1": 1, "n2": 2}) {
		t.Errorf("ByName = %v", got)
	}
}

// MeanStats: empty and single samples, and the t interval of three.
func TestMeanStats(t *testing.T) {
	if s := MeanStats(nil); s.N != 0 || !math.IsNaN(s.Mean) || !math.IsNaN(s.SD) {
		t.Errorf("MeanStats(nil) = %+v", s)
	}
	if s := MeanStats([]float64{4}); s.Mean != 4 || !math.IsNaN(s.SD) || !math.IsNaN(s.HalfInterval) {
		t.Errorf("MeanStats([4]) = %+v", s)
	}
	s := MeanStats([]float64{1, 2, 3})
	// sd 1; t_{0.975, 2} = 4.303 (the table to three decimals); half interval t * 1 / sqrt(3).
	if s.Mean != 2 || s.SD != 1 || math.Abs(s.HalfInterval-4.303/math.Sqrt(3)) > 1e-12 ||
		math.Abs(s.Low-(2-s.HalfInterval)) > 1e-12 || math.Abs(s.High-(2+s.HalfInterval)) > 1e-12 {
		t.Errorf("MeanStats([1 2 3]) = %+v", s)
	}
}

// BestPoint chooses among complete points only, by mean, the first of
// equals, minimising or maximising.
func TestBestPoint(t *testing.T) {
	pts := []PointResult{
		{Index: 0, Values: []float64{5}, Trials: 2},     // incomplete: one trial had no finite objective
		{Index: 1, Values: []float64{2, 4}, Trials: 2},  // mean 3
		{Index: 2, Values: []float64{3, 3}, Trials: 2},  // mean 3, later
		{Index: 3, Values: []float64{9, 11}, Trials: 2}, // mean 10
		{Index: 4},
	}
	if p, ok := BestPoint(pts, false); !ok || p.Index != 1 {
		t.Errorf("min: point %d, %v; want 1", p.Index, ok)
	}
	if p, ok := BestPoint(pts, true); !ok || p.Index != 3 {
		t.Errorf("max: point %d, %v; want 3", p.Index, ok)
	}
	if _, ok := BestPoint(pts[:1], false); ok {
		t.Error("a best point among incomplete ones")
	}
}

func TestPointIndex(t *testing.T) {
	for in, want := range map[string]int{`"s12"`: 12, `"s0/gd"`: 0, `"s-1"`: -1, `"x3"`: -1, `s3`: -1, `"s"`: -1, `"s4@100"`: 4, `"s5/gd@27"`: 5} {
		n, rung, ok := experiment.ParsePointVariant(in)
		if ok != (want >= 0) || ok && n != want {
			t.Errorf("ParsePointVariant(%s) = %d, %v; want %d", in, n, ok, want)
		}
		if wantRung := strings.Contains(in, "@"); ok && rung != wantRung {
			t.Errorf("ParsePointVariant(%s): rung %v, want %v", in, rung, wantRung)
		}
	}
}

func TestSkipCauseAndFloatJSON(t *testing.T) {
	for reason, want := range map[string]string{"upstream train/a failed": "train/a", "upstream x": "", "cached": ""} {
		if got := skipCause(pipeline.Event{Reason: reason}); got != want {
			t.Errorf("skipCause(%q) = %q, want %q", reason, got, want)
		}
	}
	for f, want := range map[float64]string{1: "1.0", 0.5: "0.5", 1e21: "1e+21", -3: "-3.0"} {
		if got := floatJSON(f); got != want {
			t.Errorf("floatJSON(%v) = %s, want %s", f, got, want)
		}
	}
}
