package models

import (
	"math/rand/v2"

	"goldstone/optim"
)

// Model is a model with per-time-step embedding blocks and a coupling graph
// over time steps.
type Model interface {
	// NumParams is the length of the flat parameter vector.
	NumParams() int
	// Blocks describes where the Z_t live in the parameter vector.
	Blocks() optim.Blocks
	// Graph is the coupling over time steps (psi = 1/2 Tr(Z^T L Z)); nil = none.
	Graph() *optim.Graph
	// Init writes initial parameters into x (len NumParams) drawing from rng.
	Init(x []float64, rng *rand.Rand)
	// LocalLoss returns l plus local regularisers at x and overwrites grad
	// with its gradient.
	LocalLoss(grad, x []float64) float64
}

// chainOrGraph returns g if non-nil, else a chain over t steps with weight
// lambda, or nil when lambda is zero.
func chainOrGraph(g *optim.Graph, t int, lambda float64) *optim.Graph {
	if g != nil {
		return g
	}
	if lambda == 0 {
		return nil
	}
	return optim.Chain(t, lambda)
}

// initNormal fills the blocks of x with independent N(0, std^2) entries;
// std 0 means DefaultInitStd.
func initNormal[F optim.Float](x []F, rng *rand.Rand, std float64) {
	if std == 0 {
		std = DefaultInitStd
	}
	for i := range x {
		x[i] = F(std * optim.NormFloat64(rng))
	}
}

// ProblemOf returns the optimisation problem of m: its local loss, blocks and
// coupling graph (psi is added by the optim.Driver). A model with a method
// Problem() optim.Problem (the DWE models) gives its own, which may move a
// local L2 prior into the Driver's fused pass (optim.Problem.L2).
func ProblemOf(m Model) optim.Problem {
	if p, ok := m.(interface{ Problem() optim.Problem }); ok {
		return p.Problem()
	}
	return optim.Problem{Local: m.LocalLoss, Blocks: m.Blocks(), Graph: m.Graph()}
}
