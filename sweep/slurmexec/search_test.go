package slurmexec

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/search"
	"goldstone/sweep"
	"goldstone/sweep/batch"
)

// TestFrozenWaveRoundTrip: a search wave frozen into a manifest reads
// back with every value of the same type and the same bits (the workers
// rebuild the trials from it: an int read back as a float, or a float off
// by one ulp, would be another trial).
func TestFrozenWaveRoundTrip(t *testing.T) {
	w := &sweep.Wave{
		Points: []search.Point{
			{"lr": 0.1 + 0.2, "k1": int64(math.MaxInt64), "gauge": "goldstone", "bias": true},
			{"lr": math.Nextafter(1, 2), "lambda": 5e-324, "d": int64(-3)},
			{},
		},
		Jobs: []experiment.RungJob{{Point: 0, Rung: 0}, {Point: 1, Rung: 2}},
		Last: true,
	}
	b, err := freezeWave(w, 7)
	if err != nil {
		t.Fatal(err)
	}
	m := &batch.Manifest{RunID: 1, Search: b}
	got, err := thawWave(m)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Fatalf("thawed %#v, want %#v", got, w)
	}
	for i, pt := range w.Points {
		for k, v := range pt {
			if f, ok := v.(float64); ok && math.Float64bits(f) != math.Float64bits(got.Points[i][k].(float64)) {
				t.Errorf("point %d %s: bits differ", i, k)
			}
		}
	}
	sw, err := searchWave(m)
	if err != nil || *sw != (SearchWave{Points: 3, Jobs: 2, Last: true, First: 7}) {
		t.Fatalf("searchWave: %+v, %v", sw, err)
	}
	if _, err := freezeWave(&sweep.Wave{Points: []search.Point{{"x": []float64{1}}}}, 0); err == nil {
		t.Fatal("a list value froze")
	}
	m.Search = []byte(`{"points":[{"lr":{}}],"last":false,"first":0}`)
	if _, err := thawWave(m); err == nil || !strings.Contains(err.Error(), "without a type") {
		t.Fatalf("a value without a type: %v", err)
	}
}

// TestExtendManifestRefusesOtherWaves: a search's next wave must begin
// with the run's trials; a wave whose earlier trials differ (other code
// suggesting other points) is refused, naming the trial.
func TestExtendManifestRefusesOtherWaves(t *testing.T) {
	f := newFixture(t)
	e := f.experiment()
	trials := e.Trials()
	m := &batch.Manifest{RunID: 3, Trials: []batch.Trial{{Index: 0, ID: trials[1].ID}}}
	job := &sweep.Job{Trials: trials}
	if err := earlierWaves(batch.Dir(f.dir), m, job); err == nil || !strings.Contains(err.Error(), "trial 0 of run 3 is "+trials[1].ID) {
		t.Fatalf("another first trial: %v", err)
	}
	if err := earlierWaves(batch.Dir(f.dir), m, &sweep.Job{}); err == nil || !strings.Contains(err.Error(), "run 3 has 1 trials, this wave of the search 0") {
		t.Fatalf("fewer trials: %v", err)
	}
	m.Trials[0].ID = trials[0].ID
	if err := earlierWaves(batch.Dir(f.dir), m, job); err != nil {
		t.Fatal(err)
	}
}

// TestPlanArrays: the arrays plan shows for a search's first wave: one
// trial per task with the throttle, packed, and split below MaxArraySize.
func TestPlanArrays(t *testing.T) {
	for _, c := range []struct {
		n    int
		o    Options
		want []string
	}{
		{4, Options{MaxParallel: 2}, []string{"0-3%2"}},
		{4, Options{MaxParallel: 100}, []string{"0-3"}},
		{5, Options{TrialsPerTask: 2}, []string{"0-2"}},
		{5, Options{MaxArraySize: 3, MaxParallel: 2}, []string{"0-2%2", "3+0-1"}},
		{0, Options{}, nil},
	} {
		if got := PlanArrays(c.n, c.o); !reflect.DeepEqual(got, c.want) {
			t.Errorf("PlanArrays(%d, %+v) = %v, want %v", c.n, c.o, got, c.want)
		}
	}
}
