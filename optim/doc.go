// Package optim holds the optimizers goldstone trains with: plain gradient
// descent, AdaGrad and Adam on a flat parameter vector, and the symmetry
// steps that act between their iterations: Goldstone-GD (natural-gradient
// steps on per-time-step gauge fields) and exact Procrustes gauge fixing on
// tree-shaped couplings.
//
// Invariants:
//   - optim imports nothing of goldstone's own packages.
//   - Parameters are one flat []float64; gradients are written in place into a
//     caller's buffer. The per-time-step blocks Z_t are described by Blocks.
//   - No allocation inside an iteration once an optimizer is initialised.
//   - Parallel loops split work into fixed chunks and reduce in a fixed order,
//     so results are bit-identical at any GOMAXPROCS or worker count.
package optim
