package optim

// GDOf is plain gradient descent x <- x - rho_s g on parameters of type F,
// optionally with the gradient clipped elementwise to [-Clip, Clip] (Clip
// <= 0: no clipping), as in the paper's baseline for the artificial data. A
// zero Rate.Rho0 means 1e-2.
type GDOf[F Float] struct {
	Rate Schedule
	Clip float64

	rho F // rate of the current step
}

// GD is GDOf on float64 parameters.
type GD = GDOf[float64]

// Init implements Method; GD has no state.
func (*GDOf[F]) Init(int) {}

// Begin implements Method.
func (m *GDOf[F]) Begin(step int) { m.rho = F(m.Rate.rate(step, DefaultGDRate)) }

// Update implements Method.
func (m *GDOf[F]) Update(x, g []F, _ int) {
	checkStep(x, g)
	x = x[:len(g)]
	rho := m.rho
	if m.Clip > 0 {
		c := F(m.Clip)
		for i, gi := range g {
			x[i] -= F(rho * min(max(gi, -c), c))
		}
		return
	}
	for i, gi := range g {
		x[i] -= F(rho * gi)
	}
}
