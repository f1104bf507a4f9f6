package optim

// GD is plain gradient descent x <- x - rho_s g, optionally with the gradient
// clipped elementwise to [-Clip, Clip] (Clip <= 0: no clipping), as in the
// paper's baseline for the artificial data. A zero Rate.Rho0 means 1e-2.
type GD struct {
	Rate Schedule
	Clip float64
}

// Init implements Method; GD has no state.
func (*GD) Init(int) {}

// Step implements Method.
func (m *GD) Step(x, grad []float64, step int) {
	checkStep(x, grad)
	rho := m.Rate.rate(step, DefaultGDRate)
	if c := m.Clip; c > 0 {
		for i, g := range grad {
			x[i] -= rho * min(max(g, -c), c)
		}
		return
	}
	for i, g := range grad {
		x[i] -= rho * g
	}
}
