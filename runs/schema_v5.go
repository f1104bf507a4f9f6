package runs

// schemaV5 stores each trial's enumeration number in its run (trial_rows.seq,
// 1, 2, ... in the order the run first recorded its trials) instead of the
// trials view computing it, which made every query of the view read the
// whole table (a window function stops SQLite from flattening the view) or
// cost O(trials²) per run. Existing trials are numbered by rowid, as the
// view numbered them.
const schemaV5 = `
DROP VIEW trials;
ALTER TABLE trial_rows ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE trial_rows SET seq = (SELECT count(*) FROM trial_rows AS u
	WHERE u.run_id = trial_rows.run_id AND u.rowid <= trial_rows.rowid);
CREATE VIEW trials AS SELECT r.experiment AS experiment, t.run_id AS run_id, t.trial AS trial,
	t.seq AS seq, t.status AS status, t.error AS error, t.seed AS seed,
	t.params_json AS params_json, t.started_at AS started_at, t.ended_at AS ended_at, t.wall_seconds AS wall_seconds,
	t.log_path AS log_path
	FROM trial_rows AS t JOIN runs AS r ON r.id = t.run_id;
`
