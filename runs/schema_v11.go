package runs

// schemaV11 (issue 30, pruning): trial_rows.status allows 'pruned' (a
// trial of a pruned search whose point was stopped at its rung: a result,
// its values are those of its steps), and two columns say where:
// trial_rows.rung (the rung's index, 0 the first) and pruned_at_step (the
// rung's steps), NULL for every other trial. The table is rebuilt as in
// schemaV9 (SQLite cannot alter a CHECK constraint); the views that read
// it are dropped first and made again (the wide `trials` view, which
// gains the two columns, by the Store on Open).
const schemaV11 = `
DROP VIEW IF EXISTS latest_finished_trials;
DROP VIEW IF EXISTS trials;
DROP VIEW IF EXISTS trial_status;
DROP VIEW IF EXISTS latest_trial_status;
CREATE TABLE trial_rows_v11 (
	run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	trial          TEXT    NOT NULL,
	params_json    TEXT    NOT NULL DEFAULT '{}',
	seed           INTEGER NOT NULL DEFAULT 0,
	status         TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'done', 'diverged', 'pruned', 'failed', 'interrupted', 'cached')),
	error          TEXT    NOT NULL DEFAULT '',
	started_at     TEXT,
	ended_at       TEXT,
	wall_seconds   REAL    NOT NULL DEFAULT 0,
	log_path       TEXT    NOT NULL DEFAULT '',
	seq            INTEGER NOT NULL DEFAULT 0,
	rung           INTEGER,
	pruned_at_step INTEGER,
	PRIMARY KEY (run_id, trial)
);
INSERT INTO trial_rows_v11 (run_id, trial, params_json, seed, status, error, started_at, ended_at, wall_seconds, log_path, seq)
	SELECT run_id, trial, params_json, seed, status, error, started_at, ended_at, wall_seconds, log_path, seq FROM trial_rows;
DROP TABLE trial_rows;
ALTER TABLE trial_rows_v11 RENAME TO trial_rows;
CREATE VIEW trial_status (experiment, run_id, trial, status, error, kind) AS
	SELECT r.experiment, t.run_id, t.trial, t.status, t.error, r.kind
	FROM trial_rows AS t JOIN runs AS r ON r.id = t.run_id;
CREATE VIEW latest_trial_status (experiment, run_id, trial, status, error) AS
	SELECT l.experiment, t.run_id, t.trial, t.status, t.error
	FROM trial_rows AS t JOIN latest AS l ON l.run_id = t.run_id;
CREATE VIEW latest_finished_trials AS
	SELECT t.* FROM trials AS t WHERE t.run_id IN (SELECT run_id FROM latest_finished);
`
