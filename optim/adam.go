package optim

import "math"

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

	m, v []float64
}

// Init implements Method: it zeroes both moment estimates.
func (a *Adam) Init(n int) {
	a.m = resize(a.m, n)
	a.v = resize(a.v, n)
	clear(a.m)
	clear(a.v)
}

// Step implements Method.
func (a *Adam) Step(x, grad []float64, step int) {
	checkStep(x, grad)
	if len(a.m) != len(x) {
		panic("optim: Adam.Step before Init or with a different length")
	}
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
	rho := a.Rate.rate(step, DefaultAdamRate)
	t := float64(step + 1)
	c1 := 1 / (1 - math.Pow(b1, t))
	c2 := 1 / (1 - math.Pow(b2, t))
	m, v := a.m[:len(grad)], a.v[:len(grad)]
	x = x[:len(grad)]
	for i, g := range grad {
		mi := b1*m[i] + (1-b1)*g
		vi := b2*v[i] + (1-b2)*g*g
		m[i], v[i] = mi, vi
		x[i] -= rho * (mi * c1) / (math.Sqrt(vi*c2) + eps)
	}
}
