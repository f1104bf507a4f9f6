package train

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"goldstone/internal/checkpoint"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/trialio"
)

// killed stands for a process killed at a step: no checkpoint is written
// on the way out.
type killed struct{ step int }

// resumable is a trial of a loop on a small chain whose local loss depends
// on a random weight drawn before every step (as DWE's minibatches are),
// with Adam and Goldstone rounds every 3 steps (with the rate line search
// and every round record), and snapshots taken by AtStep: everything a
// resumed run must restore.
type resumable struct {
	ck      pipeline.Checkpoint
	x       []float64
	snaps   [][]float64
	series  *trialio.Series
	summary trialio.Summary
	logs    []string
	resumed []int // steps the runs resumed at
	starts  []int // step each run started at (0: afresh)
	// blowAt > 0 multiplies the local loss by 2^(s-blowAt+1) from step
	// blowAt on (the gradient is the same): the run diverges where that
	// passes factor x |loss at step 0|.
	blowAt   int
	factor   float64
	diverged *optim.DivergedError
}

func (r *resumable) run(ctx context.Context, steps int, kill func(step int) bool) error {
	const T, N, D = 6, 4, 2
	b := optim.Blocks{T: T, N: N, D: D}
	target := make([]float64, b.Len())
	for i := range target {
		target[i] = math.Sin(float64(3*i + 1))
	}
	src := rand.NewPCG(5, 6)
	rng := rand.New(src)
	var w float64
	cur := 0 // the step AtStep drew for
	local := func(grad, x []float64) float64 {
		var l float64
		for i, v := range x {
			d := v - target[i]
			l += float64(0.5*w) * d * d
			grad[i] += w * d
		}
		if r.blowAt > 0 && cur >= r.blowAt {
			l *= math.Ldexp(1, cur-r.blowAt+1)
		}
		return l
	}
	r.starts = append(r.starts, 0)
	r.x = make([]float64, b.Len())
	for i := range r.x {
		r.x[i] = math.Cos(float64(7*i + 2))
	}
	r.snaps, r.series, r.summary = nil, &trialio.Series{}, trialio.Summary{}
	l := &Loop{Problem: optim.Problem{Local: local, Blocks: b, Graph: optim.Chain(T, 1)},
		Opt:   &Optimizer{Method: &optim.Adam{Rate: optim.Constant(0.05)}, Gauge: &optim.Goldstone{K2: 3, Rate: 20, Search: optim.SearchRate}, K1: 3},
		Steps: steps, LogEvery: 2, Series: r.series, Summary: r.summary, Checkpoint: r.ck, DivergeFactor: r.factor,
		// The round records: the gap around and at every round, the loss
		// before and after it, the line search's halvings.
		GapAround: 1, Eval: func(x []float64) float64 { return local(make([]float64, len(x)), x) },
		Logf: func(f string, a ...any) {
			r.logs = append(r.logs, f)
			if strings.HasPrefix(f, "resumed") {
				r.resumed = append(r.resumed, a[0].(int))
				r.starts[len(r.starts)-1] = a[0].(int)
			}
		}}
	l.Extra = func(it *optim.Iter, x []float64) error {
		r.series.Add("w", it.Step, w)
		return nil
	}
	l.AtStep = func(step int, x []float64) {
		if kill != nil && kill(step) {
			panic(killed{step})
		}
		if step%5 == 0 {
			r.snaps = append(r.snaps, append([]float64(nil), x...))
		}
		w = 0.5 + rng.Float64()
		cur = step
	}
	l.State.Save = func(st *checkpoint.State) {
		b, _ := src.MarshalBinary()
		st.Bytes("rng", b)
		var z []float64
		for _, s := range r.snaps {
			z = append(z, s...)
		}
		st.Floats("snaps", z)
	}
	l.State.Load = func(st *checkpoint.State) error {
		b, err := st.ReadBytes("rng")
		if err != nil {
			return err
		}
		if err := src.UnmarshalBinary(b); err != nil {
			return err
		}
		z, err := st.ReadAllFloats("snaps")
		r.snaps = nil
		for k := 0; k < len(z); k += len(r.x) {
			r.snaps = append(r.snaps, z[k:k+len(r.x)])
		}
		return err
	}
	err := l.Run(ctx, r.x)
	r.diverged = l.Diverged
	return err
}

// runToEnd runs r, restarting it after every simulated kill, as a rerun of
// the same command would.
func (r *resumable) runToEnd(t *testing.T, ctx context.Context, steps int, kill func(step int) bool) (kills []int) {
	t.Helper()
	for {
		var err error
		var k *killed
		func() {
			defer func() {
				if v := recover(); v != nil {
					kv := v.(killed)
					k = &kv
				}
			}()
			err = r.run(ctx, steps, kill)
		}()
		if k == nil {
			if err != nil {
				t.Fatal(err)
			}
			return kills
		}
		kills = append(kills, k.step)
	}
}

func sameBits(t *testing.T, what string, a, b []float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values, uninterrupted %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("%s[%d] = %v, uninterrupted %v", what, i, a[i], b[i])
		}
	}
}

// compare checks every value of r against the uninterrupted run ref: the
// parameters, every series point, every summary metric but timings, and
// the snapshots.
func compare(t *testing.T, r, ref *resumable) {
	t.Helper()
	sameBits(t, "x", r.x, ref.x)
	if !reflect.DeepEqual(r.series.Metric, ref.series.Metric) || !reflect.DeepEqual(r.series.Step, ref.series.Step) {
		t.Fatalf("series points differ: %d vs %d", r.series.Len(), ref.series.Len())
	}
	sameBits(t, "series", r.series.Value, ref.series.Value)
	for k, v := range ref.summary {
		if strings.HasSuffix(k, "_seconds") {
			continue
		}
		if w, ok := r.summary[k]; !ok || math.Float64bits(v) != math.Float64bits(w) {
			t.Fatalf("summary %s = %v, uninterrupted %v", k, w, v)
		}
	}
	if len(r.summary) != len(ref.summary) {
		t.Fatalf("summary has %d metrics, uninterrupted %d", len(r.summary), len(ref.summary))
	}
	if len(r.snaps) != len(ref.snaps) {
		t.Fatalf("%d snapshots, uninterrupted %d", len(r.snaps), len(ref.snaps))
	}
	for i := range r.snaps {
		sameBits(t, "snapshot", r.snaps[i], ref.snaps[i])
	}
}

// TestLoopResume kills a loop at random steps, as often as it likes, and
// resumes it from its checkpoints: every value is the uninterrupted run's,
// and no run redoes more than one checkpoint interval.
func TestLoopResume(t *testing.T) {
	const steps = 120
	ref := &resumable{}
	if err := ref.run(context.Background(), steps, nil); err != nil {
		t.Fatal(err)
	}
	if ref.summary["gauge_backtracks"] == 0 {
		t.Fatal("the rate line search never halved: the test does not cover its count's checkpoint")
	}
	rng := rand.New(rand.NewPCG(22, 1))
	for trial := range 12 {
		every := 1 + rng.IntN(15)
		r := &resumable{ck: pipeline.Checkpoint{Dir: checkpoint.Dir{Path: filepath.Join(t.TempDir(), "ck"), Key: "k"}, Policy: checkpoint.Policy{Every: every}}}
		// Each time step s comes up, kill with probability 1/20; at most 5 kills.
		seen := map[int]int{}
		n := 0
		kills := r.runToEnd(t, context.Background(), steps, func(step int) bool {
			seen[step]++
			if n < 5 && seen[step] == 1 && step > 0 && rng.IntN(20) == 0 {
				n++
				return true
			}
			return false
		})
		compare(t, r, ref)
		if len(r.starts) != len(kills)+1 {
			t.Fatalf("every %d: %d kills, %d runs", every, len(kills), len(r.starts))
		}
		for i, k := range kills {
			// Killed in AtStep(k): steps starts..k-1 are redone. A
			// checkpoint is written before AtStep(k) when one is due,
			// except after the last step (the trial's outputs follow).
			limit := every - 1
			if k == steps {
				limit = every
			}
			if redo := k - r.starts[i+1]; redo < 0 || redo > limit {
				t.Fatalf("every %d: killed before step %d, resumed at %d: %d steps redone", every, k, r.starts[i+1], redo)
			}
		}
		t.Logf("trial %d: checkpoint every %d steps, killed before steps %v, runs started at %v", trial, every, kills, r.starts)
	}
}

// TestLoopCancelSaves: a cancelled loop saves a checkpoint of the step it
// stopped at and returns ctx's error; the next run resumes there and loses
// no step.
func TestLoopCancelSaves(t *testing.T) {
	const steps = 60
	ref := &resumable{}
	if err := ref.run(context.Background(), steps, nil); err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{1, 17, steps} {
		r := &resumable{ck: pipeline.Checkpoint{Dir: checkpoint.Dir{Path: t.TempDir(), Key: "k"}}} // default policy: none due in a test
		ctx, cancel := context.WithCancel(context.Background())
		err := r.run(ctx, steps, func(step int) bool {
			if step == at {
				cancel()
			}
			return false
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled at %d: %v", at, err)
		}
		if err := r.run(context.Background(), steps, nil); err != nil {
			t.Fatal(err)
		}
		want := min(at+1, steps) // cancelled while AtStep(at) ran: step at is taken, then saved
		if len(r.resumed) != 1 || r.resumed[0] != want {
			t.Fatalf("cancelled at %d: resumed at %v, want %d", at, r.resumed, want)
		}
		compare(t, r, ref)
	}
	// Without a checkpoint directory nothing is saved, and cancelling
	// still stops the loop.
	r := &resumable{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.run(ctx, steps, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled without checkpoints: %v", err)
	}
}

// TestLoopForeignCheckpoint: a checkpoint of another key is not used (the
// loop starts afresh and says why).
func TestLoopForeignCheckpoint(t *testing.T) {
	dir := t.TempDir()
	r := &resumable{ck: pipeline.Checkpoint{Dir: checkpoint.Dir{Path: dir, Key: "old"}, Policy: checkpoint.Policy{Every: 5}}}
	r.runToEnd(t, context.Background(), 30, func(step int) bool { return step == 12 && len(r.resumed) == 0 && r.logs == nil })
	r2 := &resumable{ck: pipeline.Checkpoint{Dir: checkpoint.Dir{Path: dir, Key: "new"}, Policy: checkpoint.Policy{Every: 5}}}
	if err := r2.run(context.Background(), 30, nil); err != nil {
		t.Fatal(err)
	}
	if len(r2.resumed) != 0 || len(r2.logs) == 0 || !strings.Contains(r2.logs[0], "not used") {
		t.Fatalf("resumed %v, logs %q", r2.resumed, r2.logs)
	}
}

// TestLoopDiverged: a loop whose loss passes its bound ends without error,
// Diverged set, at the same step when killed and resumed any number of
// times (the bound's scale is the uninterrupted run's); its series end
// before the step, and its summary records the divergence and what the
// run never reached.
func TestLoopDiverged(t *testing.T) {
	const steps = 120
	ref := &resumable{blowAt: 50, factor: 20}
	if err := ref.run(context.Background(), steps, nil); err != nil {
		t.Fatalf("a diverged loop returned %v, want nil", err)
	}
	d := ref.diverged
	if d == nil || d.Quantity != optim.QuantityLocal || !d.Finite() || d.Step < 50 || d.Step > 60 {
		t.Fatalf("diverged %v, want the local loss past its bound soon after step 50", d)
	}
	dv, ok := ref.summary.Divergence()
	if !ok || dv.Step != d.Step || dv.Quantity != d.Quantity || dv.Value != d.Value || dv.Bound != d.Bound {
		t.Fatalf("summary's divergence %+v (%v), the loop's %v", dv, ok, d)
	}
	for _, k := range []string{"final_loss", "final_psi", "final_gauge_gap"} {
		if !math.IsNaN(ref.summary[k]) {
			t.Errorf("%s = %v, want NaN", k, ref.summary[k])
		}
	}
	if ref.summary["steps_to_gap_1pct"] != math.Inf(1) || ref.summary["gauge_lowered_share"] != 0 || !(ref.summary["gauge_rounds"] > 0) {
		t.Errorf("steps_to_gap_1pct %v, gauge_lowered_share %v of %v rounds; want never and 0", ref.summary["steps_to_gap_1pct"], ref.summary["gauge_lowered_share"], ref.summary["gauge_rounds"])
	}
	if st, _ := ref.series.Of("loss"); len(st) == 0 || int(st[len(st)-1]) >= d.Step {
		t.Errorf("loss recorded up to step %v, diverged at %d", st, d.Step)
	}
	// Resumed from a checkpoint, the bound is relative to the loss at step
	// 0 (not at the resumed step, which is lower): the same step.
	rng := rand.New(rand.NewPCG(23, 1))
	for range 4 {
		r := &resumable{blowAt: 50, factor: 20, ck: pipeline.Checkpoint{Dir: checkpoint.Dir{Path: filepath.Join(t.TempDir(), "ck"), Key: "k"}, Policy: checkpoint.Policy{Every: 3}}}
		killAt := 30 + rng.IntN(d.Step-30)
		kills := r.runToEnd(t, context.Background(), steps, func(step int) bool { return step == killAt && len(r.resumed) == 0 })
		if len(kills) != 1 || len(r.resumed) != 1 {
			t.Fatalf("killed at %v, resumed at %v", kills, r.resumed)
		}
		compare(t, r, ref)
	}
}

// TestLoopPromote is pruning's promotion: a run of 40 steps whose
// checkpoints are kept (Checkpoint.Keep) is continued to 90 and then to
// 120 steps with no step redone, and each longer run's parameters, series,
// summary and snapshots equal, bit for bit, those of a run of its length
// from step 0. Nothing the loop records may depend on its budget.
func TestLoopPromote(t *testing.T) {
	ck := pipeline.Checkpoint{Dir: checkpoint.Dir{Path: filepath.Join(t.TempDir(), "ck"), Key: "k"}, Keep: true}
	r := &resumable{ck: ck}
	for _, rung := range []struct{ steps, from int }{{40, 0}, {90, 40}, {120, 90}} {
		if err := r.run(context.Background(), rung.steps, nil); err != nil {
			t.Fatal(err)
		}
		if got := r.starts[len(r.starts)-1]; got != rung.from {
			t.Fatalf("the run of %d steps started at step %d, want %d (the shorter run's end)", rung.steps, got, rung.from)
		}
		ref := &resumable{}
		if err := ref.run(context.Background(), rung.steps, nil); err != nil {
			t.Fatal(err)
		}
		compare(t, r, ref)
	}
	// A shorter run than the longest checkpoint starts afresh (it cannot go
	// back) and still gives its own length's values.
	if err := r.run(context.Background(), 30, nil); err != nil {
		t.Fatal(err)
	}
	ref := &resumable{}
	if err := ref.run(context.Background(), 30, nil); err != nil {
		t.Fatal(err)
	}
	compare(t, r, ref)
}
