package optim

// GD is plain gradient descent x <- x - rho_s g, optionally with the gradient
// clipped elementwise to [-Clip, Clip] (Clip <= 0: no clipping), as in the
// paper's baseline for the artificial data. A zero Rate.Rho0 means 1e-2.
type GD struct {
	Rate Schedule
	Clip float64

	rho float64 // rate of the current step
}

// Init implements Method; GD has no state.
func (*GD) Init(int) {}

// Begin implements Method.
func (m *GD) Begin(step int) { m.rho = m.Rate.rate(step, DefaultGDRate) }

// Update implements Method.
func (m *GD) Update(x, g []float64, _ int) {
	checkStep(x, g)
	x = x[:len(g)]
	rho := m.rho
	if c := m.Clip; c > 0 {
		for i, gi := range g {
			x[i] -= float64(rho * min(max(gi, -c), c))
		}
		return
	}
	for i, gi := range g {
		x[i] -= float64(rho * gi)
	}
}
