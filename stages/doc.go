// Package stages turns named experiments into pipeline graphs and runs them.
//
// It holds the settings registry and the strict decoder of experiments.toml
// (config.go, settings.go), the stages of the three pipelines (artificial:
// dense dynamic Gaussian MF; movielens: ingest, binarize, bin, split, train,
// evaluate, report; dwe: ingest, bin, vocabulary, count, train, evaluate,
// report), the shared training loop and its step-wise metrics (train.go),
// and Execute, which runs an experiment's sweep through the pipeline and
// records every trial in the results store (sweep.go).
//
// Invariants:
//   - A stage's cache parameters are exactly the effective settings it reads
//     (Settings.Params), so a setting change re-runs only the stages that
//     read it; a trial's id hashes its effective settings.
//   - Node ids are <experiment>/<stage>/<trial slug>; the cache is keyed by
//     content and shared across experiments.
//   - Stage outputs are written by the stage inside the pipeline's temporary
//     directory; files written elsewhere go through writeAtomic.
//   - Results other than timings (metrics ending in _seconds) are
//     deterministic for a given configuration at any --jobs.
package stages
