// Package sweep runs experiments and records them: it opens (or resumes)
// a run in the results store, hands the run's trials to an Executor, and
// records every trial's status, series, summary and outputs and the
// report's files.
//
// Where things are:
//   - run.go: Execute, the one path of every run: the up-to-date check,
//     resuming, the run's record, then the executor.
//   - executor.go: the Executor seam and the local executor.
//   - backends.go: the executor registry (RegisterExecutor, Detached).
//   - gc.go, gcfiles.go: gc's claims and crash-safe deletion (GC).
//   - recorder.go: what turns pipeline events into rows of the store.
//   - rebuild.go: a run's report, written again (or, for an executor whose
//     trials ran elsewhere, for the first time) from its recorded results.
//   - repro.go: Compare and MatchByName, the comparison behind repro.
//   - resume.go, triallog.go, outputs.go, observe.go: the pieces of a run.
//
// Executors: Local runs the trials' graph on this machine; the batch
// executor (sweep/slurmexec) submits them as an array job of a back end
// (Slurm, or worker processes here: sweep/procexec) whose tasks run one
// trial each and are collected later. All go through Execute, so a run
// reads the same in the store whichever ran it.
//
// Invariants:
//   - Runners share a workdir (the cache's entry locks); a run has one
//     owner: a runner refused because a live runner runs the same
//     configuration writes nothing to the store.
//   - A run ends finished (every trial done), failed (a trial failed, or a
//     data error) or interrupted (cancelled, or the machine failed: the
//     same command resumes it).
//   - A trial is recorded whole (runs.Store.RecordTrial) or not at all.
package sweep
