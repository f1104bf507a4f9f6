package dwe

import (
	"math/rand/v2"

	"goldstone/optim"
)

// colChunk is the number of embedding columns per parallel chunk of the
// variational bookkeeping (sample, solves, prior expectations).
const colChunk = 64

// Variational is the dynamic skip-gram smoothing model fitted by black-box
// variational inference (Bamler & Mandt 2017). For every column c (word or
// context vector) and dimension k the posterior over the T steps is
// q = N(mu, (B^T B)^{-1}) with B upper bidiagonal: B_tt = nu_t > 0,
// B_{t,t+1} = omega_t.
//
// Parameter layout (S = 2V d, entry (t, c, k) at t S + c d + k):
//
//	x[0 : T S]          means mu, laid out as Blocks (Offset 0, N = 2V)
//	x[T S : 2 T S]      rho = log nu
//	x[2 T S : (3T-1) S] omega (T-1 entries per (c, k))
//
// LocalLoss is the negative ELBO without the mean part of the random-walk
// prior, psi(mu) = 1/2 sum_t w_t ||mu_t - mu_{t+1}||^2, which the driver adds
// from Graph:
//
//	-E_q[loglik] (one reparameterised sample x = mu + B^{-1} eps)
//	+ 1/(2 sigma0^2) (||mu||^2 + sum Sigma_tt)
//	+ 1/2 sum_t w_t sum_{c,k} (Sigma_tt + Sigma_{t+1,t+1} - 2 Sigma_{t,t+1})
//	- entropy (= sum rho + const)
//
// The prior expectation is analytic: only the tridiagonal of
// Sigma = (B^T B)^{-1} is needed and follows from an O(T) recursion. The
// noise eps (and the minibatch) are fixed between calls of Resample or
// SetNoise, so LocalLoss is a deterministic function of x.
type Variational struct {
	Counts *Counts
	cfg    Config
	graph  *optim.Graph
	w      []float64 // chain weights 1/sigma_t^2, len T-1
	lik    *likelihood

	t, s, vocab int // T, S = 2 V d, V
	cols        []int
	allCols     []int

	eps, y, smp, gs []float64 // T S each
	sv, cv          []float64 // Sigma_tt (T S), Sigma_{t,t+1} ((T-1) S)
	carry           []float64 // S
	parts           []float64
	x, grad         []float64
	fnSample        func(c, lo, hi int)
	fnBack          func(c, lo, hi int)
	fnPrior         func(c, lo, hi int)
}

// NewVariational validates counts and cfg and returns the model with zero
// noise on the full batch (call Resample or SetNoise before training).
func NewVariational(c *Counts, cfg Config) (*Variational, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m := &Variational{Counts: c, cfg: cfg, graph: ChainGraph(c.Times, cfg.Diffusion),
		lik: newLikelihood(c, cfg.Dim, cfg.Tile, cfg.Pool)}
	m.t, m.vocab, m.s = c.T(), c.V, 2*c.V*cfg.Dim
	m.w = make([]float64, m.t-1)
	for t := range m.w {
		m.w[t] = 1 / (cfg.Diffusion * (c.Times[t+1] - c.Times[t]))
	}
	n := m.t * m.s
	m.eps, m.y, m.smp, m.gs, m.sv = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	m.cv = make([]float64, max(m.t-1, 0)*m.s)
	m.carry = make([]float64, m.s)
	m.allCols = make([]int, 2*c.V)
	for i := range m.allCols {
		m.allCols[i] = i
	}
	m.cols = m.allCols
	m.parts = make([]float64, optim.NumChunks(2*c.V, colChunk))
	m.fnSample = m.sampleChunk
	m.fnBack = m.backChunk
	m.fnPrior = m.priorChunk
	return m, nil
}

// Config returns the settings with defaults filled in.
func (m *Variational) Config() Config { return m.cfg }

// NumParams is (3T - 1) * 2V * d.
func (m *Variational) NumParams() int { return (3*m.t - 1) * m.s }

// Blocks covers the means: {Offset 0, T, N: 2V, D: d}.
func (m *Variational) Blocks() optim.Blocks {
	return optim.Blocks{T: m.t, N: 2 * m.vocab, D: m.cfg.Dim}
}

// Graph is the random-walk chain over the means (ChainGraph).
func (m *Variational) Graph() *optim.Graph { return m.graph }

// Problem is the training problem of m for optim.Driver: LocalLoss, the
// means' blocks and the random-walk chain.
func (m *Variational) Problem() optim.Problem {
	return optim.Problem{Local: m.LocalLoss, Blocks: m.Blocks(), Graph: m.graph}
}

// Means returns the means part of x (aliasing x).
func (m *Variational) Means(x []float64) []float64 { return x[:m.t*m.s] }

// Init sets mu ~ N(0, InitStd^2), nu = 1/InitWidth, omega = 0.
func (m *Variational) Init(x []float64, rng *rand.Rand) {
	checkLen("x", x, m.NumParams())
	n := m.t * m.s
	for i := range x[:n] {
		x[i] = m.cfg.InitStd * optim.NormFloat64(rng)
	}
	r := -optim.Log(m.cfg.InitWidth)
	for i := range x[n : 2*n] {
		x[n+i] = r
	}
	clear(x[2*n:])
}

// Resample draws a fresh minibatch (nw words, nc contexts; <= 0 or >= V:
// all) and fresh standard normal noise for the columns it touches.
func (m *Variational) Resample(rng *rand.Rand, nw, nc int) {
	m.lik.sampleBatch(rng, nw, nc)
	m.setCols()
	d := m.cfg.Dim
	for t := 0; t < m.t; t++ {
		e := m.eps[t*m.s : (t+1)*m.s]
		for _, c := range m.cols {
			for k := c * d; k < (c+1)*d; k++ {
				e[k] = optim.NormFloat64(rng)
			}
		}
	}
}

// SetNoise selects the full batch and copies eps (len T*2V*d, layout of the
// means) as the noise of the reparameterised sample.
func (m *Variational) SetNoise(eps []float64) {
	checkLen("eps", eps, len(m.eps))
	m.lik.setBatch(nil, nil)
	m.setCols()
	copy(m.eps, eps)
}

// SetBatch restricts the likelihood to words x contexts (see MAP.SetBatch),
// keeping the current noise.
func (m *Variational) SetBatch(words, contexts []int) {
	m.lik.setBatch(words, contexts)
	m.setCols()
}

func (m *Variational) setCols() {
	if m.lik.words == nil {
		m.cols = m.allCols
		return
	}
	if len(m.cols) > 0 && &m.cols[0] == &m.allCols[0] {
		m.cols = nil
	}
	m.cols = m.cols[:0]
	m.cols = append(m.cols, m.lik.words...)
	for _, j := range m.lik.ctxs {
		m.cols = append(m.cols, m.vocab+j)
	}
}

// Sample writes the current reparameterised sample mu + B^{-1} eps of all
// columns into dst (len T*2V*d) and returns it (dst nil: allocated).
func (m *Variational) Sample(dst, x []float64) []float64 {
	checkLen("x", x, m.NumParams())
	if dst == nil {
		dst = make([]float64, m.t*m.s)
	}
	checkLen("dst", dst, m.t*m.s)
	cols := m.cols
	m.cols = m.allCols
	m.x = x
	m.cfg.Pool.Chunks(len(m.cols), colChunk, m.fnSample)
	m.x = nil
	m.cols = cols
	copy(dst, m.smp)
	return dst
}

// LocalLoss returns the negative ELBO minus psi(mu) at x for the current
// noise and minibatch, and overwrites grad with its gradient.
func (m *Variational) LocalLoss(grad, x []float64) float64 {
	np := m.NumParams()
	checkLen("x", x, np)
	checkLen("grad", grad, np)
	m.x, m.grad = x, grad
	defer func() { m.x, m.grad = nil, nil }()
	par := m.cfg.Pool
	// Reparameterised sample on the active columns.
	par.Chunks(len(m.cols), colChunk, m.fnSample)
	// Likelihood at the sample; gs = d(-loglik)/d sample.
	loss := m.lik.eval(m.gs, m.smp)
	// Pathwise gradients into mu, nu, omega (grad of rho holds d/dnu for now).
	n := m.t * m.s
	if m.lik.words == nil {
		clear(grad[n:])
	} else {
		clear(grad)
	}
	par.Chunks(len(m.cols), colChunk, m.fnBack)
	// Local prior, analytic prior variance terms, entropy; all columns.
	par.Chunks(2*m.vocab, colChunk, m.fnPrior)
	for _, p := range m.parts {
		loss += p
	}
	return loss
}

// sampleChunk: y = B^{-1} eps by back substitution, smp = mu + y.
func (m *Variational) sampleChunk(_, lo, hi int) {
	d, s, T := m.cfg.Dim, m.s, m.t
	n := T * s
	mu, rho, om := m.x[:n], m.x[n:2*n], m.x[2*n:]
	for _, c := range m.cols[lo:hi] {
		q0, q1 := c*d, (c+1)*d
		for t := T - 1; t >= 0; t-- {
			o := t * s
			for q := q0; q < q1; q++ {
				v := m.eps[o+q]
				if t < T-1 {
					v -= float64(om[o+q] * m.y[o+s+q])
				}
				v /= optim.Exp(rho[o+q])
				m.y[o+q] = v
				m.smp[o+q] = mu[o+q] + v
			}
		}
	}
}

// backChunk: lambda = B^{-T} gs by forward substitution; d/dnu_t = -lambda_t
// y_t, d/domega_t = -lambda_t y_{t+1}; d/dmu = gs. lambda is kept in gs.
func (m *Variational) backChunk(_, lo, hi int) {
	d, s, T := m.cfg.Dim, m.s, m.t
	n := T * s
	rho, om := m.x[n:2*n], m.x[2*n:]
	gmu, gnu, gom := m.grad[:n], m.grad[n:2*n], m.grad[2*n:]
	for _, c := range m.cols[lo:hi] {
		q0, q1 := c*d, (c+1)*d
		for t := 0; t < T; t++ {
			o := t * s
			for q := q0; q < q1; q++ {
				g := m.gs[o+q]
				gmu[o+q] = g
				if t > 0 {
					g -= float64(om[o-s+q] * m.gs[o-s+q])
				}
				lam := g / optim.Exp(rho[o+q])
				m.gs[o+q] = lam
				gnu[o+q] = -lam * m.y[o+q]
				if t < T-1 {
					gom[o+q] = -lam * m.y[o+s+q]
				}
			}
		}
	}
}

// priorChunk handles columns [lo, hi) of all columns: the local prior on mu,
// the analytic prior variance terms and the entropy, added to the pathwise
// gradients already in grad.
func (m *Variational) priorChunk(ci, lo, hi int) {
	d, s, T := m.cfg.Dim, m.s, m.t
	n := T * s
	mu, rho, om := m.x[:n], m.x[n:2*n], m.x[2*n:]
	gmu, gnu, gom := m.grad[:n], m.grad[n:2*n], m.grad[2*n:]
	inv0 := 1 / m.cfg.Sigma0Sq
	q0, q1 := lo*d, hi*d
	var loss float64
	// Means: local prior.
	for t := 0; t < T; t++ {
		o := t * s
		for q := q0; q < q1; q++ {
			v := mu[o+q]
			loss += float64(0.5 * inv0 * v * v)
			gmu[o+q] += float64(inv0 * v)
		}
	}
	// Tridiagonal of Sigma by backward recursion.
	for t := T - 1; t >= 0; t-- {
		o := t * s
		for q := q0; q < q1; q++ {
			nu := optim.Exp(rho[o+q])
			if t == T-1 {
				m.sv[o+q] = 1 / (nu * nu)
				continue
			}
			w, s1 := om[o+q], m.sv[o+s+q]
			m.sv[o+q] = (1 + float64(w*w*s1)) / (nu * nu)
			m.cv[o+q] = -w * s1 / nu
		}
	}
	// Loss terms and reverse-mode adjoints, forward in t; carry = adjoint
	// flowing into Sigma_{t,t} from step t-1.
	carry := m.carry[q0:q1]
	clear(carry)
	for t := 0; t < T; t++ {
		o := t * s
		base := float64(0.5 * inv0)
		if t < T-1 {
			base += float64(0.5 * m.w[t])
		}
		if t > 0 {
			base += float64(0.5 * m.w[t-1])
		}
		for q := q0; q < q1; q++ {
			r := rho[o+q]
			nu := optim.Exp(r)
			sv := m.sv[o+q]
			as := base + carry[q-q0]
			loss += float64(base*sv) + r // prior variance terms of s_t; -entropy = sum rho
			gn := -2 * as * sv / nu
			if t < T-1 {
				w, s1, cv := om[o+q], m.sv[o+s+q], m.cv[o+q]
				ac := -m.w[t]
				loss += float64(ac * cv)
				gn += -ac * cv / nu
				gom[o+q] += as*2*w*s1/(nu*nu) - ac*s1/nu
				carry[q-q0] = as*w*w/(nu*nu) - ac*w/nu
			}
			// gnu holds d/dnu; convert to d/drho and add the entropy term.
			gnu[o+q] = float64((gnu[o+q]+gn)*nu) + 1
		}
	}
	m.parts[ci] = loss
}
