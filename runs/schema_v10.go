package runs

// schemaV10 is for plain SQL, pandas, polars and DuckDB:
//
//   - trial_params and latest_trial_params give value as a plain value (a
//     string setting is gd, not "gd"; numbers are numbers; lists stay JSON
//     text) and the JSON text as value_json.
//   - latest_finished_trials, latest_finished_series,
//     latest_finished_summary and latest_finished_trial_params: the
//     latest_* views of the latest run of each experiment that finished (a
//     run in progress excluded). latest_finished_trials is the wide trials
//     view's rows of those runs, with its columns as they are when queried.
//   - run_pins: the runs gc never deletes (runner pin, unpin).
const schemaV10 = `
CREATE TABLE run_pins (
	run_id    INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	pinned_at TEXT    NOT NULL
);
DROP VIEW IF EXISTS trial_params;
DROP VIEW IF EXISTS latest_trial_params;
CREATE VIEW trial_params (experiment, run_id, trial, key, value, kind, value_json) AS
	SELECT r.experiment, p.run_id, p.trial, p.key, json_extract(p.value, '$'), r.kind, p.value
	FROM trial_param_rows AS p JOIN runs AS r ON r.id = p.run_id;
CREATE VIEW latest_trial_params (experiment, run_id, trial, key, value, value_json) AS
	SELECT l.experiment, p.run_id, p.trial, p.key, json_extract(p.value, '$'), p.value
	FROM trial_param_rows AS p JOIN latest AS l ON l.run_id = p.run_id;
CREATE VIEW latest_finished_series (experiment, run_id, trial, metric, step, value) AS
	SELECT l.experiment, m.run_id, m.trial, m.name, m.step, m.value
	FROM metrics AS m JOIN latest_finished AS l ON l.run_id = m.run_id;
CREATE VIEW latest_finished_summary (experiment, run_id, trial, metric, value) AS
	SELECT l.experiment, s.run_id, s.trial, s.name, s.value
	FROM summaries AS s JOIN latest_finished AS l ON l.run_id = s.run_id;
CREATE VIEW latest_finished_trial_params (experiment, run_id, trial, key, value, value_json) AS
	SELECT l.experiment, p.run_id, p.trial, p.key, json_extract(p.value, '$'), p.value
	FROM trial_param_rows AS p JOIN latest_finished AS l ON l.run_id = p.run_id;
CREATE VIEW latest_finished_trials AS
	SELECT t.* FROM trials AS t WHERE t.run_id IN (SELECT run_id FROM latest_finished);
`
