package runs

// schemaV2 gives runs a status a script can act on: 'finished' (every
// trial done), 'failed' (ended, some trials failed, or a data error
// stopped it), 'interrupted', 'running'. The old 'done' is migrated by the
// run's trial statuses. SQLite cannot change a CHECK constraint in place, so
// runs is rebuilt (migrate runs it with foreign keys off, and checks them
// before committing). The views gain the run kind, and latest* views give
// the latest ordinary run of each experiment, so that the obvious query is
// the right one.
const schemaV2 = `
DROP VIEW series;
DROP VIEW summary;
DROP VIEW trial_params;
DROP VIEW trial_status;

CREATE TABLE runs_v2 (
	id          INTEGER PRIMARY KEY,
	experiment  TEXT    NOT NULL,
	kind        TEXT    NOT NULL DEFAULT 'run' CHECK (kind IN ('run', 'repro')),
	config_json TEXT    NOT NULL DEFAULT '',
	config_hash TEXT    NOT NULL DEFAULT '',
	status      TEXT    NOT NULL CHECK (status IN ('running', 'finished', 'failed', 'interrupted')),
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
INSERT INTO runs_v2 (id, experiment, kind, config_json, config_hash, status, started_at, ended_at,
	git_commit, git_dirty, go_version, os, arch, cpu_model, gomaxprocs, host, pid, note)
SELECT id, experiment, kind, config_json, config_hash,
	CASE
		WHEN status <> 'done' THEN status
		WHEN EXISTS (SELECT 1 FROM trials AS t WHERE t.run_id = runs.id
			AND t.status IN ('pending', 'running', 'interrupted')) THEN 'interrupted'
		WHEN EXISTS (SELECT 1 FROM trials AS t WHERE t.run_id = runs.id AND t.status = 'failed') THEN 'failed'
		ELSE 'finished'
	END,
	started_at, ended_at, git_commit, git_dirty, go_version, os, arch, cpu_model, gomaxprocs, host, pid, note
FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v2 RENAME TO runs;
CREATE INDEX runs_by_experiment ON runs (experiment, kind, id);

CREATE VIEW series (experiment, run_id, trial, metric, step, value, kind) AS
	SELECT r.experiment, m.run_id, m.trial, m.name, m.step, m.value, r.kind
	FROM metrics AS m JOIN runs AS r ON r.id = m.run_id;

CREATE VIEW summary (experiment, run_id, trial, metric, value, kind) AS
	SELECT r.experiment, s.run_id, s.trial, s.name, s.value, r.kind
	FROM summaries AS s JOIN runs AS r ON r.id = s.run_id;

CREATE VIEW trial_params (experiment, run_id, trial, key, value, kind) AS
	SELECT r.experiment, p.run_id, p.trial, p.key, p.value, r.kind
	FROM trial_param_rows AS p JOIN runs AS r ON r.id = p.run_id;

CREATE VIEW trial_status (experiment, run_id, trial, status, error, kind) AS
	SELECT r.experiment, t.run_id, t.trial, t.status, t.error, r.kind
	FROM trials AS t JOIN runs AS r ON r.id = t.run_id;

CREATE VIEW latest (experiment, run_id, status, started_at, ended_at) AS
	SELECT r.experiment, r.id, r.status, r.started_at, r.ended_at
	FROM runs AS r
	WHERE r.kind = 'run' AND r.id = (SELECT max(l.id) FROM runs AS l WHERE l.experiment = r.experiment AND l.kind = 'run');

CREATE VIEW latest_series (experiment, run_id, trial, metric, step, value) AS
	SELECT l.experiment, m.run_id, m.trial, m.name, m.step, m.value
	FROM metrics AS m JOIN latest AS l ON l.run_id = m.run_id;

CREATE VIEW latest_summary (experiment, run_id, trial, metric, value) AS
	SELECT l.experiment, s.run_id, s.trial, s.name, s.value
	FROM summaries AS s JOIN latest AS l ON l.run_id = s.run_id;

CREATE VIEW latest_trial_params (experiment, run_id, trial, key, value) AS
	SELECT l.experiment, p.run_id, p.trial, p.key, p.value
	FROM trial_param_rows AS p JOIN latest AS l ON l.run_id = p.run_id;

CREATE VIEW latest_trial_status (experiment, run_id, trial, status, error) AS
	SELECT l.experiment, t.run_id, t.trial, t.status, t.error
	FROM trials AS t JOIN latest AS l ON l.run_id = t.run_id;
`
