// Package optim holds the optimizers goldstone trains with: plain gradient
// descent, AdaGrad and Adam on a flat parameter vector, and the symmetry
// steps that act between their iterations: Goldstone-GD (natural-gradient
// steps on per-time-step gauge fields, Bamler and Mandt, ICML 2018) and exact
// Procrustes gauge fixing on tree-shaped couplings.
//
// A Driver runs a Method on a Problem (a local loss, the block layout of the
// per-time-step embeddings Z_t and the coupling Graph; the Driver adds
// psi = 1/2 Tr(Z^T L Z)), with a Gauge round (Goldstone or Procrustes) after
// every K1 steps. GaugeGap measures the energy stored in Goldstone modes.
//
// Invariants:
//   - optim imports nothing of goldstone's own packages.
//   - Parameters are one flat []float64; gradients are written in place into a
//     caller's buffer. The per-time-step blocks Z_t are described by Blocks.
//   - No allocation inside an iteration once an optimizer or gauge is
//     initialised (Method.Step, Gauge.Round, Pool.Chunks).
//   - *Pool is the one parallel abstraction: every parallel loop runs on a
//     *Pool handed in by the caller (a trial's core budget; nil runs inline),
//     and no type builds a private pool.
//   - Parallel loops split work into fixed chunks whose results do not depend
//     on which worker runs them, and reduce in a fixed order, so results are
//     bit-identical at any GOMAXPROCS or worker count.
package optim
