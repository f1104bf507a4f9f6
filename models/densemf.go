package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"goldstone/optim"
)

// DefaultInitStd is the standard deviation of the initial parameter entries
// when a model's InitStd is zero.
const DefaultInitStd = 0.1

// DenseMF is dense dynamic Gaussian matrix factorisation (model 1 of the
// paper). Z_t = (U_t, V_t) holds Rows row vectors followed by Cols column
// vectors, each of length D, and
//
//	l_t = 1/2 ||X_t - U_t^T V_t||_F^2 + Gamma/2 ||Z_t||_F^2.
//
// The zero value is not usable: set X, Rows, Cols, D, T and call Validate.
type DenseMF struct {
	// X[t] is X_t, Rows x Cols row-major. A single matrix (len(X) == 1) is
	// shared by all T steps (the paper's artificial experiment).
	X          [][]float64
	Rows, Cols int
	D          int // embedding dimension
	T          int // number of time steps

	Lambda   float64      // chain coupling weight when Coupling is nil; 0 means uncoupled
	Coupling *optim.Graph // explicit coupling over the T steps; overrides Lambda
	Gamma    float64      // local L2 weight (0: none)

	// InitStd is the standard deviation of the independent N(0, InitStd^2)
	// initial entries; 0 means DefaultInitStd. Each Z_t is drawn
	// independently, so the Z_t start with unrelated orientations and the
	// coupling has Goldstone modes to relax, as in the paper's experiment.
	InitStd float64

	Pool *optim.Pool // runs the loop over time steps; nil runs inline

	prepared bool
	graph    *optim.Graph
	chunk    int
	part     []float64 // per-chunk partial losses
	cx, cg   []float64 // arguments of the current LocalLoss call
	fn       func(c, lo, hi int)
}

var _ Model = (*DenseMF)(nil)

// Validate reports whether the fields describe a consistent model.
func (m *DenseMF) Validate() error {
	if m.Rows <= 0 || m.Cols <= 0 || m.D <= 0 || m.T <= 0 {
		return fmt.Errorf("densemf: Rows=%d Cols=%d D=%d T=%d, want all > 0", m.Rows, m.Cols, m.D, m.T)
	}
	if len(m.X) != 1 && len(m.X) != m.T {
		return fmt.Errorf("densemf: %d data matrices, want 1 or T=%d", len(m.X), m.T)
	}
	for t, xt := range m.X {
		if len(xt) != m.Rows*m.Cols {
			return fmt.Errorf("densemf: X[%d] has %d entries, want %dx%d", t, len(xt), m.Rows, m.Cols)
		}
		for k, v := range xt {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("densemf: X[%d][%d] = %v", t, k, v)
			}
		}
	}
	if !(m.Lambda >= 0) || math.IsInf(m.Lambda, 0) || !(m.Gamma >= 0) || math.IsInf(m.Gamma, 0) || !(m.InitStd >= 0) {
		return fmt.Errorf("densemf: Lambda=%v Gamma=%v InitStd=%v, want finite >= 0", m.Lambda, m.Gamma, m.InitStd)
	}
	if m.Coupling != nil && m.Coupling.N != m.T {
		return fmt.Errorf("densemf: coupling has %d nodes, want T=%d", m.Coupling.N, m.T)
	}
	return nil
}

func (m *DenseMF) prepare() {
	if m.prepared {
		return
	}
	if err := m.Validate(); err != nil {
		panic(err)
	}
	m.graph = chainOrGraph(m.Coupling, m.T, m.Lambda)
	// About 64k multiply-adds per chunk: small problems run in one chunk.
	m.chunk = max(1, 65536/(m.Rows*m.Cols*m.D))
	m.part = make([]float64, optim.NumChunks(m.T, m.chunk))
	m.fn = m.lossChunk
	m.prepared = true
}

// NumParams returns T*(Rows+Cols)*D.
func (m *DenseMF) NumParams() int { return m.T * (m.Rows + m.Cols) * m.D }

// Blocks returns the layout of the Z_t: N = Rows+Cols columns of length D.
func (m *DenseMF) Blocks() optim.Blocks {
	return optim.Blocks{T: m.T, N: m.Rows + m.Cols, D: m.D}
}

// Graph returns Coupling, or a chain with weight Lambda, or nil if Lambda is 0.
func (m *DenseMF) Graph() *optim.Graph {
	m.prepare()
	return m.graph
}

// Init fills x with independent N(0, InitStd^2) entries.
func (m *DenseMF) Init(x []float64, rng *rand.Rand) {
	m.prepare()
	checkLen("x", x, m.NumParams())
	initNormal(x, rng, m.InitStd)
}

// LocalLoss returns sum_t l_t at x and overwrites grad with its gradient.
func (m *DenseMF) LocalLoss(grad, x []float64) float64 {
	m.prepare()
	checkLen("x", x, m.NumParams())
	checkLen("grad", grad, m.NumParams())
	m.cx, m.cg = x, grad
	m.Pool.Chunks(m.T, m.chunk, m.fn)
	m.cx, m.cg = nil, nil
	var loss float64
	for _, v := range m.part {
		loss += v
	}
	return loss
}

func (m *DenseMF) lossChunk(c, lo, hi int) {
	var loss float64
	for t := lo; t < hi; t++ {
		loss += m.stepLoss(t)
	}
	m.part[c] = loss
}

// stepLoss computes l_t and writes the gradient of block t.
func (m *DenseMF) stepLoss(t int) float64 {
	d, rows, cols := m.D, m.Rows, m.Cols
	n := (rows + cols) * d
	z := m.cx[t*n : (t+1)*n]
	g := m.cg[t*n : (t+1)*n]
	xt := m.X[0]
	if len(m.X) > 1 {
		xt = m.X[t]
	}
	u, v := z[:rows*d], z[rows*d:]
	gu, gv := g[:rows*d], g[rows*d:]
	clear(gv)
	var loss float64
	for i := 0; i < rows; i++ {
		ui := u[i*d : (i+1)*d]
		gui := gu[i*d : (i+1)*d]
		clear(gui)
		xi := xt[i*cols : (i+1)*cols]
		for j, xij := range xi {
			vj := v[j*d : (j+1)*d]
			gvj := gv[j*d : (j+1)*d]
			var s float64
			for k, a := range ui {
				s += float64(a * vj[k])
			}
			r := s - xij
			loss += float64(0.5 * r * r)
			for k, a := range ui {
				gui[k] += float64(r * vj[k])
				gvj[k] += float64(r * a)
			}
		}
	}
	if m.Gamma != 0 {
		var sq float64
		for k, a := range z {
			sq += float64(a * a)
			g[k] += float64(m.Gamma * a)
		}
		loss += float64(0.5 * m.Gamma * sq)
	}
	return loss
}

func checkLen[F optim.Float](name string, s []F, n int) {
	if len(s) != n {
		panic(fmt.Sprintf("models: len(%s)=%d, want %d", name, len(s), n))
	}
}
