package optim

// MethodOf is a first-order optimizer on a flat parameter vector of F. Its update is
// elementwise, so a step can be applied range by range: Begin(step) once,
// then Update on disjoint ranges that together cover the vector, in any
// order and concurrently. The Driver applies it this way inside the fused
// pass that also adds the coupling gradient (Driver.Run); Step applies a
// whole step to one vector.
type MethodOf[F Float] interface {
	// Init (re)allocates and zeroes the optimizer state for n parameters.
	Init(n int)
	// Begin prepares step step (counted from 0): its rate and any other
	// per-step scalars. It must be called before the step's Update calls.
	Begin(step int)
	// Update applies the prepared step to the parameters x, whose gradient
	// is g; x[i] and g[i] are parameter off+i of the vector Init sized.
	// Calls on disjoint ranges may run concurrently; Update must not
	// allocate. len(g) == len(x).
	Update(x, g []F, off int)
}

// Method is MethodOf on float64 parameters.
type Method = MethodOf[float64]

var (
	_ Method = (*GD)(nil)
	_ Method = (*AdaGrad)(nil)
	_ Method = (*Adam)(nil)

	_ MethodOf[float32] = (*GDOf[float32])(nil)
	_ MethodOf[float32] = (*AdaGradOf[float32])(nil)
	_ MethodOf[float32] = (*AdamOf[float32])(nil)
)

// Step applies step step of m to the whole vector x from its gradient grad.
func Step[F Float](m MethodOf[F], x, grad []F, step int) {
	checkStep(x, grad)
	m.Begin(step)
	m.Update(x, grad, 0)
}

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

func checkStep[F Float](x, grad []F) {
	if len(x) != len(grad) {
		panic("optim: len(x) != len(grad)")
	}
}
