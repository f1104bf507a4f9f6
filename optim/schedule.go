package optim

// Schedule is a learning-rate schedule
//
//	rho_s = Rho0 * (S0 / (s + S0))^Kappa
//
// for step s counted from 0. Kappa == 0 gives the constant rate Rho0.
// A zero Rho0 means the default of the method that uses the schedule
// (1e-2 for GD and AdaGrad, 1e-3 for Adam). S0 <= 0 is treated as 1.
type Schedule struct {
	Rho0, S0, Kappa float64
}

// Rate returns the learning rate at the given step (Rho0 as given, no default).
func (s Schedule) Rate(step int) float64 {
	if s.Kappa == 0 {
		return s.Rho0
	}
	s0 := s.S0
	if s0 <= 0 {
		s0 = 1
	}
	return s.Rho0 * Pow(s0/(float64(step)+s0), s.Kappa)
}

// rate is Rate with a zero Rho0 replaced by def.
func (s Schedule) rate(step int, def float64) float64 {
	if s.Rho0 == 0 {
		s.Rho0 = def
	}
	return s.Rate(step)
}

// Constant is the schedule with the fixed rate rho.
func Constant(rho float64) Schedule { return Schedule{Rho0: rho} }
