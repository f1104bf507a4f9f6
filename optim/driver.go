package optim

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrDiverged is wrapped by the error Driver.Run returns when the loss is
// not finite or grew past the run's bound (a *DivergedError).
var ErrDiverged = errors.New("optim: loss diverged")

// DefaultDivergeFactor is the bound factor of a Driver whose DivergeFactor
// is 0: a step whose |loss|, |local loss| or psi exceeds 1e6 times
// max(1, |loss at step 0|) has diverged. A descent method's loss stays
// below its start up to the spikes of an early large step, orders of
// magnitude inside the bound; an update that blows up passes it within a
// few steps of leaving that range, long before it overflows to Inf or NaN.
const DefaultDivergeFactor = 1e6

// The quantities a step can diverge in (DivergedError.Quantity).
const (
	QuantityLoss  = "loss"       // the total loss, local loss + psi
	QuantityLocal = "local loss" // the local loss (with the L2 term the driver adds, once the step is taken)
	QuantityPsi   = "psi"        // the coupling
)

// DivergedError is the error Driver.Run returns when a step's local loss,
// psi or loss is not finite or lies past the run's bound. It wraps
// ErrDiverged. Step is the step whose values diverged: they were evaluated
// at the iterate x_Step, before its update.
type DivergedError struct {
	Step     int
	Quantity string  // QuantityLocal, QuantityPsi or QuantityLoss
	Value    float64 // its value: NaN, an infinity, or a finite number past Bound
	Bound    float64 // the bound in force, DivergeFactor x DivergeScale (NaN before the scale was known)
}

// Finite reports whether the value was finite (past the bound) rather than
// NaN or an infinity.
func (e *DivergedError) Finite() bool { return !math.IsNaN(e.Value) && !math.IsInf(e.Value, 0) }

func (e *DivergedError) Error() string {
	if e.Finite() {
		return fmt.Sprintf("step %d: %s %.3g past its bound %.3g: %v", e.Step, e.Quantity, e.Value, e.Bound, ErrDiverged)
	}
	return fmt.Sprintf("step %d: %s %v: %v", e.Step, e.Quantity, e.Value, ErrDiverged)
}

// Unwrap returns ErrDiverged.
func (e *DivergedError) Unwrap() error { return ErrDiverged }

// Gauge is a symmetry step: it changes x without changing the local loss and
// lowers the coupling psi.
type Gauge interface {
	// Init prepares the gauge step for the blocks b coupled by g.
	Init(b Blocks, g *Graph) error
	// Round performs one gauge round on x in place.
	Round(x []float64) RoundStats
}

// RoundStats reports one gauge round.
type RoundStats struct {
	PsiBefore, PsiAfter float64 // psi at x before and after the round
	Rejected            bool    // the round was undone because it would have raised psi
	Flips               int     // time steps reflected to remove domain walls (Goldstone on trees)

	// The round's continuous step (the rotations after any wall flips).
	// Its realised change of psi is PsiAfter - PsiStep.
	PsiStep    float64 // psi after the wall flips, before the continuous step (PsiBefore without flips)
	Predicted  float64 // predicted change of psi by the applied step (rejected: by the last step tried); NaN when not predicted
	Rate       float64 // Goldstone: the gauge learning rate rho' of the natural-gradient steps; NaN for steps without one
	Scale      float64 // factor of the applied step along the gauge direction: 1 the full step, 0 none (rejected, or nothing to do)
	Backtracks int     // line search: times the step was halved
	// Concentration (Goldstone with Concentration set): max over time steps
	// of the largest eigenvalue of Z_t Z_t^T against sum_t ||Z_t||^2/(T d),
	// measured before the round's continuous step; NaN when not measured.
	Concentration float64
}

// ProblemOf is a model loss on parameters of type F split into its local
// part and the coupling psi.
type ProblemOf[F Float] struct {
	Local  ObjectiveOf[F] // local loss l(X;Z) (+ local regularisers) and its gradient, WITHOUT psi
	Blocks Blocks
	Graph  *Graph // coupling; psi = 1/2 Tr(Z^T L Z) is added by the Driver; nil = none
	// L2 is the weight of an isotropic local prior L2/2 ||Z||^2 on the
	// blocks that the Driver adds (to the local loss, and to the gradient in
	// its fused pass) so that Local need not make a pass of its own for it.
	L2 float64
}

// Problem is ProblemOf on float64 parameters.
type Problem = ProblemOf[float64]

// DriverOf runs a base Method on parameters of type F and, every K1 steps,
// a Gauge round (on float32 parameters the Gauge must be a Gauge32).
type DriverOf[F Float] struct {
	Method MethodOf[F]
	Gauge  Gauge // nil: no gauge rounds
	K1     int   // gauge round after every K1 steps; <= 0: none
	Pool   *Pool // runs the fused pass of every step; nil runs it inline

	// Start is the first step Run takes: a run resumed from a checkpoint
	// takes steps Start..steps-1 (0: all of them). The learning-rate
	// schedule and the gauge rounds follow the step number, so they are
	// those of an uninterrupted run.
	Start int
	// Restore, when set, is called once after Run has initialised the
	// Method and the Gauge and before the first step, to put a
	// checkpoint's state back: the parameters x, and the slices of the
	// Method's and Gauge's State (see Stateful). An error stops Run.
	Restore func() error

	// DivergeFactor bounds the run: a step whose |local loss|, psi or
	// |loss| exceeds DivergeFactor x DivergeScale stops Run with a
	// *DivergedError, as a value that is not finite does (a finite
	// blow-up to 1e200 is a divergence too). 0 means
	// DefaultDivergeFactor; +Inf leaves finiteness as the only bound.
	DivergeFactor float64
	// DivergeScale is what the bound is relative to. 0 (the usual case)
	// takes max(1, |loss|) at the first step Run takes. A run resumed at
	// Start > 0 sets the scale of the run it continues (Iter.DivergeScale
	// of its steps; Restore may set it), so that it stops where the
	// uninterrupted run stops.
	DivergeScale float64
	// Before is what the steps before Start did (a resumed run sets the
	// Result of the run it continues; Restore may set it): Run's Result
	// continues it. Its Stop is ignored.
	Before Result
}

// Driver is DriverOf on float64 parameters.
type Driver = DriverOf[float64]

// Iter describes one step of Driver.Run.
type Iter struct {
	Step             int
	Loss, Local, Psi float64     // at x before this step's update; Local includes the L2 term
	Gauge            *RoundStats // non-nil on steps after which a gauge round ran
	DivergeScale     float64     // the scale of the run's bound (see Driver.DivergeScale)
	// Run is what the run did up to and including this step (and its
	// gauge round): the Result Run returns if it stops after this step.
	Run *Result
}

// StopReason says why Driver.Run stopped.
type StopReason uint8

// Why a run stopped (Result.Stop).
const (
	StopSetup    StopReason = iota // before the first step: a bad problem or driver, the gauge's Init, Restore
	StopDone                       // every step was taken
	StopDiverged                   // a step diverged (the error is a *DivergedError)
	StopEach                       // the callback returned an error (a cancelled context, say)
)

var stopNames = [...]string{StopSetup: "setup", StopDone: "done", StopDiverged: "diverged", StopEach: "stopped"}

func (r StopReason) String() string {
	if int(r) < len(stopNames) {
		return stopNames[r]
	}
	return fmt.Sprintf("StopReason(%d)", uint8(r))
}

// Result says what Driver.Run did: the steps it took, what its gauge rounds
// did, and why it stopped. A resumed run's Result continues Driver.Before,
// so that it is the whole run's.
type Result struct {
	// Steps counts the steps taken and reported (each called, the last
	// one perhaps returning the error that stopped the run); a step that
	// diverged is not counted. A run that was not resumed took steps
	// 0..Steps-1.
	Steps int
	// Rounds counts the gauge rounds, Rejected those whose step the
	// guard undid (accepted: Rounds - Rejected), Lowered those after
	// which psi was lower than before.
	Rounds, Rejected, Lowered int
	Flips                     int     // time steps reflected by the rounds (RoundStats.Flips)
	Backtracks                int     // line-search halvings (RoundStats.Backtracks)
	GaugeSeconds              float64 // wall time inside the gauge rounds
	Stop                      StopReason
}

// Accepted is the number of rounds whose step was applied.
func (r *Result) Accepted() int { return r.Rounds - r.Rejected }

// Add counts one gauge round that took seconds (Run counts its rounds with it).
func (r *Result) Add(st *RoundStats, seconds float64) {
	r.Rounds++
	if st.Rejected {
		r.Rejected++
	}
	if st.PsiAfter < st.PsiBefore {
		r.Lowered++
	}
	r.Flips += st.Flips
	r.Backtracks += st.Backtracks
	r.GaugeSeconds += seconds
}

// RoundAfter is the rule of the gauge rounds: with a round every k1 steps
// (k1 > 0), one follows step s when s+1 is a multiple of k1, so the rounds
// produce the iterates k1, 2k1, ... . k1 <= 0 means no rounds.
func RoundAfter(k1, s int) bool {
	return k1 > 0 && s >= 0 && (s+1)%k1 == 0
}

// NearRound reports whether iterate k lies within `within` steps of an
// iterate that a gauge round produces (RoundAfter) in a run of steps steps.
func NearRound(k1, steps, within, k int) bool {
	if within <= 0 || k1 <= 0 {
		return false
	}
	r := max(k1, min((k+k1/2)/k1*k1, steps/k1*k1)) // the nearest round iterate
	for _, c := range []int{r - k1, r, r + k1} {
		if c <= steps && RoundAfter(k1, c-1) && max(k-c, c-k) <= within {
			return true
		}
	}
	return false
}

// Run takes steps steps on x in place, calling each(it) after every step (and
// after the gauge round that follows it, if any); each may be nil and may
// return an error to stop the run, which Run returns. A step whose local
// loss, psi or loss is not finite or past the bound (DivergeFactor) returns
// a *DivergedError (wrapping ErrDiverged) that names the step, the
// quantity, its value and the bound, and each is not called for it. A local
// loss that is not finite stops the step before its update (x is left as
// it was); the bound, and psi and the loss, are checked once the update has
// been applied (psi first, then the local loss with its L2 term, then
// their sum).
//
// A step is the local loss, which adds its gradient into the zeroed gradient
// buffer, then one fused pass over x on Pool: each fixed chunk adds the L2
// term and the psi gradient to its entries, applies the Method's update
// (Begin once, then Update per range) and zeroes its part of the buffer for
// the next step, so the dense work of a step reads x, the gradient and the
// optimizer state once. A gauge round follows step s when RoundAfter(K1, s).
//
// Run initialises the Method (Init(len(x))) and the Gauge, so every Run starts
// from fresh optimizer state at step Start (0 unless resumed), then calls
// Restore. The gradient buffer is allocated once per Run; the *Iter passed to
// each, and its Run, are reused and must not be retained.
//
// The Result says what the run did and why it stopped, with or without an
// error: it continues Before (see Driver.Before).
func (d *DriverOf[F]) Run(p ProblemOf[F], x []F, steps int, each func(it *Iter) error) (Result, error) {
	res := d.Before
	res.Stop = StopSetup
	if err := d.setup(p, x); err != nil {
		return res, err
	}
	factor := d.DivergeFactor
	if factor == 0 {
		factor = DefaultDivergeFactor
	}
	if d.Restore != nil {
		if err := d.Restore(); err != nil {
			return res, fmt.Errorf("restore step %d: %w", d.Start, err)
		}
		res = d.Before // Restore may have set it
		res.Stop = StopSetup
	}
	scale := d.DivergeScale // after Restore, which may set it
	bound := math.NaN()
	if scale > 0 {
		bound = float64(factor * scale)
	}
	grad := make([]F, len(x))
	f := newFused(d.Pool, d.Method, p.Blocks, p.Graph, p.L2, len(x))
	gauge := d.Gauge != nil && d.K1 > 0
	it := Iter{Run: &res}
	var stats RoundStats
	for s := d.Start; s < steps; s++ {
		local := p.Local(grad, x)
		if math.IsNaN(local) || math.IsInf(local, 0) {
			// Before the update: a gradient of it would spoil x.
			res.Stop = StopDiverged
			return res, &DivergedError{Step: s, Quantity: QuantityLocal, Value: local, Bound: bound}
		}
		psi, reg := f.step(x, grad, s)
		local += reg
		loss := local + psi
		if !(scale > 0) && !math.IsNaN(loss) && !math.IsInf(loss, 0) {
			scale = max(1, math.Abs(loss))
			bound = float64(factor * scale)
		}
		if err := diverged(s, local, psi, loss, bound); err != nil {
			res.Stop = StopDiverged
			return res, err
		}
		it.Step, it.Loss, it.Local, it.Psi, it.Gauge, it.DivergeScale = s, loss, local, psi, nil, scale
		if gauge && RoundAfter(d.K1, s) {
			start := time.Now()
			if x64, ok := as64(x); ok {
				stats = d.Gauge.Round(x64)
			} else {
				x32, _ := as32(x)
				stats = d.Gauge.(Gauge32).Round32(x32) // setup checked it
			}
			res.Add(&stats, time.Since(start).Seconds())
			it.Gauge = &stats
		}
		res.Steps++
		if each != nil {
			if err := each(&it); err != nil {
				res.Stop = StopEach
				return res, err
			}
		}
	}
	res.Stop = StopDone
	return res, nil
}

// setup checks the problem and the driver and initialises the Gauge and
// the Method.
func (d *DriverOf[F]) setup(p ProblemOf[F], x []F) error {
	if d.Method == nil {
		return errors.New("optim: driver has no method")
	}
	if p.Local == nil {
		return errors.New("optim: problem has no local objective")
	}
	if p.Graph != nil {
		checkGraph(p.Blocks, p.Graph)
	}
	if p.Blocks.Offset < 0 || p.Blocks.Offset+p.Blocks.Len() > len(x) {
		panic(fmt.Sprintf("optim: blocks %+v do not fit in len(x)=%d", p.Blocks, len(x)))
	}
	if d.Gauge != nil && d.K1 > 0 {
		if p.Graph == nil {
			return errors.New("optim: gauge step needs a coupling graph")
		}
		if _, ok := as64(x); !ok {
			if _, ok := d.Gauge.(Gauge32); !ok {
				return fmt.Errorf("optim: gauge step %T does not run on float32 parameters (not a Gauge32)", d.Gauge)
			}
		}
		if err := d.Gauge.Init(p.Blocks, p.Graph); err != nil {
			return fmt.Errorf("init gauge: %w", err)
		}
	}
	d.Method.Init(len(x))
	if d.Start < 0 {
		return fmt.Errorf("optim: driver start step %d", d.Start)
	}
	if f := d.DivergeFactor; f != 0 && !(f > 0) {
		return fmt.Errorf("optim: driver diverge factor %v", f)
	}
	return nil
}

// diverged returns the *DivergedError of step s when psi, the local loss
// or the loss is past the bound (nil: none). psi comes first: when a gauge
// round blew up the norms, the local loss is past the bound too, but psi
// says what happened.
func diverged(s int, local, psi, loss, bound float64) error {
	switch {
	case past(psi, bound):
		return &DivergedError{Step: s, Quantity: QuantityPsi, Value: psi, Bound: bound}
	case past(local, bound):
		return &DivergedError{Step: s, Quantity: QuantityLocal, Value: local, Bound: bound}
	case past(loss, bound):
		return &DivergedError{Step: s, Quantity: QuantityLoss, Value: loss, Bound: bound}
	}
	return nil
}

// past reports whether v is not finite or |v| exceeds bound (a NaN bound,
// before the scale is known, bounds nothing).
func past(v, bound float64) bool {
	return math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > bound
}
