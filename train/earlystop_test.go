package train

import (
	"context"
	"math"
	"slices"
	"testing"

	"goldstone/internal/checkpoint"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/trialio"
)

// Best keeps the first strict improvement, counts the checks since, and
// never takes a value that is not finite; higher or lower is better.
func TestBestCheck(t *testing.T) {
	b := &Best{Patience: 2, LowerBetter: true}
	x := []float64{1, 2}
	steps := []struct {
		v    float64
		stop bool
	}{{math.NaN(), false}, {3, false}, {3, false}, {2, false}, {math.Inf(-1), false}, {2.5, true}}
	for i, s := range steps {
		x[0] = float64(i)
		if got := b.Check(i, s.v, x); got != s.stop {
			t.Fatalf("check %d (%v): stop %v, want %v", i, s.v, got, s.stop)
		}
	}
	if b.Step != 3 || b.Value != 2 || b.X[0] != 3 || b.Since != 2 {
		t.Errorf("best %+v, want step 3, value 2, x[0] = 3, 2 checks since", *b)
	}
	h := &Best{Patience: 1}
	if h.Check(0, 1, x) || !h.Check(1, 0.5, x) {
		t.Error("higher is better: 1 then 0.5 should stop at the second check")
	}
	// Save and Load give back the same state, also before the first value.
	for _, src := range []*Best{b, {Patience: 2}} {
		st := checkpoint.NewState(7)
		src.Save(st)
		d := checkpoint.Dir{Path: t.TempDir(), Key: "k"}
		if _, err := d.Save(st); err != nil {
			t.Fatal(err)
		}
		st, _, err := d.Load()
		if err != nil || st == nil {
			t.Fatal(st, err)
		}
		got := &Best{}
		if err := got.Load(st, len(x)); err != nil {
			t.Fatal(err)
		}
		if got.Step != src.Step || got.Since != src.Since || got.Value != src.Value || !slices.Equal(got.X, src.X) {
			t.Errorf("loaded %+v, saved %+v", *got, *src)
		}
	}
}

// esRun runs a loop on a quadratic whose "validation metric" bottoms at
// iterate 21 (checked at every logged step, every 2), with patience 3 and
// checkpoints every 4 steps in ck (none: ck zero); kill stops the process
// at a step (a panic, no checkpoint written on the way out). It returns
// the tracker, the loop and the iterates seen at the checks.
func esRun(t *testing.T, ck pipeline.Checkpoint, kill int) (*Best, *Loop, map[int][]float64, bool) {
	t.Helper()
	b := optim.Blocks{T: 3, N: 2, D: 2}
	target := make([]float64, b.Len())
	for i := range target {
		target[i] = math.Sin(float64(i + 1))
	}
	local := func(grad, x []float64) float64 {
		var l float64
		for i, v := range x {
			d := v - target[i]
			l += float64(0.5*d) * d
			grad[i] += d
		}
		return l
	}
	best := &Best{Patience: 3, LowerBetter: true}
	seen := map[int][]float64{}
	x := make([]float64, b.Len())
	l := &Loop{Problem: optim.Problem{Local: local, Blocks: b, Graph: optim.Chain(3, 1)},
		Opt:   &Optimizer{Method: &optim.Adam{Rate: optim.Constant(0.01)}},
		Steps: 100, LogEvery: 2, Series: &trialio.Series{}, Summary: trialio.Summary{}, Checkpoint: ck}
	l.Checkpoint.Policy.Every = 4
	l.Extra = func(it *optim.Iter, x []float64) error {
		s := it.Step + 1
		seen[s] = slices.Clone(x)
		if best.Check(s, float64((s-21)*(s-21)), x) {
			return ErrStopEarly
		}
		return nil
	}
	l.AtStep = func(step int, x []float64) {
		if step == kill {
			panic(killed{step})
		}
	}
	l.State.Save = best.Save
	l.State.Load = func(st *checkpoint.State) error { return best.Load(st, len(x)) }
	killedAt := false
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(killed); !ok {
					panic(r)
				}
				killedAt = true
			}
		}()
		if err := l.Run(context.Background(), x); err != nil {
			t.Fatal(err)
		}
	}()
	return best, l, seen, killedAt
}

// A loop whose Extra returns ErrStopEarly ends well at that step, with
// the best state kept; killed and resumed from a checkpoint, it keeps the
// same best state and stops at the same step.
func TestLoopStopsEarly(t *testing.T) {
	best, l, seen, _ := esRun(t, pipeline.Checkpoint{}, -1)
	if !l.StoppedEarly || l.Diverged != nil {
		t.Fatalf("stopped early %v, diverged %v", l.StoppedEarly, l.Diverged)
	}
	if best.Step != 21 || !slices.Equal(best.X, seen[21]) {
		t.Errorf("best step %d (x %v), want 21 (x %v)", best.Step, best.X, seen[21])
	}
	last := int64(-1)
	for i, m := range l.Series.Metric {
		if m == "loss" {
			last = l.Series.Step[i]
		}
	}
	if last != 26 || math.IsNaN(l.Summary["final_loss"]) {
		t.Errorf("last loss at step %d (want 26: iterate 27 is the third check after 21), final_loss %v", last, l.Summary["final_loss"])
	}
	ck := pipeline.Checkpoint{Dir: checkpoint.Dir{Path: t.TempDir(), Key: "k"}}
	if _, _, _, k := esRun(t, ck, 25); !k { // after the best check (21) and the checkpoint of step 24
		t.Fatal("the run was not killed")
	}
	again, l2, _, _ := esRun(t, ck, -1)
	if again.Step != best.Step || !slices.Equal(again.X, best.X) || !l2.StoppedEarly ||
		!slices.Equal(l2.Series.Value, l.Series.Value) || !slices.Equal(l2.Series.Step, l.Series.Step) {
		t.Errorf("resumed: best step %d, stopped early %v; want %d and the uninterrupted series", again.Step, l2.StoppedEarly, best.Step)
	}
}
