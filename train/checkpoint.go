package train

import (
	"context"
	"errors"
	"fmt"
	"time"

	"goldstone/internal/checkpoint"
	"goldstone/optim"
)

// A Loop's checkpoint holds, after step s-1 was taken and recorded (its
// series points, its gauge round) and before AtStep(s) draws anything for
// step s:
//
//	x                    the parameters
//	method.<i>, gauge.<i> the optimizer's and the symmetry step's state (optim.Stateful)
//	series.metric/step/value  every series point recorded so far
//	loop.floats          gauge seconds, last loss, last psi, seconds trained, the scale of the divergence bound
//	loop.counts          gauge rounds, rejected rounds, flipped time steps, line-search halvings, rounds that lowered psi
//	whatever StateHooks.Save adds (the stage's random source, snapshots)
//
//	loop.drawn           1 when AtStep(s) was called before the save, else 0
//
// Its step is s. The one exception is a checkpoint of step Steps, written
// when a run is stopped after its last step and its AtStep(Steps): it holds
// the state after that call (loop.drawn = 1), which a resumed run therefore
// does not repeat. A Loop that finds one (of its node's key: same code, same
// settings, same inputs; for a Resumable stage the same settings but the
// steps) restores all of it, calls AtStep(s) unless drawn and continues
// with step s: the rest of the run is the uninterrupted run's, bit for bit.
// With Checkpoint.Keep the loop saves one at step Steps before
// AtStep(Steps), which a longer run of the same trial continues (pruning:
// nothing the loop records depends on Steps, so the longer run's values
// are those of a run of its length from the start).
// Anything a new feature keeps across steps must be added here; the tests
// (TestLoopResume) compare every value of resumed runs.

// Drawn reports whether the checkpoint st was written after AtStep(st.Step)
// (loop.drawn above), which the resumed run then does not call. A stage
// whose AtStep draws into state its StateHooks do not save (DWE's
// minibatch and noise, kept in the model) saves its random source as it
// was before that draw and draws again in Load when Drawn: the resumed run,
// of the same budget or a longer one, then takes step st.Step on the same
// draw as the uninterrupted run.
func Drawn(st *checkpoint.State) (bool, error) {
	d, err := st.ReadInts("loop.drawn", 1)
	if err != nil {
		return false, err
	}
	return d[0] == 1, nil
}

// StateHooks save and restore a stage's own state with the Loop's
// checkpoints. Save adds sections to st (names must not clash with the
// Loop's); Load reads them back and may fail on a checkpoint that does not
// match (checkpoint.ErrMismatch).
type StateHooks struct {
	Save func(st *checkpoint.State)
	Load func(st *checkpoint.State) error
}

// loopState is what Loop.Run keeps across steps beyond x, the optimizer and
// the series.
type loopState struct {
	gaugeSeconds float64 // in the gauge rounds, less the loop's records inside them
	gapSeconds   float64 // time in gauge-gap records since the start or resume
	lastLoss     float64
	lastPsi      float64
	divergeScale float64      // the scale of the driver's bound (optim.Iter.DivergeScale)
	elapsed      float64      // seconds trained before a resume
	run          optim.Result // the driver's result up to the last step (Iter.Run)
	savedAt      int          // step of the last checkpoint written or read
	savedTime    time.Time
}

// checkpointer saves and restores a Loop's state.
type checkpointer[F optim.Float] struct {
	l     *LoopOf[F]
	d     *optim.DriverOf[F]
	x     []F
	ls    *loopState
	drawn bool // the checkpoint restored was saved after its AtStep
}

func (l *LoopOf[F]) checkpointer(d *optim.DriverOf[F], x []F, ls *loopState) *checkpointer[F] {
	ls.savedTime = time.Now()
	return &checkpointer[F]{l: l, d: d, x: x, ls: ls}
}

func (c *checkpointer[F]) on() bool {
	return c.l.Checkpoint.Path != "" && !c.l.Checkpoint.Policy.Off
}

func (c *checkpointer[F]) logf(format string, args ...any) {
	if c.l.Logf != nil {
		c.l.Logf(format, args...)
	}
}

// resume finds the newest usable checkpoint and, when there is one, sets
// the driver to continue from it (the state is restored by Driver.Restore,
// after the optimizer's Init).
func (c *checkpointer[F]) resume(d *optim.DriverOf[F]) (bool, error) {
	if !c.on() {
		return false, nil
	}
	st, skipped, err := c.l.Checkpoint.LoadAtMost(c.l.Steps)
	if err != nil {
		return false, err
	}
	for _, s := range skipped {
		c.logf("checkpoint %s not used: %s", s.Path, s.Reason)
	}
	if st == nil {
		return false, nil
	}
	if st.Step < 0 || st.Step > c.l.Steps {
		return false, fmt.Errorf("checkpoint %s: step %d of a run of %d steps: %w", st.Path(), st.Step, c.l.Steps, checkpoint.ErrMismatch)
	}
	d.Start = st.Step
	d.Restore = func() error {
		t0 := time.Now()
		if err := c.restore(st); err != nil {
			return fmt.Errorf("checkpoint %s: %w (delete it to start the trial afresh)", st.Path(), err)
		}
		c.logf("resumed from the checkpoint of step %d of %d (written %s; read in %.3fs)", st.Step, c.l.Steps,
			st.Created().Local().Format(time.DateTime), time.Since(t0).Seconds())
		// A checkpoint written after AtStep (when a run is stopped
		// after its last step): nothing to draw.
		if c.l.AtStep != nil && !c.drawn {
			c.l.AtStep(st.Step, c.x)
		}
		return nil
	}
	return true, nil
}

// states lists the optimizer's and the symmetry step's state slices with
// their section names.
// The method's state has the parameters' type F, the gauge's (its fields,
// d x d work) is float64 in both modes.
func (c *checkpointer[F]) states() (mnames []string, mvals [][]F, gnames []string, gvals [][]float64) {
	if s, ok := c.d.Method.(interface{ State() [][]F }); ok {
		for i, v := range s.State() {
			mnames, mvals = append(mnames, fmt.Sprintf("method.%d", i)), append(mvals, v)
		}
	}
	for i, v := range optim.StateOf(c.d.Gauge) {
		gnames, gvals = append(gnames, fmt.Sprintf("gauge.%d", i)), append(gvals, v)
	}
	return mnames, mvals, gnames, gvals
}

// dtype names the element type F in checkpoints and errors.
func dtype[F optim.Float]() string {
	if is32[F]() {
		return "float32"
	}
	return "float64"
}

// kindOf is the checkpoint section kind of a []F.
func kindOf[F optim.Float]() string {
	if is32[F]() {
		return "f32"
	}
	return "f64"
}

// saveFloats adds v to st as a float64 or a float32 section.
func saveFloats[F optim.Float](st *checkpoint.State, name string, v []F) {
	switch v := any(v).(type) {
	case []float32:
		st.Float32s(name, v)
	case []float64:
		st.Floats(name, v)
	}
}

// readFloats reads the section written by saveFloats into dst.
func readFloats[F optim.Float](st *checkpoint.State, name string, dst []F) error {
	switch dst := any(dst).(type) {
	case []float32:
		return st.ReadFloat32s(name, dst)
	case []float64:
		return st.ReadFloats(name, dst)
	}
	panic("unreachable")
}

func (c *checkpointer[F]) restore(st *checkpoint.State) error {
	ls, l := c.ls, c.l
	if k := st.Kind("x"); k != "" && k != kindOf[F]() {
		other := map[string]string{"f32": "float32", "f64": "float64"}[k]
		return fmt.Errorf("its parameters are %s (dtype = %q), this trial's %s: %w", other, other, dtype[F](), checkpoint.ErrMismatch)
	}
	if err := readFloats(st, "x", c.x); err != nil {
		return err
	}
	mnames, mvals, gnames, gvals := c.states()
	for i, n := range mnames {
		if err := readFloats(st, n, mvals[i]); err != nil {
			return err
		}
	}
	for i, n := range gnames {
		if err := st.ReadFloats(n, gvals[i]); err != nil {
			return err
		}
	}
	metric, err := st.ReadStrings("series.metric")
	if err != nil {
		return err
	}
	steps, err := st.ReadInts("series.step", len(metric))
	if err != nil {
		return err
	}
	values := make([]float64, len(metric))
	if err := st.ReadFloats("series.value", values); err != nil {
		return err
	}
	l.Series.Metric, l.Series.Step, l.Series.Value = metric, steps, values
	f := make([]float64, 5)
	if err := st.ReadFloats("loop.floats", f); err != nil {
		return err
	}
	ls.gaugeSeconds, ls.lastLoss, ls.lastPsi, ls.elapsed, ls.divergeScale = f[0], f[1], f[2], f[3], f[4]
	c.d.DivergeScale = ls.divergeScale // the bound of the uninterrupted run
	n, err := st.ReadInts("loop.counts", 5)
	if err != nil {
		return err
	}
	// The driver's result continues the uninterrupted run's.
	ls.run = optim.Result{Steps: st.Step, Rounds: int(n[0]), Rejected: int(n[1]), Flips: int(n[2]), Backtracks: int(n[3]),
		Lowered: int(n[4]), GaugeSeconds: ls.gaugeSeconds}
	c.d.Before = ls.run
	if c.drawn, err = Drawn(st); err != nil {
		return err
	}
	if l.State.Load != nil {
		if err := l.State.Load(st); err != nil {
			return err
		}
	}
	ls.savedAt, ls.savedTime = st.Step, time.Now()
	return nil
}

// after is called once step-1 is recorded (drawn: and AtStep(step) was
// called): it saves a checkpoint when the policy says one is due, at the
// end of the budget when the checkpoints are kept for a longer run, and
// when ctx is cancelled (then it returns ctx's error, to stop the run).
func (c *checkpointer[F]) after(ctx context.Context, step int, trained float64, drawn bool) error {
	cancelled := ctx.Err() != nil
	if !c.on() {
		return ctx.Err()
	}
	due := step < c.l.Steps && c.l.Checkpoint.Policy.Due(step-c.ls.savedAt, time.Since(c.ls.savedTime)) ||
		step == c.l.Steps && c.l.Checkpoint.Keep && !drawn
	if (due || cancelled) && step > c.ls.savedAt {
		if err := c.save(step, trained, drawn); err != nil {
			if cancelled {
				return errors.Join(ctx.Err(), err)
			}
			return err
		}
	}
	return ctx.Err()
}

func (c *checkpointer[F]) save(step int, trained float64, drawn bool) error {
	t0 := time.Now()
	ls, l := c.ls, c.l
	st := checkpoint.NewState(step)
	saveFloats(st, "x", c.x)
	mnames, mvals, gnames, gvals := c.states()
	for i, n := range mnames {
		saveFloats(st, n, mvals[i])
	}
	for i, n := range gnames {
		st.Floats(n, gvals[i])
	}
	st.Strings("series.metric", l.Series.Metric)
	st.Ints("series.step", l.Series.Step...)
	st.Floats("series.value", l.Series.Value)
	st.Floats("loop.floats", []float64{ls.gaugeSeconds, ls.lastLoss, ls.lastPsi, trained, ls.divergeScale})
	r := &ls.run
	st.Ints("loop.counts", int64(r.Rounds), int64(r.Rejected), int64(r.Flips), int64(r.Backtracks), int64(r.Lowered))
	st.Ints("loop.drawn", map[bool]int64{false: 0, true: 1}[drawn])
	if l.State.Save != nil {
		l.State.Save(st)
	}
	size, err := l.Checkpoint.Save(st)
	if err != nil {
		return fmt.Errorf("checkpoint at step %d: %w", step, err)
	}
	ls.savedAt, ls.savedTime = step, time.Now()
	c.logf("checkpoint at step %d of %d: %d bytes in %.3fs", step, l.Steps, size, time.Since(t0).Seconds())
	return nil
}
