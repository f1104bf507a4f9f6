// Package batch is the file protocol between a sweep run handed to a batch
// scheduler (Slurm, or worker processes on this machine: sweep/procexec)
// and the host that holds its results database.
//
// At submission the submit host writes a frozen Manifest into the run's
// directory on the shared filesystem: the run id, the experiment, a copy of
// the experiments file and the --set overrides it was resolved from, the
// config hash, and every trial's index, id and resolved settings. Each task
// (one trial, one array index) reads the manifest, runs its trial into the
// shared content-addressed cache and writes one Result file, atomically
// (temporary file and rename): status (done, diverged, failed,
// interrupted), error,
// summary metrics and step-wise series. Compute nodes never open the SQLite
// database: WAL does not work across hosts.
//
// Collect, on the submit host, ingests the result files into the results
// store. It is idempotent: an attempt (run, trial, attempt) is recorded once
// in the trial_attempts table, and collecting again changes nothing. The
// result files are the truth about a trial; the scheduler's queue is a hint
// (see Status).
//
// Layout of a run directory (Dir), under the shared work directory:
//
//	batch/<experiment>/run-<id>/
//	  manifest.json        frozen at the first submission, never rewritten
//	  experiments.toml     the experiments file the run was resolved from
//	  bin/runner.<attempt> the runner binary the tasks of a submission execute
//	                       (a hard link to batch/bin/<sha256 prefix>: one copy per build)
//	  packs.<attempt>.json a packed submission's array tasks and the trial
//	                       indices each runs (--slurm-trials-per-task)
//	  results/<index>.<attempt>.json   (index: the trial's, also when packed)
//	  tasks/<index>/       the task's private pipeline workdir (cache -> shared cache)
//	  logs/                the scheduler's output files
//	  submit.lock          held while submitting
package batch
