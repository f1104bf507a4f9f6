// Package optim holds the optimizers goldstone trains with: plain gradient
// descent, AdaGrad and Adam on a flat parameter vector, and the symmetry
// steps that act between their iterations: Goldstone-GD (natural-gradient
// steps on per-time-step gauge fields, Bamler and Mandt, ICML 2018) and exact
// Procrustes gauge fixing on tree-shaped couplings.
//
// A Driver runs a Method on a Problem (a local loss, the block layout of the
// per-time-step embeddings Z_t, the coupling Graph and an optional local L2
// weight; the Driver adds psi = 1/2 Tr(Z^T L Z)), with a Gauge round
// (Goldstone or Procrustes) after every K1 steps. After the local loss has
// added its gradient into a zeroed buffer, one fused parallel pass over the
// parameters adds the L2 and psi gradients, applies the Method's elementwise
// update (Method.Begin, then Method.Update on ranges) and zeroes the buffer.
// GaugeGap measures the energy stored in Goldstone modes.
//
// Invariants:
//   - optim imports nothing of goldstone's own packages.
//   - Parameters are one flat []float64; gradients are written in place into a
//     caller's buffer. The per-time-step blocks Z_t are described by Blocks.
//   - No allocation inside an iteration once an optimizer or gauge is
//     initialised (Method.Update, Gauge.Round, Pool.Chunks, a Driver step).
//   - The AVX kernels (amd64) perform the same IEEE operations in the same
//     order as the Go loops they replace (the Go twins), so results do not
//     depend on them; the purego build tag forces the twins on amd64.
//   - Results are the same bits on every build (GOAMD64=v1..v4, purego,
//     arm64): every product that is added is rounded first (float64(x*y) +
//     z) so that no compiler fuses it, fused multiply-adds are explicit
//     (math.FMA), and the elementary functions (Exp, Log, Log1p, Pow), the
//     normal and exponential variates (NormFloat64, ExpFloat64) and the
//     dense linear algebra (gemm on GemmAcc, SVD, Cholesky, LaplacianPinv)
//     are optim's own, never the standard library's or gonum's, whose bits
//     depend on the build (detmath.go, dense.go). internal/fmacheck checks
//     the compiled code; TestBits checks the values.
//   - *Pool is the one parallel abstraction: every parallel loop runs on a
//     *Pool handed in by the caller (a trial's core budget; nil runs inline),
//     and no type builds a private pool.
//   - Parallel loops split work into fixed chunks whose results do not depend
//     on which worker runs them, and reduce in a fixed order, so results are
//     bit-identical at any GOMAXPROCS or worker count.
package optim
