package runs

// schemaV3 adds what working with results needs: run tags, the run's
// environment beyond the runs columns (command line, module versions,
// digests of the input data), each trial's
// output files (stage, cache directory, file, sha256), a per-trial log
// file, and the wide typed `trials` view.
//
// The trials table becomes trial_rows (like trial_param_rows) so that the
// name `trials` is free for the wide view; SQLite renames the references in
// trial_param_rows and trial_status with it. rowid of trial_rows is the
// order in which a run's trials were first recorded, i.e. their
// enumeration order; the trials view numbers a run's trials in that order
// from 1 as seq.
//
// The `trials` view created here has only the fixed columns (v5 changes
// them; this text is frozen as released): the Store regenerates it with one column per parameter key and summary metric
// whenever a new key or metric name is recorded (see wideview.go).
const schemaV3 = `
ALTER TABLE trials RENAME TO trial_rows;
ALTER TABLE trial_rows ADD COLUMN log_path TEXT NOT NULL DEFAULT '';

CREATE TABLE run_tags (
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	key    TEXT    NOT NULL,
	value  TEXT    NOT NULL,
	PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE INDEX run_tags_by_key ON run_tags (key, value);

CREATE TABLE run_env (
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	key    TEXT    NOT NULL,
	value  TEXT    NOT NULL,
	PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

CREATE TABLE trial_output_rows (
	run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	trial     TEXT    NOT NULL,
	stage     TEXT    NOT NULL,
	cache_dir TEXT    NOT NULL,
	file      TEXT    NOT NULL,
	sha256    TEXT    NOT NULL,
	bytes     INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, trial, stage, file)
) WITHOUT ROWID;
CREATE INDEX trial_outputs_by_dir ON trial_output_rows (cache_dir);

CREATE VIEW trial_outputs (experiment, run_id, trial, stage, cache_dir, file, path, sha256, bytes) AS
	SELECT r.experiment, o.run_id, o.trial, o.stage, o.cache_dir, o.file,
		o.cache_dir || '/' || o.file, o.sha256, o.bytes
	FROM trial_output_rows AS o JOIN runs AS r ON r.id = o.run_id;

CREATE VIEW run_tag_list (experiment, run_id, key, value) AS
	SELECT r.experiment, g.run_id, g.key, g.value
	FROM run_tags AS g JOIN runs AS r ON r.id = g.run_id;

CREATE VIEW trials AS SELECT r.experiment AS experiment, t.run_id AS run_id, t.trial AS trial,
	row_number() OVER (PARTITION BY t.run_id ORDER BY t.rowid) AS seq, t.status AS status, t.error AS error, t.seed AS seed,
	t.params_json AS params_json, t.started_at AS started_at, t.ended_at AS ended_at, t.wall_seconds AS wall_seconds,
	t.log_path AS log_path
	FROM trial_rows AS t JOIN runs AS r ON r.id = t.run_id;
`
