package train

import (
	"errors"
	"fmt"
	"math"

	"goldstone/internal/checkpoint"
	"goldstone/optim"
)

// Best is BestOf on float64 parameters.
type Best = BestOf[float64]

// EarlyStopSettings choose whether a trial keeps its best-validation state
// and when it stops (issue 30): with Enabled, every validation check that
// improves on the best one so far keeps a copy of the parameters, and the
// run ends after Patience checks without improvement.
type EarlyStopSettings struct {
	Enabled  bool `set:"early_stopping" default:"false" doc:"keep the parameters at the best validation metric (the likelihood's own: valid_ll for logistic, valid_rmse for gaussian, valid_deviance for poisson), report the test metrics of that state (and the final state's as final_test_*), and stop after patience validation checks without improvement"`
	Patience int  `set:"patience" default:"10" check:">0" doc:"with early_stopping: the validation checks without improvement after which training stops"`
}

// PruneKeys leaves both settings out of a trial's keys unless early
// stopping is on (trials without it keep their ids and cache keys).
func (s EarlyStopSettings) PruneKeys(m map[string]any) {
	if !s.Enabled {
		delete(m, "early_stopping")
		delete(m, "patience")
	}
}

// ErrStopEarly, returned by a Loop's Extra, ends the run after the step it
// was returned at as a run that ended well (Loop.StoppedEarly is set): the
// summary is that of the iterate reached.
var ErrStopEarly = errors.New("stopped early")

// Best tracks the best-validation state of a run: the parameters at the
// best value of one validation metric so far, its step and value, and the
// checks since. Its state goes with the Loop's checkpoints (Save, Load), so
// that a resumed run keeps the same best state and stops at the same step.
// BestOf keeps the parameters in their own type F (float32 in the float32
// mode: a float32 copy).
type BestOf[F optim.Float] struct {
	Patience    int  // checks without improvement after which Check says stop
	LowerBetter bool // the metric improves downwards (RMSE, deviance)

	X     []F     // the parameters at the best check (nil before the first)
	Step  int     // the iterate index of the best check
	Value float64 // the metric there
	Since int     // checks since the best one
}

// Check records the metric v of the iterate x at step and reports whether
// the run should stop: after Patience checks without a strict improvement.
// A value that is not finite is never an improvement. The first finite
// value is the best so far.
func (b *BestOf[F]) Check(step int, v float64, x []F) (stop bool) {
	better := !math.IsNaN(v) && !math.IsInf(v, 0) &&
		(b.X == nil || (b.LowerBetter && v < b.Value) || (!b.LowerBetter && v > b.Value))
	if better {
		if b.X == nil {
			b.X = make([]F, len(x))
		}
		copy(b.X, x)
		b.Step, b.Value, b.Since = step, v, 0
		return false
	}
	b.Since++
	return b.Since >= b.Patience
}

// Save adds the tracker's state to a checkpoint (sections best.*).
func (b *BestOf[F]) Save(st *checkpoint.State) {
	has := int64(0)
	if b.X != nil {
		has = 1
		saveFloats(st, "best.x", b.X)
	}
	st.Ints("best.ints", has, int64(b.Step), int64(b.Since))
	st.Floats("best.value", []float64{b.Value})
}

// Load restores what Save wrote; n is the length of the parameters.
func (b *BestOf[F]) Load(st *checkpoint.State, n int) error {
	ints, err := st.ReadInts("best.ints", 3)
	if err != nil {
		return err
	}
	v := make([]float64, 1)
	if err := st.ReadFloats("best.value", v); err != nil {
		return err
	}
	b.X = nil
	if ints[0] == 1 {
		b.X = make([]F, n)
		if err := readFloats(st, "best.x", b.X); err != nil {
			return err
		}
	} else if ints[0] != 0 {
		return fmt.Errorf("best.ints: flag %d: %w", ints[0], checkpoint.ErrMismatch)
	}
	b.Step, b.Since, b.Value = int(ints[1]), int(ints[2]), v[0]
	return nil
}

// Hook adds b's state to the loop's checkpoints, after the hooks already
// in h; n is the length of the parameters.
func (b *BestOf[F]) Hook(h *StateHooks, n int) {
	save, load := h.Save, h.Load
	h.Save = func(st *checkpoint.State) {
		if save != nil {
			save(st)
		}
		b.Save(st)
	}
	h.Load = func(st *checkpoint.State) error {
		if load != nil {
			if err := load(st); err != nil {
				return err
			}
		}
		return b.Load(st, n)
	}
}

// Summarize adds to sum best_valid_step (the iterate index of the best
// check; NaN when no check gave a finite value), best_valid_<metric> and
// trained_steps: the steps l took, which are lastCheck (the iterate index
// of the last check) when patience ran out and the divergence step when l
// diverged.
func (b *BestOf[F]) Summarize(sum map[string]float64, metric string, lastCheck int, l *LoopOf[F]) {
	step, v := math.NaN(), math.NaN()
	if b.X != nil {
		step, v = float64(b.Step), b.Value
	}
	sum["best_valid_step"] = step
	sum["best_valid_"+metric] = v
	trained := float64(l.Steps)
	switch {
	case l.StoppedEarly:
		trained = float64(lastCheck)
	case l.Diverged != nil:
		trained = float64(l.Diverged.Step)
	}
	sum["trained_steps"] = trained
}
