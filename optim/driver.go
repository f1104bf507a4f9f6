package optim

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrDiverged is wrapped by the error Driver.Run returns when the loss is not finite.
var ErrDiverged = errors.New("optim: loss diverged")

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
}

// Problem is a model loss split into its local part and the coupling psi.
type Problem struct {
	Local  Objective // local loss l(X;Z) (+ local regularisers) and its gradient, WITHOUT psi
	Blocks Blocks
	Graph  *Graph // coupling; psi = 1/2 Tr(Z^T L Z) is added by the Driver; nil = none
	// L2 is the weight of an isotropic local prior L2/2 ||Z||^2 on the
	// blocks that the Driver adds (to the local loss, and to the gradient in
	// its fused pass) so that Local need not make a pass of its own for it.
	L2 float64
}

// Driver runs a base Method and, every K1 steps, a Gauge round.
type Driver struct {
	Method Method
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
}

// Iter describes one step of Driver.Run.
type Iter struct {
	Step             int
	Loss, Local, Psi float64     // at x before this step's update; Local includes the L2 term
	Gauge            *RoundStats // non-nil on steps after which a gauge round ran
	GaugeSeconds     float64     // cumulative wall time inside gauge rounds
}

// Run takes steps steps on x in place, calling each(it) after every step (and
// after the gauge round that follows it, if any); each may be nil and may
// return an error to stop the run, which Run returns. A non-finite loss
// returns an error wrapping ErrDiverged that names the step (x is left as it
// was before the step when the local loss is not finite; when only psi is,
// the update has been applied).
//
// A step is the local loss, which adds its gradient into the zeroed gradient
// buffer, then one fused pass over x on Pool: each fixed chunk adds the L2
// term and the psi gradient to its entries, applies the Method's update
// (Begin once, then Update per range) and zeroes its part of the buffer for
// the next step, so the dense work of a step reads x, the gradient and the
// optimizer state once.
//
// Run initialises the Method (Init(len(x))) and the Gauge, so every Run starts
// from fresh optimizer state at step Start (0 unless resumed), then calls
// Restore. The gradient buffer is allocated once per Run; the *Iter passed to
// each is reused and must not be retained; its GaugeSeconds counts the gauge
// rounds of this Run only.
func (d *Driver) Run(p Problem, x []float64, steps int, each func(it *Iter) error) error {
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
	gauge := d.Gauge != nil && d.K1 > 0
	if gauge {
		if p.Graph == nil {
			return errors.New("optim: gauge step needs a coupling graph")
		}
		if err := d.Gauge.Init(p.Blocks, p.Graph); err != nil {
			return fmt.Errorf("init gauge: %w", err)
		}
	}
	d.Method.Init(len(x))
	if d.Start < 0 {
		return fmt.Errorf("optim: driver start step %d", d.Start)
	}
	if d.Restore != nil {
		if err := d.Restore(); err != nil {
			return fmt.Errorf("restore step %d: %w", d.Start, err)
		}
	}
	grad := make([]float64, len(x))
	f := newFused(d.Pool, d.Method, p.Blocks, p.Graph, p.L2, len(x))
	var it Iter
	var stats RoundStats
	for s := d.Start; s < steps; s++ {
		local := p.Local(grad, x)
		if math.IsNaN(local) || math.IsInf(local, 0) {
			return fmt.Errorf("step %d: local loss %v: %w", s, local, ErrDiverged)
		}
		psi, reg := f.step(x, grad, s)
		local += reg
		loss := local + psi
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return fmt.Errorf("step %d: loss %v: %w", s, loss, ErrDiverged)
		}
		it.Step, it.Loss, it.Local, it.Psi, it.Gauge = s, loss, local, psi, nil
		if gauge && (s+1)%d.K1 == 0 {
			start := time.Now()
			stats = d.Gauge.Round(x)
			it.GaugeSeconds += time.Since(start).Seconds()
			it.Gauge = &stats
		}
		if each != nil {
			if err := each(&it); err != nil {
				return err
			}
		}
	}
	return nil
}
