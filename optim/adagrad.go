package optim

import "math"

// AdaGrad is the diagonal AdaGrad method
//
//	h_i += g_i^2;  x_i -= rho_s g_i / (sqrt(h_i) + Eps)
//
// A zero Rate.Rho0 means 1e-2 and a zero Eps means 1e-8.
type AdaGrad struct {
	Rate Schedule
	Eps  float64

	h []float64
}

// Init implements Method: it zeroes the accumulated squared gradients.
func (m *AdaGrad) Init(n int) {
	m.h = resize(m.h, n)
	clear(m.h)
}

// Step implements Method.
func (m *AdaGrad) Step(x, grad []float64, step int) {
	checkStep(x, grad)
	if len(m.h) != len(x) {
		panic("optim: AdaGrad.Step before Init or with a different length")
	}
	rho := m.Rate.rate(step, DefaultAdaGradRate)
	eps := m.Eps
	if eps == 0 {
		eps = DefaultAdaGradEps
	}
	h := m.h[:len(grad)]
	x = x[:len(grad)]
	for i, g := range grad {
		hi := h[i] + g*g
		h[i] = hi
		x[i] -= rho * g / (math.Sqrt(hi) + eps)
	}
}

// resize returns a slice of length n, reusing s when it is large enough.
func resize(s []float64, n int) []float64 {
	if n > cap(s) {
		return make([]float64, n)
	}
	return s[:n]
}
