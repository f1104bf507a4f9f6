package optim

// Blocks describes where the per-time-step embedding matrices Z_t live inside a
// flat parameter vector x.
//
// Z_t is a d x N matrix stored column by column: column i of Z_t (the
// embedding vector z_{t,i}) is
//
//	x[Offset + (t*N+i)*D : Offset + (t*N+i+1)*D]
//
// so T*N*D consecutive entries starting at Offset. Entries of x outside that
// range (for example variational widths) are not touched by symmetry steps.
type Blocks struct {
	Offset int // index of z_{0,0}[0] in x
	T      int // number of time steps
	N      int // number of embedding vectors per time step
	D      int // embedding dimension d
}

// Len is the number of entries of x covered by the blocks, T*N*D.
func (b Blocks) Len() int { return b.T * b.N * b.D }

// Block returns the slice of x holding Z_t (N columns of length D).
func (b Blocks) Block(x []float64, t int) []float64 {
	n := b.N * b.D
	start := b.Offset + t*n
	return x[start : start+n : start+n]
}

// ObjectiveOf evaluates a loss and adds its gradient with respect to x into
// grad. The Driver calls it with grad all zero (its fused pass leaves the
// buffer zeroed for the next step), so an Objective may also overwrite grad,
// and one that adds need not touch the entries its gradient does not reach.
// len(grad) == len(x).
type ObjectiveOf[F Float] func(grad, x []F) float64

// Objective is ObjectiveOf on float64 parameters.
type Objective = ObjectiveOf[float64]
