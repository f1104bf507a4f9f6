package runs

// schemaV6 records the state of a run's report: "" (none asked for, or a
// run recorded before this version), "writing" (begun: a runner killed
// while copying the report or writing its HTML page leaves it so),
// "done" or "failed" (with report_error). A finished run whose report is
// not "done" is not up to date: the next run of the same command rebuilds
// the report, and `runner report --run ID` rebuilds it on demand.
const schemaV6 = `
ALTER TABLE runs ADD COLUMN report_state TEXT NOT NULL DEFAULT ''
	CHECK (report_state IN ('', 'writing', 'done', 'failed'));
ALTER TABLE runs ADD COLUMN report_error TEXT NOT NULL DEFAULT '';
`
