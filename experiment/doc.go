// Package experiment turns named experiments into pipeline graphs. It knows no
// pipeline by name; each pipeline is a package below stages/ (artificial,
// movielens, dwe) that implements Pipeline and registers itself, and
// stages/pipelines imports them all.
//
// Where things are:
//   - registry.go: the Pipeline interface and its registry (resolved
//     lazily, frozen on first read), the generated settings table
//     (SettingsTable).
//   - config.go, slurm_config.go: the strict decoder of experiments.toml
//     (variants, grids, --set overrides), trial enumeration and ids.
//   - build.go: Build (an experiment's graph through its pipeline), Env,
//     trial bookkeeping.
//   - shared.go: Shared, the data settings every trial of a sweep shares.
//
// The jobs around it live in packages of their own: the settings language
// (experiment/settings), the training loop and its optimizer and symmetry
// step choices (train), the trial file formats (trialio),
// the report scaffolding (report), figures (report/figures), and
// running and recording sweeps (sweep, with its Slurm executor).
//
// Invariants:
//   - A stage's cache parameters are exactly the settings it reads (Keys of
//     its settings struct), so a setting change re-runs only the stages that
//     read it; a trial's id hashes its pipeline's settings struct's Keys.
//   - Each stage has its own cache version (a pipeline's versions.go); the
//     golden tests of stages/pipelines record every stage's outputs and
//     name the stage whose outputs changed for the same inputs without a
//     bump.
//   - Node ids are <experiment>/<stage>/<trial slug>; the cache is keyed by
//     content and shared across experiments.
//   - Stage outputs are written by the stage inside the pipeline's temporary
//     directory; files written elsewhere go through internal/atomicfile.
//   - Results other than timings (metrics ending in _seconds) are
//     deterministic for a given configuration at any --jobs.
package experiment
