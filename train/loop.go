package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"goldstone/internal/fault"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/trialio"
)

// Optimizer is a trial's optimizer as built from its settings.
type Optimizer struct {
	Method optim.Method
	// Method32 is the same method on float32 parameters (the float32
	// mode, LoopOf[float32]); nil: the optimizer has none.
	Method32 optim.MethodOf[float32]
	Gauge    optim.Gauge // nil: no symmetry step (a float32 loop needs an optim.Gauge32)
	K1       int
	Pool     *optim.Pool // the trial's pool (nil: inline); not owned
}

// Build builds the base method (for both element types) and the symmetry
// step on the trial's pool.
func (s OptimSettings) Build(pool *optim.Pool) *Optimizer {
	r := s.Schedule()
	return &Optimizer{Method: s.Method.Method(r), Method32: s.Method.Method32(r), Gauge: s.Gauge.Gauge(pool), K1: s.Gauge.Every(), Pool: pool}
}

// methodOf returns o's method on parameters of type F (nil: none).
func methodOf[F optim.Float](o *Optimizer) optim.MethodOf[F] {
	var m any = o.Method
	if is32[F]() {
		m = o.Method32
	}
	mf, _ := m.(optim.MethodOf[F])
	return mf
}

// Wide returns x as float64: x itself on float64, else x widened
// (exactly) into *buf, allocated when its length is not len(x): what a
// stage writes and evaluates of a float32 run.
func Wide[F optim.Float](x []F, buf *[]float64) []float64 {
	switch x := any(x).(type) {
	case []float64:
		return x
	case []float32:
		if len(*buf) != len(x) {
			*buf = make([]float64, len(x))
		}
		for i, v := range x {
			(*buf)[i] = float64(v)
		}
	}
	return *buf
}

// is32 reports whether F is float32 (the float32 mode).
func is32[F optim.Float]() bool {
	_, ok := any([]F(nil)).([]float32)
	return ok
}

// LoopOf is the shared training loop of the MF pipelines on parameters of
// type F (Loop: float64; float32: the float32 mode, whose parameters,
// gradients and optimizer state are float32 while every loss, psi, gap and
// summary is float64). It runs the driver,
// records loss, local loss, psi and the gauge gap as step-wise metrics, and
// wall and gauge time as summary metrics. With a Checkpoint it saves its
// state as the policy says and when ctx is cancelled, and a Loop that finds
// a checkpoint continues from it: the series, summary and parameters are
// then those of an uninterrupted run, bit for bit (see checkpoint.go).
type LoopOf[F optim.Float] struct {
	Problem optim.ProblemOf[F]
	Opt     *Optimizer
	Steps   int
	// DivergeFactor bounds the run (optim.Driver.DivergeFactor; 0: the
	// default). A run that diverges ends without error: Diverged says
	// where, and the summary records it (see Run).
	DivergeFactor float64
	LogEvery      int
	GapEvery      int // 0: with every logged step
	// GapAround also records the gauge gap at the iterates within this many
	// steps of every gauge round (before and after it), logged or not, and
	// at the start of every round (round_gap).
	GapAround int
	// Eval, when set, evaluates the local loss at x without changing any
	// training state (for example the minibatch sequence); the loop then
	// records the loss before and after every gauge round (round_loss_pred,
	// round_loss_real; two evaluations per round, not counted as gauge
	// time).
	Eval    func(x []F) float64
	Series  *trialio.Series
	Summary trialio.Summary
	// Extra is called at every logged step, after the standard metrics, to
	// record model-specific ones; it may return an error to stop.
	Extra func(it *optim.Iter, x []F) error
	// AtStep is called before step s is taken (for snapshots, and to draw
	// the step's minibatch); optional. A resumed loop calls it first with
	// the step it resumes at.
	AtStep func(step int, x []F)
	// Progress reports the current step, the loss at the last one and the
	// series so far (for progress displays); optional.
	Progress Progress

	// Checkpoint is where and when the loop saves its state
	// (pipeline.IO.Checkpoint); an empty directory saves none.
	Checkpoint pipeline.Checkpoint
	// State saves and restores what the stage keeps beyond x (a random
	// source, a minibatch counter, snapshots) with each checkpoint.
	State StateHooks
	// Logf reports what the checkpoints did (pipeline.IO.Logf); optional.
	Logf func(format string, args ...any)

	// Diverged is set by Run when the training diverged.
	Diverged *optim.DivergedError
	// StoppedEarly is set by Run when Extra ended the run with
	// ErrStopEarly (see earlystop.go).
	StoppedEarly bool
}

// Loop is LoopOf on float64 parameters.
type Loop = LoopOf[float64]

// Loop returns the training loop of these settings for a problem, with the
// optimizer built on the trial's pool.
func (s LoopSettings) Loop(p optim.Problem, pool *optim.Pool) *Loop {
	return LoopFor(s, p, pool)
}

// LoopFor is LoopSettings.Loop on parameters of type F.
func LoopFor[F optim.Float](s LoopSettings, p optim.ProblemOf[F], pool *optim.Pool) *LoopOf[F] {
	return &LoopOf[F]{Problem: p, Opt: s.Optim.Build(pool), Steps: s.Steps, DivergeFactor: s.DivergeFactor,
		LogEvery: s.LogEvery, GapEvery: s.GapEvery, GapAround: s.GapAround}
}

// Run trains x in place. It stops with ctx's error, after saving a
// checkpoint, when ctx is cancelled.
//
// A run that diverges (a loss, local loss or psi not finite or past the
// bound: optim.DivergedError) is a result, not an error, unless its loss
// is not finite at the initial iterate (an error of the data or the
// initialisation: nothing was trained). Run returns nil with Diverged set
// and x as the driver left it; the series hold the steps before the
// divergence, and the summary records it (trialio.Divergence:
// diverged_step, diverged_quantity, diverged_value, diverged_bound) with
// what the run never reached: final_loss, final_psi and final_gauge_gap
// are NaN (there is no final iterate), steps_to_gap_1pct is runs.Never, and
// gauge_lowered_share is 0 (its rounds count as rounds that raised psi).
// The stage must not evaluate x then, and reports its own metrics the
// same way (see DivergedSummary).
func (l *LoopOf[F]) Run(ctx context.Context, x []F) error {
	d := &optim.DriverOf[F]{Method: methodOf[F](l.Opt), Gauge: l.Opt.Gauge, K1: l.Opt.K1, Pool: l.Opt.Pool, DivergeFactor: l.DivergeFactor}
	if _, ok := d.Gauge.(optim.Gauge32); is32[F]() && d.Gauge != nil && !ok {
		return fmt.Errorf("train: the gauge step %T does not run on float32 parameters", d.Gauge)
	}
	tree := l.Problem.Graph != nil && l.Problem.Graph.IsTree()
	gapEvery := l.GapEvery
	if gapEvery <= 0 {
		gapEvery = l.LogEvery
	}
	var gm *gapMeter[F]
	if tree {
		var err error
		if gm, err = newGapMeter[F](l.Problem.Blocks, l.Problem.Graph, l.Opt.Pool); err != nil {
			return err
		}
	}
	rec := l.roundRecorder(d, gm) // before the checkpointer: it forwards the gauge's state
	ls := &loopState{}
	ck := l.checkpointer(d, x, ls)
	resumed, err := ck.resume(d)
	if err != nil {
		return err
	}
	if rec != nil {
		rec.iterate = d.Start + 1 // the round after the first step
	}
	if !resumed {
		if tree {
			gm.record(l.Series, 0, x) // x_0: series are labelled by iterate index
		}
		if l.AtStep != nil {
			l.AtStep(0, x)
		}
	}
	start := time.Now()
	res, err := d.Run(l.Problem, x, l.Steps, func(it *optim.Iter) error {
		ls.run = *it.Run
		ls.gaugeSeconds = it.Run.GaugeSeconds
		if rec != nil {
			ls.gaugeSeconds -= rec.seconds
			rec.iterate = it.Step + 2 // the round after the next step
		}
		ls.lastLoss, ls.lastPsi, ls.divergeScale = it.Loss, it.Psi, it.DivergeScale
		if it.Gauge != nil {
			recordRound(l.Series, it.Step+1, it.Gauge)
		}
		if err := l.logStep(it, x, gm, gapEvery, ls); err != nil {
			return err
		}
		// Step it.Step is recorded whole: a checkpoint now holds the
		// state before step it.Step+1 (and before AtStep draws for it).
		if err := ck.after(ctx, it.Step+1, ls.elapsed+time.Since(start).Seconds(), false); err != nil {
			return err
		}
		if l.AtStep != nil {
			l.AtStep(it.Step+1, x)
		}
		if l.Progress != nil {
			l.Progress(it.Step+1, l.Steps, it.Loss, l.Series)
		}
		fault.Point("train:step")
		return nil
	})
	var div *optim.DivergedError
	if res.Stop == optim.StopDiverged {
		div, _ = err.(*optim.DivergedError)
	}
	if errors.Is(err, ErrStopEarly) {
		l.StoppedEarly, err = true, nil // a run that ended well, at the iterate reached
	}
	switch {
	case div != nil && div.Step == 0 && !div.Finite():
		// Not a divergence: nothing was trained. The data or the
		// initialisation give no finite loss at all.
		err = fmt.Errorf("%w (at the initial iterate: the data or the initialisation, not the training)", err)
	case div != nil:
		l.Diverged, err = div, nil
	case err == nil:
		// Cancelled after the last step's checkpoint decision: its
		// outputs will not be kept, so keep the steps.
		err = ck.after(ctx, l.Steps, ls.elapsed+time.Since(start).Seconds(), true)
	}
	l.summarize(x, gm, ls, res, err == nil, start)
	return err
}

// logStep records step it.Step's metrics when it is logged, and the gauge
// gap of the iterate after it when that is due (every gapEvery logged
// steps, and around the gauge rounds, those after the budget's end
// included: a longer run records them too). The last step is not
// special: its loss and psi are the summary's final_loss and final_psi.
func (l *LoopOf[F]) logStep(it *optim.Iter, x []F, gm *gapMeter[F], gapEvery int, ls *loopState) error {
	// Nothing here depends on l.Steps: the first s steps of a run record
	// the same points whatever its budget, so a longer run of the same
	// trial continues a shorter one's checkpoint exactly (pruning).
	logged := it.Step%l.LogEvery == 0
	if logged {
		l.Series.Add("loss", it.Step, it.Loss)
		l.Series.Add("local_loss", it.Step, it.Local)
		l.Series.Add("psi", it.Step, it.Psi)
	}
	near := l.Opt.Gauge != nil && optim.NearRound(l.Opt.K1, math.MaxInt32, l.GapAround, it.Step+1)
	if gm != nil && (logged && it.Step%gapEvery == 0 || near) {
		// loss and psi above are those of x_{it.Step}; x has moved on
		// to x_{it.Step+1} (after any gauge round), whose gap is
		// labelled with its own index.
		t0 := time.Now()
		gm.record(l.Series, it.Step+1, x)
		ls.gapSeconds += time.Since(t0).Seconds()
	}
	if logged && l.Extra != nil {
		return l.Extra(it, x)
	}
	return nil
}

// summarize writes the run's summary metrics (the final gap and
// steps_to_gap_1pct only after a run that ended well or diverged).
func (l *LoopOf[F]) summarize(x []F, gm *gapMeter[F], ls *loopState, res optim.Result, ok bool, start time.Time) {
	div := l.Diverged
	switch {
	case gm != nil && ok && div != nil:
		GapSummary(l.Series, l.Summary) // max_gap_rel: the largest seen before the divergence
		l.Summary["final_gauge_gap"] = math.NaN()
		for _, k := range []string{"steps_to_gap_1pct", "steps_to_gap_0.1pct", "steps_to_gap_10pct_peak"} {
			l.Summary[k] = runs.Never
		}
	case gm != nil && ok:
		t0 := time.Now()
		l.Summary["final_gauge_gap"] = gm.gap(x)
		ls.gapSeconds += time.Since(t0).Seconds()
		l.Summary["steps_to_gap_1pct"] = StepsToGapBelow(l.Series, GapTolerance)
		GapSummary(l.Series, l.Summary)
	}
	if l.Opt.Gauge != nil && l.Opt.K1 > 0 {
		gaugeSummary(l.Summary, res, div != nil)
		concentrationSummary(l.Series, l.Summary)
	}
	l.Summary["wall_seconds"] = ls.elapsed + time.Since(start).Seconds()
	l.Summary["gauge_seconds"] = ls.gaugeSeconds
	if gm != nil {
		// Measuring the gap is not training: the gauge's share of the
		// training time is gauge_seconds / (wall_seconds - gap_seconds).
		// The gap records before a resume are not in a checkpoint, so
		// after one gap_seconds counts those since the resume only.
		l.Summary["gap_seconds"] = ls.gapSeconds
	}
	l.Summary["final_loss"] = ls.lastLoss
	l.Summary["final_psi"] = ls.lastPsi
	if div != nil {
		DivergedSummary(l.Summary, div)
	}
}

// DivergedSummary records the divergence d in sum (trialio.Divergence)
// and sets final_loss and final_psi to NaN: a diverged run has no final
// iterate. A stage adds its own metrics of a diverged trial the same way:
// a threshold it never reached is runs.Never (every steps_to_* metric,
// reached before the divergence or not: the run did not end there), a
// metric of the final iterate (held-out likelihoods, distances) NaN.
func DivergedSummary(sum trialio.Summary, d *optim.DivergedError) {
	sum.SetDivergence(trialio.Divergence{Step: d.Step, Quantity: d.Quantity, Value: d.Value, Bound: d.Bound})
	sum["final_loss"] = math.NaN()
	sum["final_psi"] = math.NaN()
}

// roundRecorder wraps d's gauge in a roundRecorder when the loop records
// the loss around the rounds (Eval) or the gap they start from (GapAround
// on a tree, gm), and returns it (nil: not wrapped).
func (l *LoopOf[F]) roundRecorder(d *optim.DriverOf[F], gm *gapMeter[F]) *roundRecorder[F] {
	if d.Gauge == nil || d.K1 <= 0 || l.Eval == nil && (gm == nil || l.GapAround <= 0) {
		return nil
	}
	rec := &roundRecorder[F]{inner: d.Gauge, eval: l.Eval, series: l.Series}
	if l.GapAround > 0 {
		rec.gap = gm
	}
	d.Gauge = rec
	return rec
}

// FirstBelow returns the first step at which metric falls below thr, or
// runs.Never (+Inf) when it never does.
func FirstBelow(s *trialio.Series, metric string, thr float64) float64 {
	for i, m := range s.Metric {
		if m == metric && s.Value[i] < thr {
			return float64(s.Step[i])
		}
	}
	return runs.Never
}

// gapMeter measures the gauge gap psi(Z) - min_R psi(R Z) on a tree coupling
// with one reusable Procrustes solver (no allocation per call); on float32
// parameters its overlaps and sums are float64 (optim.Procrustes.Gap32).
type gapMeter[F optim.Float] struct {
	p optim.Procrustes
	b optim.Blocks
	g *optim.Graph
}

func newGapMeter[F optim.Float](b optim.Blocks, g *optim.Graph, pool *optim.Pool) (*gapMeter[F], error) {
	m := &gapMeter[F]{b: b, g: g}
	m.p.Pool = pool
	if err := m.p.Init(b, g); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *gapMeter[F]) gap(x []F) float64 {
	// With a finite sum of squares every overlap M_tt' is finite
	// (Cauchy-Schwarz); otherwise the iterate diverged and the driver
	// reports it at the next step.
	var ss float64
	for _, v := range x[m.b.Offset : m.b.Offset+m.b.Len()] {
		w := float64(v)
		ss += float64(w * w)
	}
	if math.IsNaN(ss) || math.IsInf(ss, 0) {
		return math.NaN()
	}
	switch x := any(x).(type) {
	case []float32:
		return m.p.Gap32(x)
	case []float64:
		return m.p.Gap(x)
	}
	panic("unreachable")
}

// Progress reports a training stage's step of total, the loss at the last
// step and the series recorded so far (nil: none).
type Progress func(step, total int, loss float64, series *trialio.Series)

// ProgressFunc rate-limits a stage's step progress to a few events a
// second, each with the latest loss and the latest value of every series
// metric (valid_ll, psi, ...: what runner run --progress-metric shows).
func ProgressFunc(io *pipeline.IO) Progress {
	var last time.Time
	return func(step, total int, loss float64, series *trialio.Series) {
		if step == total || time.Since(last) > 250*time.Millisecond {
			last = time.Now()
			vals := map[string]float64{}
			if series != nil {
				for k, v := range series.Latest() {
					vals[k] = v
				}
			}
			vals["loss"] = loss
			io.ProgressValues(int64(step), int64(total), vals)
		}
	}
}

// StageIO is what a training loop takes from its stage's pipeline.IO: where
// and when to save checkpoints, where its log lines go, and step progress.
// The zero value does none of them.
type StageIO struct {
	Checkpoint pipeline.Checkpoint
	Logf       func(format string, args ...any)
	Progress   Progress
}

// FromIO is the StageIO of a running stage.
func FromIO(io *pipeline.IO) StageIO {
	return StageIO{Checkpoint: io.Checkpoint(), Logf: io.Logf, Progress: ProgressFunc(io)}
}

// Attach makes the loop save checkpoints, log and report progress through
// sio.
func (l *LoopOf[F]) Attach(sio StageIO) {
	l.Checkpoint, l.Logf, l.Progress = sio.Checkpoint, sio.Logf, sio.Progress
}
