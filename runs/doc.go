// Package runs is the SQLite results store: one file holds every run of
// every experiment, its trials, their parameters, metric series, summary
// values and artifact records.
//
// # Writing
//
// A Store has exactly one writing connection, owned by one writer
// goroutine. Metric, Summary and Artifact only queue a row; the writer
// commits queued rows in transactions of at most 5000 rows or 200 ms,
// whichever comes first, so any number of concurrent producers never see
// "database is locked". Flush waits until everything queued before it is
// committed. A row that cannot be written (e.g. an unknown run id) is
// dropped and recorded: the first such error, with the count of lost rows,
// is sticky and returned by Err, Flush and Close. Queueing never blocks
// past the writer's exit; use after Close records ErrClosed.
//
// CreateRun, FinishRun, SetRunStatus, UpsertTrial(s), RecordTrial,
// MarkStale and the others are synchronous: they run in their own
// transaction on the same writer goroutine, after the rows queued before
// them are committed, and return their own error. If ctx ends while such a
// call waits for the writer, the call returns ctx.Err() but the operation
// may still be applied. RecordTrial writes a finished trial whole (its
// series, summary and status) or not at all.
//
// Re-recording a key replaces the row (upsert), so a resumed run that
// re-emits metrics never duplicates them. Keys: metrics (run_id, trial,
// name, step); summaries (run_id, trial, name); artifacts (run_id, trial,
// path) with trial "" for run-level files; trials (run_id, trial).
//
// Several processes may open the same file: the database is in WAL mode
// with a 10 s busy timeout and write transactions begin IMMEDIATE, so
// writers from different Stores queue for the lock instead of failing. A
// transaction that fails for a reason of the machine (IsInfrastructure: the
// lock held past the busy timeout, a full disk, an I/O error) is rolled back
// and tried again with growing pauses for up to OpenOptions.Wait (default
// DefaultWait, 5 minutes); only then does its error reach the caller (or,
// for queued rows, Err). Commands that only read use OpenReadOnly.
//
// A run's report state (runs.report_state, SetReport: writing, done,
// failed) tells whether its report is complete.
//
// # Run status
//
// runs.status is running, finished (every trial done), failed (ended with
// failed trials, or stopped by a data error) or interrupted (stopped before
// every trial ended). EndStatus derives the end status from the trials;
// ResumeTrials prepares a resumed run (trials still "running" become
// "interrupted"; failed trials keep their status and error unless retried)
// and returns the trials that keep their outcome. Version 2 of the schema
// migrated the old status "done" by the run's trials. OpenExisting opens a
// database only if its file exists (ErrNoDatabase otherwise); OpenReadOnly
// opens an existing one read-only (mode=ro, else immutable on read-only
// media), without migrating, locking or writing anything, for commands
// that only read results.
//
// # Who owns a run
//
// A run's owner is the process that created it or last resumed it: its
// host and pid, when it started (owner_started: on Linux the boot id and
// the start time in clock ticks of /proc/PID/stat; "" on other OSes, where
// the pid alone is checked) and a random token per claim (owner_token).
// CreateRun records it (RunInfo.SetOwner, Self); ClaimRun takes a run over
// in one transaction, refusing with an *OwnedError a local run that is
// running under a live owner (Owner.Liveness: same host, the pid alive and
// started at the recorded time); FinishOwnedRun ends a run only while its
// caller's token is the recorded one (ErrTakenOver otherwise);
// MarkRunInterrupted marks a run only while the owner its caller found
// gone still holds it. An owner on another host cannot be checked
// (OwnerElsewhere); a run of the Slurm executor is adopted by ClaimRun
// whatever its owner.
//
// # Schema and query interface
//
// Tables: schema_version, runs, trial_rows (one row per trial),
// trial_param_rows (one row per trial parameter, value as JSON text),
// metrics, summaries, artifacts, run_tags, run_env (command line, module
// versions, input data digests), trial_output_rows (the files each trial's
// stages wrote in the cache). Migrations are a versioned list applied once
// each, in one transaction, when a Store is opened. Plain SQL should use
// the views:
//
//	series(experiment, run_id, trial, metric, step, value, kind)
//	summary(experiment, run_id, trial, metric, value, kind)
//	trial_params(experiment, run_id, trial, key, value, kind, value_json)
//	trial_status(experiment, run_id, trial, status, error, kind)
//	trial_outputs(experiment, run_id, trial, stage, cache_dir, file, path, sha256, bytes)
//	run_tag_list(experiment, run_id, key, value)
//	trials(experiment, run_id, trial, seq, status, error, seed, params_json,
//	       started_at, ended_at, wall_seconds, log_path, <parameters...>, <metrics...>)
//
// and latest, latest_series, latest_summary, latest_trial_params,
// latest_trial_status for the latest ordinary run of each experiment;
// latest_finished is the latest one that finished (every trial done), and
// latest_finished_trials, _series, _summary and _trial_params its rows.
// trial_params' value is plain (a string without JSON quotes), value_json
// the JSON text. trials_columns maps each column of the wide view to the
// setting or metric it holds (its names need no quoting: lambda_).
// Aggregates computes a run's headline metrics over seeds per variant and
// swept setting (aggregate.go).
//
// trials is wide: one typed column per parameter key (JSON numbers become
// INTEGER or REAL, strings TEXT) and one REAL column per summary metric, so
// that "best trial by test_ll per variant" is one SELECT:
//
//	SELECT variant, name, max(test_ll) FROM trials WHERE run_id = 7 GROUP BY variant
//
// (SQLite takes the bare columns from the row of the max). The Store
// regenerates the view when a new parameter key or metric name is written;
// seq numbers a run's trials in enumeration order from 1.
//
// # Non-finite values
//
// SQLite cannot store NaN (it becomes NULL) but does store infinities. In
// the views, value is the REAL for finite numbers, +Inf/-Inf for
// infinities (SQLite prints them as Inf/-Inf and reads the literals 9e999
// and -9e999 as them, e.g. WHERE value = 9e999), and NULL for NaN. The
// tables metrics and summaries keep a kind column ('finite', 'nan', '+inf',
// '-inf', '-0') next to value, so Summaries and Series return NaN, ±Inf and
// even -0 (which SQLite would store as integer 0) exactly.
//
// A threshold never reached (a censored metric: steps_to_*) is Never,
// +Inf, in every output (never.go says how each format spells it); NaN is
// "no value".
//
// Times are stored as fixed-width UTC RFC 3339 text with nanoseconds
// (sortable as text), NULL for the zero time, and are returned in UTC.
package runs
