// Package search holds hyperparameter search beyond grids: a Space of
// distributions over settings (uniform, log-uniform, integer, choice, and
// settings that exist only for some choices of another), and the samplers
// that suggest points of it (grid, random, Sobol, TPE).
//
// Every sampler is a pure function of the search's seed, the index of the
// suggestion and the observations recorded so far: a search that is
// stopped and run again suggests the same points, and the same bits on
// every build (random draws come from a PCG stream per suggestion, the
// transcendental functions from optim's deterministic ones, and every
// product is rounded before it is added).
//
// Invariants:
//   - search imports nothing of goldstone's own packages but optim (for the
//     deterministic Exp, Log and normal variates).
//   - Observation values are minimized: a caller that maximizes negates them.
//     A value that is not finite (a failed or diverged trial) is the worst.
package search
