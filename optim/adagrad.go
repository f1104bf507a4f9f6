package optim

import (
	"math"
	"slices"
)

// AdaGrad is the diagonal AdaGrad method
//
//	h_i += g_i^2;  x_i -= rho_s g_i / (sqrt(h_i) + Eps)
//
// A zero Rate.Rho0 means 1e-2 and a zero Eps means 1e-8.
type AdaGrad struct {
	Rate Schedule
	Eps  float64

	h        []float64
	rho, eps float64 // of the current step
}

// Init implements Method: it zeroes the accumulated squared gradients.
func (m *AdaGrad) Init(n int) {
	m.h = slices.Grow(m.h[:0], n)[:n]
	clear(m.h)
}

// Begin implements Method.
func (m *AdaGrad) Begin(step int) {
	m.rho = m.Rate.rate(step, DefaultAdaGradRate)
	m.eps = m.Eps
	if m.eps == 0 {
		m.eps = DefaultAdaGradEps
	}
}

// Update implements Method.
func (m *AdaGrad) Update(x, g []float64, off int) {
	checkStep(x, g)
	x = x[:len(g)]
	if off < 0 || off+len(g) > len(m.h) {
		panic("optim: AdaGrad.Update before Init or out of range")
	}
	rho, eps := m.rho, m.eps
	h := m.h[off : off+len(g)]
	h = h[:len(g)]
	if n := len(g) &^ 3; useAVX && n > 0 {
		adagradAVX(&x[0], &g[0], &h[0], n, rho, eps)
		x, g, h = x[n:], g[n:], h[n:]
	}
	for i, gi := range g {
		hi := h[i] + float64(gi*gi)
		h[i] = hi
		x[i] -= rho * gi / (math.Sqrt(hi) + eps)
	}
}
