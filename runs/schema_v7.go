package runs

// schemaV7 adds latest_finished: the latest ordinary run of each
// experiment that finished (every trial done). latest is the latest run
// whatever its state, so while a sweep is running its queries see partial
// results; a query joined with latest_finished sees the last complete
// sweep.
const schemaV7 = `
CREATE VIEW latest_finished (experiment, run_id, status, started_at, ended_at) AS
	SELECT r.experiment, r.id, r.status, r.started_at, r.ended_at
	FROM runs AS r
	WHERE r.kind = 'run' AND r.id = (SELECT max(l.id) FROM runs AS l
		WHERE l.experiment = r.experiment AND l.kind = 'run' AND l.status = 'finished');
`
