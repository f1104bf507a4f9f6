package optim

// Stateful is a Method or Gauge that carries state from one step (or gauge
// round) to the next: AdaGrad's accumulated squares, Adam's moments,
// Goldstone's gauge fields. State returns that state as the object's own
// buffers, in a fixed order, valid after Init: a checkpoint saves them, and
// a resumed run (Driver.Restore, after Init with the same sizes) copies the
// saved values back into the slices State returns. Its result is then the
// same, bit for bit, as if it had never stopped. Methods and gauges without
// such state (GD, Procrustes) do not implement it.
//
// A new Method or Gauge whose steps depend on anything kept between calls
// must implement Stateful and list all of it; TestDriver resumes every one
// mid-run and compares the bits.
type Stateful interface {
	State() [][]float64
}

var (
	_ Stateful = (*AdaGrad)(nil)
	_ Stateful = (*Adam)(nil)
	_ Stateful = (*Goldstone)(nil)
)

// StateOf returns v's State, or nil when v keeps no state.
func StateOf(v any) [][]float64 {
	if s, ok := v.(Stateful); ok {
		return s.State()
	}
	return nil
}

// State implements Stateful: the accumulated squared gradients.
func (m *AdaGradOf[F]) State() [][]F { return [][]F{m.h} }

// State implements Stateful: the first and second moment estimates.
func (a *AdamOf[F]) State() [][]F { return [][]F{a.m, a.v} }

// State implements Stateful: the gauge fields G_t, kept between rounds
// (unless Reset).
func (g *Goldstone) State() [][]float64 { return [][]float64{g.gf} }
