package runs

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// migration is one step of the schema history. Migrations are applied in
// order, each exactly once, recorded in schema_version. Never edit a
// released migration: append a new one.
type migration struct {
	name string
	sql  string
}

var migrations = []migration{
	{name: "initial schema", sql: schemaV1},
	{name: "run status finished/failed/interrupted/running, kind in views, latest views", sql: schemaV2},
	{name: "results workflow: run tags, trial outputs and logs, wide trials view", sql: schemaV3},
	{name: "executor: runs.executor, slurm_jobs, trial_attempts", sql: schemaV4},
	{name: "trial_rows.seq: a trial's number in its run", sql: schemaV5},
	{name: "runs.report_state, report_error: a run's report written, failed or unfinished", sql: schemaV6},
	{name: "latest_finished view: the latest finished run of each experiment", sql: schemaV7},
	{name: "slurm_jobs.role 'shared': the job of the stages every trial shares", sql: schemaV8},
	{name: "trial status 'diverged'; runs.owner_token, owner_started: the live owner of a run", sql: schemaV9},
	{name: "plain values in trial_params; latest_finished_trials, _series, _summary, _trial_params; run_pins", sql: schemaV10},
	{name: "trial status 'pruned'; trial_rows.rung, pruned_at_step (pruned searches)", sql: schemaV11},
}

const schemaV1 = `
CREATE TABLE runs (
	id          INTEGER PRIMARY KEY,
	experiment  TEXT    NOT NULL,
	kind        TEXT    NOT NULL DEFAULT 'run' CHECK (kind IN ('run', 'repro')),
	config_json TEXT    NOT NULL DEFAULT '',
	config_hash TEXT    NOT NULL DEFAULT '',
	status      TEXT    NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
	started_at  TEXT,
	ended_at    TEXT,
	git_commit  TEXT    NOT NULL DEFAULT '',
	git_dirty   INTEGER NOT NULL DEFAULT 0 CHECK (git_dirty IN (0, 1)),
	go_version  TEXT    NOT NULL DEFAULT '',
	os          TEXT    NOT NULL DEFAULT '',
	arch        TEXT    NOT NULL DEFAULT '',
	cpu_model   TEXT    NOT NULL DEFAULT '',
	gomaxprocs  INTEGER NOT NULL DEFAULT 0,
	host        TEXT    NOT NULL DEFAULT '',
	pid         INTEGER NOT NULL DEFAULT 0,
	note        TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX runs_by_experiment ON runs (experiment, kind, id);

CREATE TABLE trials (
	run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	trial        TEXT    NOT NULL,
	params_json  TEXT    NOT NULL DEFAULT '{}',
	seed         INTEGER NOT NULL DEFAULT 0,
	status       TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed', 'interrupted', 'cached')),
	error        TEXT    NOT NULL DEFAULT '',
	started_at   TEXT,
	ended_at     TEXT,
	wall_seconds REAL    NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, trial)
);

CREATE TABLE trial_param_rows (
	run_id INTEGER NOT NULL,
	trial  TEXT    NOT NULL,
	key    TEXT    NOT NULL,
	value  TEXT    NOT NULL,
	PRIMARY KEY (run_id, trial, key),
	FOREIGN KEY (run_id, trial) REFERENCES trials (run_id, trial) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE TABLE metrics (
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	trial  TEXT    NOT NULL,
	name   TEXT    NOT NULL,
	step   INTEGER NOT NULL,
	value  REAL,
	kind   TEXT    NOT NULL DEFAULT 'finite' CHECK (kind IN ('finite', 'nan', '+inf', '-inf', '-0')),
	PRIMARY KEY (run_id, trial, name, step)
) WITHOUT ROWID;

CREATE TABLE summaries (
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	trial  TEXT    NOT NULL,
	name   TEXT    NOT NULL,
	value  REAL,
	kind   TEXT    NOT NULL DEFAULT 'finite' CHECK (kind IN ('finite', 'nan', '+inf', '-inf', '-0')),
	PRIMARY KEY (run_id, trial, name)
) WITHOUT ROWID;

CREATE TABLE artifacts (
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	trial  TEXT    NOT NULL DEFAULT '',
	path   TEXT    NOT NULL,
	sha256 TEXT    NOT NULL,
	kind   TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (run_id, trial, path)
) WITHOUT ROWID;

CREATE VIEW series (experiment, run_id, trial, metric, step, value) AS
	SELECT r.experiment, m.run_id, m.trial, m.name, m.step, m.value
	FROM metrics AS m JOIN runs AS r ON r.id = m.run_id;

CREATE VIEW summary (experiment, run_id, trial, metric, value) AS
	SELECT r.experiment, s.run_id, s.trial, s.name, s.value
	FROM summaries AS s JOIN runs AS r ON r.id = s.run_id;

CREATE VIEW trial_params (experiment, run_id, trial, key, value) AS
	SELECT r.experiment, p.run_id, p.trial, p.key, p.value
	FROM trial_param_rows AS p JOIN runs AS r ON r.id = p.run_id;

CREATE VIEW trial_status (experiment, run_id, trial, status, error) AS
	SELECT r.experiment, t.run_id, t.trial, t.status, t.error
	FROM trials AS t JOIN runs AS r ON r.id = t.run_id;
`

// migrate brings the schema up to date in one transaction. The writer
// connection begins transactions IMMEDIATE, so concurrent openers of a
// fresh file serialise here instead of racing to create tables. Foreign
// keys are off during the migration (a migration may rebuild a table that
// others reference; SQLite ignores the pragma inside a transaction) and are
// checked before the commit.
func migrate(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return fmt.Errorf("migrate: foreign keys off: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: create schema_version: %w", err)
	}
	var cur int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&cur); err != nil {
		return fmt.Errorf("migrate: read schema_version: %w", err)
	}
	if cur > len(migrations) {
		return fmt.Errorf("migrate: database schema version %d is newer than this program's %d", cur, len(migrations))
	}
	if cur == len(migrations) {
		return nil
	}
	for v := cur + 1; v <= len(migrations); v++ {
		m := migrations[v-1]
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate: version %d (%s): %w", v, m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)`,
			v, m.name, encodeTime(time.Now())); err != nil {
			return fmt.Errorf("migrate: record version %d: %w", v, err)
		}
	}
	rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return fmt.Errorf("migrate: foreign key check: %w", err)
	}
	bad := rows.Next()
	// Next is false on an error too (a cancelled context, an I/O error):
	// a check that did not run must not pass.
	rerr := rows.Err()
	rows.Close()
	if rerr != nil {
		return fmt.Errorf("migrate: foreign key check: %w", rerr)
	}
	if bad {
		return fmt.Errorf("migrate: foreign key check failed after version %d", len(migrations))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}
