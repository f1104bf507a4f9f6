package train

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"goldstone/internal/checkpoint"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/trialio"
)

// loop32Run is a float32 trial of a small chain (AdaGrad on float32
// parameters, Goldstone rounds every 4 steps with every round record,
// early stopping's best state in the checkpoints), killed by panicking in
// AtStep when kill says so. It returns the parameters, the series, the
// summary and the best state.
type loop32Run struct {
	x       []float32
	series  *trialio.Series
	summary trialio.Summary
	best    BestOf[float32]
	starts  []int
}

func runLoop32(ctx context.Context, ck pipeline.Checkpoint, steps int, kill func(step int) bool) (r loop32Run, err error) {
	const T, N, D = 5, 9, 3
	b := optim.Blocks{T: T, N: N, D: D}
	target := make([]float64, b.Len())
	for i := range target {
		target[i] = math.Sin(float64(3*i + 1))
	}
	local := func(grad, x []float32) float64 {
		var l float64
		for i, v := range x {
			d := float64(v) - target[i]
			l += float64(0.5 * float64(d*d))
			grad[i] += float32(d)
		}
		return l
	}
	r.x = make([]float32, b.Len())
	for i := range r.x {
		r.x[i] = float32(math.Cos(float64(7*i + 2)))
	}
	r.series, r.summary, r.best = &trialio.Series{}, trialio.Summary{}, BestOf[float32]{Patience: 1000}
	r.starts = []int{0}
	l := &LoopOf[float32]{Problem: optim.ProblemOf[float32]{Local: local, Blocks: b, Graph: optim.Chain(T, 1)},
		Opt:   &Optimizer{Method32: &optim.AdaGradOf[float32]{Rate: optim.Constant(0.05)}, Gauge: &optim.Goldstone{K2: 3, Search: optim.SearchRate}, K1: 4},
		Steps: steps, LogEvery: 2, Series: r.series, Summary: r.summary, Checkpoint: ck, GapAround: 1,
		Eval: func(x []float32) float64 { return local(make([]float32, len(x)), x) },
		Logf: func(f string, a ...any) {
			if strings.HasPrefix(f, "resumed") {
				r.starts[0] = a[0].(int)
			}
		}}
	l.Extra = func(it *optim.Iter, x []float32) error {
		r.best.Check(it.Step+1, -it.Loss, x)
		return nil
	}
	l.AtStep = func(step int, x []float32) {
		if kill != nil && kill(step) {
			panic(killed{step})
		}
	}
	l.State.Save = r.best.Save
	l.State.Load = func(st *checkpoint.State) error { return r.best.Load(st, len(r.x)) }
	defer func() {
		if v := recover(); v != nil {
			err = errors.New("killed")
		}
	}()
	err = l.Run(ctx, r.x)
	return r, err
}

// TestLoopFloat32Resume: a float32 trial (float32 parameters and AdaGrad
// state, float64 gauge fields, the float32 best state of early stopping)
// killed and resumed from its checkpoints ends with the bits of the
// uninterrupted float32 run: parameters, every series point, the summary
// but timings, the best state. Its checkpoints hold the parameters and
// AdaGrad's accumulators as float32 sections.
func TestLoopFloat32Resume(t *testing.T) {
	const steps = 40
	ref, err := runLoop32(context.Background(), pipeline.Checkpoint{}, steps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ref.summary["gauge_rounds"] != 10 || len(ref.best.X) == 0 {
		t.Fatalf("the reference ran %v gauge rounds, best state of %d values", ref.summary["gauge_rounds"], len(ref.best.X))
	}
	ck := pipeline.Checkpoint{Dir: checkpoint.Dir{Path: t.TempDir(), Key: "k"}, Policy: checkpoint.Policy{Every: 3}}
	var r loop32Run
	for _, at := range []int{7, 22, -1} {
		r, err = runLoop32(context.Background(), ck, steps, func(step int) bool { return step == at })
		if at >= 0 && err == nil {
			t.Fatalf("not killed at %d", at)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if r.starts[0] == 0 {
		t.Fatal("the last run did not resume")
	}
	if !reflect.DeepEqual(r.x, ref.x) {
		t.Fatal("resumed parameters differ from the uninterrupted run's")
	}
	if !reflect.DeepEqual(r.series.Metric, ref.series.Metric) || !reflect.DeepEqual(r.series.Step, ref.series.Step) {
		t.Fatalf("series points differ: %d vs %d", r.series.Len(), ref.series.Len())
	}
	sameBits(t, "series", r.series.Value, ref.series.Value)
	for k, v := range ref.summary {
		if w := r.summary[k]; !strings.HasSuffix(k, "_seconds") && math.Float64bits(v) != math.Float64bits(w) {
			t.Fatalf("summary %s = %v, uninterrupted %v", k, w, v)
		}
	}
	if !reflect.DeepEqual(r.best, ref.best) {
		t.Fatalf("best state at step %d, uninterrupted %d", r.best.Step, ref.best.Step)
	}
	st, _, err := ck.Dir.Load()
	if err != nil || st == nil {
		t.Fatalf("no checkpoint left: %v", err)
	}
	for _, n := range []string{"x", "method.0", "best.x"} {
		if st.Kind(n) != "f32" {
			t.Errorf("checkpoint section %s is %q, want f32", n, st.Kind(n))
		}
	}
	if st.Kind("gauge.0") != "f64" {
		t.Errorf("the gauge fields are %q in the checkpoint, want f64", st.Kind("gauge.0"))
	}
}

// TestLoopDtypeMismatch: a float64 loop refuses a float32 trial's
// checkpoint with an error naming both dtypes, and a float32 loop a
// float64 one.
func TestLoopDtypeMismatch(t *testing.T) {
	dir := t.TempDir()
	ck := pipeline.Checkpoint{Dir: checkpoint.Dir{Path: dir, Key: "k"}, Policy: checkpoint.Policy{Every: 2}, Keep: true}
	if _, err := runLoop32(context.Background(), ck, 6, nil); err != nil {
		t.Fatal(err)
	}
	r := &resumable{ck: ck}
	err := r.run(context.Background(), 10, nil)
	if err == nil || !errors.Is(err, checkpoint.ErrMismatch) || !strings.Contains(err.Error(), "float32") || !strings.Contains(err.Error(), "this trial's float64") {
		t.Fatalf("a float64 loop on a float32 checkpoint: %v", err)
	}
	dir64 := t.TempDir()
	ck64 := pipeline.Checkpoint{Dir: checkpoint.Dir{Path: dir64, Key: "k"}, Policy: checkpoint.Policy{Every: 2}, Keep: true}
	r = &resumable{ck: ck64}
	if err := r.run(context.Background(), 6, nil); err != nil {
		t.Fatal(err)
	}
	_, err = runLoop32(context.Background(), ck64, 10, nil)
	if err == nil || !errors.Is(err, checkpoint.ErrMismatch) || !strings.Contains(err.Error(), "this trial's float32") {
		t.Fatalf("a float32 loop on a float64 checkpoint: %v", err)
	}
}
