package optim

import (
	"math"
	"slices"
)

// Adam is the Adam method of Kingma and Ba with bias correction:
//
//	m = Beta1 m + (1-Beta1) g;  v = Beta2 v + (1-Beta2) g^2
//	x -= rho_s (m / (1-Beta1^(s+1))) / (sqrt(v / (1-Beta2^(s+1))) + Eps)
//
// Zero fields mean the defaults: Rate.Rho0 1e-3, Beta1 0.9, Beta2 0.999,
// Eps 1e-8. Gauge rounds rotate x but not the moment estimates.
type Adam struct {
	Rate              Schedule
	Beta1, Beta2, Eps float64

	m, v                     []float64
	b1, b2, eps, rho, c1, c2 float64 // of the current step
}

// Init implements Method: it zeroes both moment estimates.
func (a *Adam) Init(n int) {
	a.m = slices.Grow(a.m[:0], n)[:n]
	a.v = slices.Grow(a.v[:0], n)[:n]
	clear(a.m)
	clear(a.v)
}

// Begin implements Method.
func (a *Adam) Begin(step int) {
	a.b1, a.b2, a.eps = a.Beta1, a.Beta2, a.Eps
	if a.b1 == 0 {
		a.b1 = DefaultAdamBeta1
	}
	if a.b2 == 0 {
		a.b2 = DefaultAdamBeta2
	}
	if a.eps == 0 {
		a.eps = DefaultAdamEps
	}
	a.rho = a.Rate.rate(step, DefaultAdamRate)
	t := float64(step + 1)
	a.c1 = 1 / (1 - Pow(a.b1, t))
	a.c2 = 1 / (1 - Pow(a.b2, t))
}

// Update implements Method.
func (a *Adam) Update(x, g []float64, off int) {
	checkStep(x, g)
	x = x[:len(g)]
	if off < 0 || off+len(g) > len(a.m) {
		panic("optim: Adam.Update before Init or out of range")
	}
	b1, b2, eps, rho, c1, c2 := a.b1, a.b2, a.eps, a.rho, a.c1, a.c2
	m, v := a.m[off:off+len(g)], a.v[off:off+len(g)]
	m, v = m[:len(g)], v[:len(g)]
	if n := len(g) &^ 3; useAVX && n > 0 {
		adamAVX(&x[0], &g[0], &m[0], &v[0], n, b1, 1-b1, b2, 1-b2, rho, c1, c2, eps)
		x, g, m, v = x[n:], g[n:], m[n:], v[n:]
	}
	for i, gi := range g {
		mi := float64(b1*m[i]) + float64((1-b1)*gi)
		vi := float64(b2*v[i]) + float64((1-b2)*gi*gi)
		m[i], v[i] = mi, vi
		x[i] -= rho * (mi * c1) / (math.Sqrt(vi*c2) + eps)
	}
}
