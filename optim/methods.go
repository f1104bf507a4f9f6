package optim

// Method is a first-order optimizer on a flat parameter vector.
type Method interface {
	// Init (re)allocates and zeroes the optimizer state for n parameters.
	Init(n int)
	// Step updates x in place from the gradient grad at x. step counts from 0.
	Step(x, grad []float64, step int)
}

var (
	_ Method = (*GD)(nil)
	_ Method = (*AdaGrad)(nil)
	_ Method = (*Adam)(nil)
)

// Default settings used when the corresponding field is zero.
const (
	DefaultGDRate      = 1e-2
	DefaultAdaGradRate = 1e-2
	DefaultAdaGradEps  = 1e-8
	DefaultAdamRate    = 1e-3
	DefaultAdamBeta1   = 0.9
	DefaultAdamBeta2   = 0.999
	DefaultAdamEps     = 1e-8
)

func checkStep(x, grad []float64) {
	if len(x) != len(grad) {
		panic("optim: len(x) != len(grad)")
	}
}
