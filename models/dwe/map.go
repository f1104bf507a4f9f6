package dwe

import (
	"fmt"
	"math/rand/v2"

	"goldstone/optim"
)

// Config holds the model settings shared by MAP and Variational. A zero
// field means its default.
type Config struct {
	Dim       int         // embedding dimension d (required)
	Sigma0Sq  float64     // variance of the local N(0, sigma0^2) prior; default 1
	Diffusion float64     // D: sigma_t^2 = D (tau_{t+1} - tau_t); default 1e-3 (per unit of Times, e.g. per year)
	InitStd   float64     // std of the initial means; default 0.1
	InitWidth float64     // Variational only: initial posterior std 1/nu (omega = 0); default 0.1
	Tile      int         // tile side of the dense likelihood; default DefaultTile
	Pool      *optim.Pool // runs the per-step and per-column loops; nil runs them inline
}

func (c Config) withDefaults() (Config, error) {
	if c.Dim <= 0 {
		return c, fmt.Errorf("dwe config: Dim=%d, want > 0", c.Dim)
	}
	if c.Sigma0Sq == 0 {
		c.Sigma0Sq = 1
	}
	if c.Diffusion == 0 {
		c.Diffusion = 1e-3
	}
	if c.InitStd == 0 {
		c.InitStd = 0.1
	}
	if c.InitWidth == 0 {
		c.InitWidth = 0.1
	}
	if !(c.Sigma0Sq > 0) || !(c.Diffusion > 0) || c.InitStd < 0 || !(c.InitWidth > 0) {
		return c, fmt.Errorf("dwe config: Sigma0Sq=%v Diffusion=%v InitStd=%v InitWidth=%v",
			c.Sigma0Sq, c.Diffusion, c.InitStd, c.InitWidth)
	}
	return c, nil
}

// ChainGraph returns the random-walk prior as a coupling graph: a chain over
// the steps whose edge t -- t+1 has weight 1/sigma_t^2 = 1/(D (tau_{t+1}-tau_t)).
// It returns nil for a single step.
func ChainGraph(times []float64, diffusion float64) *optim.Graph {
	if len(times) < 2 {
		return nil
	}
	w := make([]float64, len(times)-1)
	for t := range w {
		w[t] = 1 / (diffusion * (times[t+1] - times[t]))
	}
	return optim.ChainWeights(w)
}

// MAP is the point-estimate (MAP) dynamic skip-gram model. Parameters are
// the means only, x = (Z_0, ..., Z_{T-1}) with Z_t = (U_t, V_t): column i < V
// of Z_t is the word vector u_{t,i}, column V+j the context vector v_{t,j}.
//
// LocalLoss = -sum_t loglik_t + 1/(2 sigma0^2) ||Z||^2; the random-walk
// term psi (Graph) is added by the optimizer driver. It satisfies the
// models.Model interface.
type MAP struct {
	Counts *Counts
	cfg    Config
	graph  *optim.Graph
	lik    *likelihood
}

// NewMAP validates counts and cfg and returns the model (full batch).
func NewMAP(c *Counts, cfg Config) (*MAP, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &MAP{Counts: c, cfg: cfg, graph: ChainGraph(c.Times, cfg.Diffusion),
		lik: newLikelihood(c, cfg.Dim, cfg.Tile, cfg.Pool)}, nil
}

// Config returns the settings with defaults filled in.
func (m *MAP) Config() Config { return m.cfg }

// NumParams is T * 2V * d.
func (m *MAP) NumParams() int { return m.Blocks().Len() }

// Blocks is {Offset 0, T, N: 2V, D: d}.
func (m *MAP) Blocks() optim.Blocks {
	return optim.Blocks{T: m.Counts.T(), N: 2 * m.Counts.V, D: m.cfg.Dim}
}

// Graph is the random-walk chain (ChainGraph); nil for a single step.
func (m *MAP) Graph() *optim.Graph { return m.graph }

// Init draws every entry of x from N(0, InitStd^2), independently per step.
func (m *MAP) Init(x []float64, rng *rand.Rand) {
	checkLen("x", x, m.NumParams())
	for i := range x {
		x[i] = m.cfg.InitStd * optim.NormFloat64(rng)
	}
}

// SetBatch restricts the likelihood to the given words x contexts (the same
// for every step), rescaled by V^2/(|words| |contexts|) so the loss and its
// gradient are unbiased estimates of the full ones. nil, nil: full batch.
func (m *MAP) SetBatch(words, contexts []int) { m.lik.setBatch(words, contexts) }

// Resample draws a uniform minibatch of nw words and nc contexts (<= 0 or
// >= V: all) for the next LocalLoss calls.
func (m *MAP) Resample(rng *rand.Rand, nw, nc int) { m.lik.sampleBatch(rng, nw, nc) }

// LocalLoss returns -loglik + 1/(2 sigma0^2)||x||^2 and overwrites grad.
func (m *MAP) LocalLoss(grad, x []float64) float64 {
	n := m.NumParams()
	checkLen("x", x, n)
	checkLen("grad", grad, n)
	loss := m.lik.eval(grad, x)
	c := 1 / m.cfg.Sigma0Sq
	var r float64
	for i, v := range x {
		r += float64(v * v)
		grad[i] += float64(c * v)
	}
	return loss + float64(0.5*c*r)
}

// Problem is the training problem of m for optim.Driver: the likelihood as
// the local loss, the local prior 1/(2 sigma0^2) ||Z||^2 as Problem.L2 (the
// Driver adds it in its fused pass instead of a pass of its own) and the
// random-walk chain as the coupling. Its losses equal LocalLoss + psi.
func (m *MAP) Problem() optim.Problem {
	return optim.Problem{Local: m.lik.eval, Blocks: m.Blocks(), Graph: m.graph, L2: 1 / m.cfg.Sigma0Sq}
}

// NegLogLik returns the (minibatch-estimated) negative log-likelihood alone.
func (m *MAP) NegLogLik(x []float64) float64 {
	checkLen("x", x, m.NumParams())
	return m.lik.eval(nil, x)
}

func checkLen(name string, x []float64, n int) {
	if len(x) != n {
		panic(fmt.Sprintf("dwe: len(%s)=%d, want %d", name, len(x), n))
	}
}
