package runs

// schemaV8 allows the role 'shared' in slurm_jobs: the job that runs the
// stages every trial shares (ingest, binning, ...) before a submission's
// array. SQLite cannot alter a CHECK constraint, so the table is rebuilt
// (in the migration's one transaction) with its rows copied.
const schemaV8 = `
CREATE TABLE slurm_jobs_v8 (
	run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	job_id       TEXT    NOT NULL,
	role         TEXT    NOT NULL CHECK (role IN ('shared', 'trials', 'collect')),
	attempt      INTEGER NOT NULL,
	array_spec   TEXT    NOT NULL DEFAULT '',
	submitted_at TEXT,
	PRIMARY KEY (run_id, job_id)
) WITHOUT ROWID;
INSERT INTO slurm_jobs_v8 (run_id, job_id, role, attempt, array_spec, submitted_at)
	SELECT run_id, job_id, role, attempt, array_spec, submitted_at FROM slurm_jobs;
DROP TABLE slurm_jobs;
ALTER TABLE slurm_jobs_v8 RENAME TO slurm_jobs;
`
