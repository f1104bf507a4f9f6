// Package stages is the machinery shared by every pipeline: it turns named
// experiments into pipeline graphs and runs them. It knows no pipeline by
// name; each pipeline is a package below stages/ (artificial, movielens,
// dwe) that implements Pipeline and registers itself, and stages/pipelines
// imports them all.
//
// Where things are:
//   - registry.go: the Pipeline interface, the registry, the generated
//     settings table (SettingsTable).
//   - typed.go: typed settings. A stage declares what it reads as a struct
//     (tags: setting name, default, check, doc); Decode fills it, Keys is
//     its cache parameters, SpecsOf the specs the decoder checks against.
//     Interface fields are choices (RegisterChoice): only the chosen
//     optimizer's or symmetry step's options are read and keyed.
//   - optimizers.go: the settings of the base optimizers and symmetry steps
//     (one struct and one RegisterChoice line each), of the training loop
//     (LoopSettings) and of the MF prior; NewPool, a trial's pool.
//   - settings.go, config.go: setting values, and the strict decoder of
//     experiments.toml (variants, grids, --set overrides, trial enumeration
//     and ids).
//   - build.go: Build (an experiment's graph through its pipeline), trial
//     bookkeeping, the report stage.
//   - sweep.go: Execute, which runs a sweep through the pipeline and records
//     every trial in the results store.
//   - repro.go: Compare and MatchByName, the comparison behind `runner repro`.
//   - train.go: the shared training loop (Loop), optimizer construction and
//     the gauge-gap meter.
//   - artifacts.go: a trial's series (Arrow IPC) and summary (JSON) files,
//     and small file helpers.
//   - report.go: report scaffolding (loading results, curves, tables).
//
// Invariants:
//   - A stage's cache parameters are exactly the settings it reads (Keys of
//     its settings struct), so a setting change re-runs only the stages that
//     read it; a trial's id hashes its pipeline's settings struct's Keys.
//   - Each pipeline's Version is the cache version of all its stages; the
//     golden tests of stages/pipelines fail when results change without it.
//   - Node ids are <experiment>/<stage>/<trial slug>; the cache is keyed by
//     content and shared across experiments.
//   - Stage outputs are written by the stage inside the pipeline's temporary
//     directory; files written elsewhere go through internal/atomicfile.
//   - Results other than timings (metrics ending in _seconds) are
//     deterministic for a given configuration at any --jobs.
package stages
