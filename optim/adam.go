package optim

import (
	"math"
	"slices"
)

// AdamOf is the Adam method of Kingma and Ba with bias correction, on
// parameters of type F (moments in F, every operation rounded to F):
//
//	m = Beta1 m + (1-Beta1) g;  v = Beta2 v + (1-Beta2) g^2
//	x -= rho_s (m / (1-Beta1^(s+1))) / (sqrt(v / (1-Beta2^(s+1))) + Eps)
//
// Zero fields mean the defaults: Rate.Rho0 1e-3, Beta1 0.9, Beta2 0.999,
// Eps 1e-8. Gauge rounds rotate x but not the moment estimates.
type AdamOf[F Float] struct {
	Rate              Schedule
	Beta1, Beta2, Eps float64

	m, v                     []F
	b1, b2, eps, rho, c1, c2 F // of the current step
}

// Adam is AdamOf on float64 parameters.
type Adam = AdamOf[float64]

// Init implements Method: it zeroes both moment estimates.
func (a *AdamOf[F]) Init(n int) {
	a.m = slices.Grow(a.m[:0], n)[:n]
	a.v = slices.Grow(a.v[:0], n)[:n]
	clear(a.m)
	clear(a.v)
}

// Begin implements Method.
func (a *AdamOf[F]) Begin(step int) {
	b1, b2, eps := a.Beta1, a.Beta2, a.Eps
	if b1 == 0 {
		b1 = DefaultAdamBeta1
	}
	if b2 == 0 {
		b2 = DefaultAdamBeta2
	}
	if eps == 0 {
		eps = DefaultAdamEps
	}
	a.b1, a.b2, a.eps = F(b1), F(b2), F(eps)
	a.rho = F(a.Rate.rate(step, DefaultAdamRate))
	t := float64(step + 1)
	a.c1 = F(1 / (1 - Pow(float64(a.b1), t)))
	a.c2 = F(1 / (1 - Pow(float64(a.b2), t)))
}

// Update implements Method.
func (a *AdamOf[F]) Update(x, g []F, off int) {
	checkStep(x, g)
	x = x[:len(g)]
	if off < 0 || off+len(g) > len(a.m) {
		panic("optim: Adam.Update before Init or out of range")
	}
	b1, b2, eps, rho, c1, c2 := a.b1, a.b2, a.eps, a.rho, a.c1, a.c2
	m, v := a.m[off:off+len(g)], a.v[off:off+len(g)]
	m, v = m[:len(g)], v[:len(g)]
	if n := len(g) &^ 3; useAVX && n > 0 {
		if x64, ok := as64(x); ok {
			g64, _ := as64(g)
			m64, _ := as64(m)
			v64, _ := as64(v)
			adamAVX(&x64[0], &g64[0], &m64[0], &v64[0], n, float64(b1), float64(1-b1), float64(b2), float64(1-b2),
				float64(rho), float64(c1), float64(c2), float64(eps))
			x, g, m, v = x[n:], g[n:], m[n:], v[n:]
		}
	}
	for i, gi := range g {
		mi := F(b1*m[i]) + F((1-b1)*gi)
		vi := F(b2*v[i]) + F((1-b2)*gi*gi)
		m[i], v[i] = mi, vi
		x[i] -= rho * (mi * c1) / (F(math.Sqrt(float64(vi*c2))) + eps)
	}
}
