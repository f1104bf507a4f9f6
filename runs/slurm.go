package runs

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"time"
)

// schemaV4 records how a run was executed: the runs table gains an
// executor column ('local' or 'slurm'); slurm_jobs lists the Slurm jobs a
// run submitted (the trials' array jobs and the dependent collect jobs), and
// trial_attempts one row per collected task attempt, keyed by (run, trial,
// attempt), so that collecting the same result files twice changes nothing.
const schemaV4 = `
ALTER TABLE runs ADD COLUMN executor TEXT NOT NULL DEFAULT 'local';

CREATE TABLE slurm_jobs (
	run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	job_id       TEXT    NOT NULL,
	role         TEXT    NOT NULL CHECK (role IN ('trials', 'collect')),
	attempt      INTEGER NOT NULL,
	array_spec   TEXT    NOT NULL DEFAULT '',
	submitted_at TEXT,
	PRIMARY KEY (run_id, job_id)
) WITHOUT ROWID;

CREATE TABLE trial_attempts (
	run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	trial        TEXT    NOT NULL,
	attempt      INTEGER NOT NULL,
	array_index  INTEGER NOT NULL,
	job_id       TEXT    NOT NULL DEFAULT '',
	host         TEXT    NOT NULL DEFAULT '',
	status       TEXT    NOT NULL CHECK (status IN ('done', 'failed', 'interrupted')),
	error        TEXT    NOT NULL DEFAULT '',
	started_at   TEXT,
	ended_at     TEXT,
	wall_seconds REAL    NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, trial, attempt)
) WITHOUT ROWID;
`

// Executors (runs.executor): the column's default, and the Slurm back
// end's name. Which names exist, and what they mean, is the executor
// registry's (sweep.RegisterExecutor): the store only checks their form.
const (
	ExecutorLocal = "local"
	ExecutorSlurm = "slurm"
)

// executorName is the form of an executor's name.
var executorName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// SetExecutor records how a run's trials are executed.
func (s *Store) SetExecutor(ctx context.Context, runID int64, executor string) error {
	if !executorName.MatchString(executor) {
		return fmt.Errorf("set executor of run %d: invalid executor %q", runID, executor)
	}
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET executor = ? WHERE id = ?`, executor, runID)
		return affected(res, err)
	})
	if err != nil {
		return fmt.Errorf("set executor of run %d: %w", runID, err)
	}
	return nil
}

// Executor returns how a run's trials are executed.
func (s *Store) Executor(ctx context.Context, runID int64) (string, error) {
	var e string
	err := s.r.QueryRowContext(ctx, `SELECT executor FROM runs WHERE id = ?`, runID).Scan(&e)
	if err == sql.ErrNoRows {
		return "", fmt.Errorf("run %d: %w", runID, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("executor of run %d: %w", runID, err)
	}
	return e, nil
}

// Slurm job roles (slurm_jobs.role).
const (
	RoleShared  = "shared"  // the job that runs the stages every trial shares, before the array
	RoleTrials  = "trials"  // the array job of a submission's trials
	RoleCollect = "collect" // the dependent job that collects the results
)

// SlurmJob is one Slurm job a run submitted.
type SlurmJob struct {
	RunID     int64
	JobID     string
	Role      string // RoleShared, RoleTrials or RoleCollect
	Attempt   int    // the submission it belongs to, from 1
	Array     string // sbatch --array value of a trials job
	Submitted time.Time
}

// RecordSlurmJob records a submitted job.
func (s *Store) RecordSlurmJob(ctx context.Context, j SlurmJob) error {
	if j.Role != RoleShared && j.Role != RoleTrials && j.Role != RoleCollect {
		return fmt.Errorf("record slurm job %s of run %d: invalid role %q", j.JobID, j.RunID, j.Role)
	}
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO slurm_jobs (run_id, job_id, role, attempt, array_spec, submitted_at)
			VALUES (?, ?, ?, ?, ?, ?)`, j.RunID, j.JobID, j.Role, j.Attempt, j.Array, encodeTime(j.Submitted))
		return err
	})
	if err != nil {
		return fmt.Errorf("record slurm job %s of run %d: %w", j.JobID, j.RunID, err)
	}
	return nil
}

// SlurmJobs returns a run's jobs in submission order.
func (s *Store) SlurmJobs(ctx context.Context, runID int64) ([]SlurmJob, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT job_id, role, attempt, array_spec, submitted_at FROM slurm_jobs
		WHERE run_id = ? ORDER BY attempt, submitted_at, CAST(job_id AS INTEGER)`, runID)
	if err != nil {
		return nil, fmt.Errorf("slurm jobs of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []SlurmJob
	for rows.Next() {
		j := SlurmJob{RunID: runID}
		var at sql.NullString
		if err := rows.Scan(&j.JobID, &j.Role, &j.Attempt, &j.Array, &at); err != nil {
			return nil, fmt.Errorf("slurm jobs of run %d: %w", runID, err)
		}
		if j.Submitted, err = decodeTime(at); err != nil {
			return nil, fmt.Errorf("slurm job %s: %w", j.JobID, err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("slurm jobs of run %d: %w", runID, err)
	}
	return out, nil
}

// Attempt is one collected task attempt of a trial.
type Attempt struct {
	RunID       int64
	Trial       string
	Attempt     int
	Index       int // array index
	JobID       string
	Host        string
	Status      string // done, failed or interrupted
	Error       string
	Started     time.Time
	Ended       time.Time
	WallSeconds float64
}

// RecordAttempt records a collected attempt once: it reports false, and
// changes nothing, when (run, trial, attempt) is already recorded.
func (s *Store) RecordAttempt(ctx context.Context, a Attempt) (bool, error) {
	var added bool
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO trial_attempts (run_id, trial, attempt, array_index, job_id, host,
			status, error, started_at, ended_at, wall_seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id, trial, attempt) DO NOTHING`,
			a.RunID, a.Trial, a.Attempt, a.Index, a.JobID, a.Host, a.Status, a.Error,
			encodeTime(a.Started), encodeTime(a.Ended), a.WallSeconds)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		added = n > 0
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record attempt %d of trial %q of run %d: %w", a.Attempt, a.Trial, a.RunID, err)
	}
	return added, nil
}

// Attempts returns a run's collected attempts by trial and attempt.
func (s *Store) Attempts(ctx context.Context, runID int64) ([]Attempt, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT trial, attempt, array_index, job_id, host, status, error,
		started_at, ended_at, wall_seconds FROM trial_attempts WHERE run_id = ? ORDER BY trial, attempt`, runID)
	if err != nil {
		return nil, fmt.Errorf("attempts of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		a := Attempt{RunID: runID}
		var st, en sql.NullString
		if err := rows.Scan(&a.Trial, &a.Attempt, &a.Index, &a.JobID, &a.Host, &a.Status, &a.Error, &st, &en, &a.WallSeconds); err != nil {
			return nil, fmt.Errorf("attempts of run %d: %w", runID, err)
		}
		if a.Started, err = decodeTime(st); err != nil {
			return nil, err
		}
		if a.Ended, err = decodeTime(en); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("attempts of run %d: %w", runID, err)
	}
	return out, nil
}
