// Package slurmexec runs an experiment's trials as a batch back end's
// array job (Scheduler: a Slurm cluster, or worker processes on this
// machine, sweep/procexec; the back ends by name: Register, Lookup): one
// array job whose tasks each run one trial (or, packed with
// Options.TrialsPerTask, several one after another: PackWorker, mapped
// by the submission's packs.<attempt>.json), and a dependent job that
// collects their results into the results database.
//
// Submit (on the submit host) resolves the experiment, creates the run,
// freezes its manifest, the experiments file and the runner binary into
// the run's directory (package batch), and submits the trials that have
// no result yet as `sbatch --array=...`, optionally followed by
// `sbatch --dependency=afterany:<array>` running `runner collect`. The
// stages all trials share (ingest, binning, splits, vocabulary, counts,
// references) go into the content-addressed cache under the shared work
// directory: with Options.SharedJob, when one of them is not cached, as a
// job of their own (`runner worker --shared`, SharedWorker) that the array
// depends on (afterok, --kill-on-invalid-dep=yes); otherwise on the submit
// host, under the cache's entry locks (only cache checks when they are cached).
//
// Worker runs one task: it rebuilds the experiment from the frozen files,
// checks that the configuration hash and the trial id match the manifest,
// runs the trial's stages in a private pipeline workdir whose cache is the
// shared cache, and writes the task's result file. SIGTERM (preemption,
// time limit, scancel) makes it record "interrupted". It never opens the
// results database.
//
// Collect ingests the result files (idempotently) and, once every trial
// has a result, runs the report stage and ends the run; when the shared
// job failed (its array cancelled by Slurm) it ends the run failed,
// naming the job and its log. Re-running the
// submission after a lost node, a cancelled array or a preemption
// resubmits only the trials without a result; RetryFailed adds the failed
// ones. A second submission while the run still has tasks in the queue is
// refused.
package slurmexec
