package dwe

import (
	"context"
	"errors"
	"math/rand/v2"

	"goldstone/optim"
)

// Trainable is what Trainer trains: *MAP or *Variational. It is
// models.Model plus Resample, which draws the randomness (minibatch, and for
// Variational the noise) that the next LocalLoss calls use.
type Trainable interface {
	NumParams() int
	Blocks() optim.Blocks
	Graph() *optim.Graph
	Init(x []float64, rng *rand.Rand)
	LocalLoss(grad, x []float64) float64
	Resample(rng *rand.Rand, nw, nc int)
	// Problem is what optim.Driver trains: LocalLoss + psi, possibly with
	// part of the local loss moved into the Driver's fused pass (Problem.L2).
	Problem() optim.Problem
}

var (
	_ Trainable = (*MAP)(nil)
	_ Trainable = (*Variational)(nil)
)

// DefaultAdam is the DWE optimizer: Adam with rho_s = 0.1 (1000/(s+1000))^0.7.
func DefaultAdam() *optim.Adam {
	return &optim.Adam{Rate: optim.Schedule{Rho0: 0.1, S0: 1000, Kappa: 0.7}}
}

// Schedule is the DWE training schedule of the randomness a step uses: a
// first phase of MinibatchSteps steps on random minibatches of BatchWords
// words x BatchContexts contexts (likelihood rescaled to be unbiased; the
// prior and entropy are always exact), then full-batch steps. A fresh
// minibatch (and noise, for Variational) is drawn before every step from the
// source NewSource gives. The dwe pipeline's train stage and Trainer both
// run it. It has no total: what step s draws depends on s and the draws
// before it only, so the first s steps of a run do not depend on its budget
// (a longer run of the same trial continues a shorter one's checkpoint).
type Schedule struct {
	MinibatchSteps int // steps of the first phase
	BatchWords     int // first-phase minibatch words (<= 0: full batches throughout)
	BatchContexts  int // first-phase minibatch contexts (<= 0: BatchWords)
}

// NewSource is the random source of a schedule seeded by seed.
func NewSource(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0x64776521) }

// Minibatch reports whether step is in the minibatch phase.
func (s Schedule) Minibatch(step int) bool { return step < s.MinibatchSteps && s.BatchWords > 0 }

// Draw draws the randomness of step from rng into m before the step is
// taken.
func (s Schedule) Draw(m Trainable, rng *rand.Rand, step int) {
	if !s.Minibatch(step) {
		m.Resample(rng, 0, 0)
		return
	}
	bc := s.BatchContexts
	if bc <= 0 {
		bc = s.BatchWords
	}
	m.Resample(rng, s.BatchWords, bc)
}

// Trainer runs the DWE Schedule on top of optim.Driver, drawing from
// NewSource(Seed). Gauge, if set, acts on the means (Model.Blocks) after
// every K1 steps (the paper: Goldstone-GD with K1 = 10, K2 = 10).
type Trainer struct {
	Model  Trainable
	Method optim.Method // nil: DefaultAdam()
	// Method32 is Run32's method (the float32 mode); nil: DefaultAdam32().
	Method32 optim.MethodOf[float32]
	Gauge    optim.Gauge // nil: none
	K1       int
	Pool     *optim.Pool // runs the optimizer's fused pass (use the model's Config.Pool); nil: inline

	Steps                     int // total number of steps
	MinibatchSteps            int // steps of the first phase
	BatchWords, BatchContexts int // first-phase minibatch sizes (see Schedule)
	Seed                      uint64
}

// Iter describes one training step (see optim.Iter); Minibatch reports the
// phase. Loss, Local and Psi are at x before the step's update.
type Iter struct {
	optim.Iter
	Minibatch bool
}

// Run trains x (len Model.NumParams(), initialised by the caller, e.g. with
// Model.Init) in place, calling each after every step (nil ok; it may return
// an error to stop). It stops with ctx.Err() when ctx is done and with an
// error wrapping optim.ErrDiverged on a non-finite loss.
func (tr *Trainer) Run(ctx context.Context, x []float64, each func(it *Iter) error) error {
	if tr.Model == nil {
		return errors.New("dwe trainer: no model")
	}
	checkLen("x", x, tr.Model.NumParams())
	method := tr.Method
	if method == nil {
		method = DefaultAdam()
	}
	d := optim.Driver{Method: method, Gauge: tr.Gauge, K1: tr.K1, Pool: tr.Pool}
	return runSchedule(ctx, tr, &d, tr.Model.Problem(), x, each)
}
