package runs

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

func TestExecutorRecords(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.CreateRun(ctx, RunInfo{Experiment: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if e, err := st.Executor(ctx, id); err != nil || e != ExecutorLocal {
		t.Fatalf("new run's executor %q, %v; want local", e, err)
	}
	if err := st.SetExecutor(ctx, id, ExecutorSlurm); err != nil {
		t.Fatal(err)
	}
	if e, _ := st.Executor(ctx, id); e != ExecutorSlurm {
		t.Fatalf("executor %q after SetExecutor(slurm)", e)
	}
	// Which executors exist is the registry's (sweep.RegisterExecutor):
	// the store takes any name of the registry's form, and no other.
	if err := st.SetExecutor(ctx, id, "process"); err != nil {
		t.Errorf("SetExecutor(process): %v", err)
	}
	for _, bad := range []string{"", "Slurm", "pbs jobs", "../x"} {
		if err := st.SetExecutor(ctx, id, bad); err == nil {
			t.Errorf("executor name %q was accepted", bad)
		}
	}
	if err := st.SetExecutor(ctx, id+1, ExecutorSlurm); err == nil {
		t.Error("SetExecutor of a missing run: no error")
	}

	at := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	for _, j := range []SlurmJob{
		{RunID: id, JobID: "12", Role: RoleTrials, Attempt: 1, Array: "0-3%2", Submitted: at},
		{RunID: id, JobID: "13", Role: RoleCollect, Attempt: 1, Submitted: at},
		{RunID: id, JobID: "20", Role: RoleTrials, Attempt: 2, Array: "1,3", Submitted: at.Add(time.Hour)},
	} {
		if err := st.RecordSlurmJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.RecordSlurmJob(ctx, SlurmJob{RunID: id, JobID: "12", Role: RoleTrials, Attempt: 1}); err == nil {
		t.Error("the same job id was recorded twice")
	}
	jobs, err := st.SlurmJobs(ctx, id)
	if err != nil || len(jobs) != 3 || jobs[0].JobID != "12" || jobs[2].Array != "1,3" || !jobs[0].Submitted.Equal(at) {
		t.Fatalf("SlurmJobs = %+v, %v", jobs, err)
	}

	a := Attempt{RunID: id, Trial: "t1", Attempt: 1, Index: 1, JobID: "12_1", Host: "n1", Status: StatusInterrupted,
		Error: "interrupted: SIGTERM", Started: at, Ended: at.Add(time.Minute), WallSeconds: 60}
	if added, err := st.RecordAttempt(ctx, a); err != nil || !added {
		t.Fatalf("RecordAttempt = %v, %v", added, err)
	}
	b := a
	b.Status, b.Error = StatusDone, "" // a changed file for the same attempt does not replace it
	if added, err := st.RecordAttempt(ctx, b); err != nil || added {
		t.Fatalf("second RecordAttempt of the same key = %v, %v; want false, nil", added, err)
	}
	b.Attempt = 2
	if added, err := st.RecordAttempt(ctx, b); err != nil || !added {
		t.Fatalf("RecordAttempt of attempt 2 = %v, %v", added, err)
	}
	got, err := st.Attempts(ctx, id)
	if err != nil || len(got) != 2 || got[0] != a || got[1].Status != StatusDone {
		t.Fatalf("Attempts = %+v, %v", got, err)
	}
	if _, err := st.RecordAttempt(ctx, Attempt{RunID: id, Trial: "t2", Attempt: 1, Status: "bogus"}); err == nil {
		t.Error("an invalid attempt status was accepted")
	}
}

// TestMigrateSlurmJobsShared opens a database of schema version 7, whose
// slurm_jobs refuse the role 'shared', and records a shared job after the
// migration; the jobs recorded before it are kept.
func TestMigrateSlurmJobsShared(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v7.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for v, m := range migrations[:7] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("migration %d: %v", v+1, err)
		}
		if _, err := db.Exec(`INSERT INTO schema_version VALUES (?, ?, '2026-01-01T00:00:00.000000000Z')`, v+1, m.name); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO runs (id, experiment, status, executor) VALUES (3, 'old', 'finished', 'slurm')`,
		`INSERT INTO slurm_jobs (run_id, job_id, role, attempt, array_spec) VALUES (3, '40', 'trials', 1, '0-3')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := db.Exec(`INSERT INTO slurm_jobs (run_id, job_id, role, attempt) VALUES (3, '41', 'shared', 2)`); err == nil {
		t.Fatal("schema 7 accepted the role shared: the test does not test the migration")
	}
	db.Close()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.RecordSlurmJob(ctx, SlurmJob{RunID: 3, JobID: "41", Role: RoleShared, Attempt: 2}); err != nil {
		t.Fatalf("record a shared job after the migration: %v", err)
	}
	jobs, err := st.SlurmJobs(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].JobID != "40" || jobs[0].Role != RoleTrials || jobs[0].Array != "0-3" ||
		jobs[1].JobID != "41" || jobs[1].Role != RoleShared {
		t.Errorf("jobs after the migration: %+v", jobs)
	}
	if err := st.RecordSlurmJob(ctx, SlurmJob{RunID: 3, JobID: "42", Role: "login"}); err == nil {
		t.Error("an unknown role was accepted")
	}
	if _, err := st.DB().ExecContext(ctx, `INSERT INTO slurm_jobs (run_id, job_id, role, attempt) VALUES (3, '43', 'login', 1)`); err == nil {
		t.Error("the rebuilt table lost its CHECK on role")
	}
	// The rebuilt table keeps its foreign key: deleting the run removes its jobs.
	if _, err := st.DeleteRuns(ctx, []int64{3}, false); err != nil {
		t.Fatal(err)
	}
	if n := count(t, st.DB(), `SELECT count(*) FROM slurm_jobs`); n != 0 {
		t.Errorf("slurm_jobs after deleting the run: %d rows", n)
	}
}

// TestMigrateDivergedAndOwner opens a database of schema version 8, whose
// trial rows refuse the status 'diverged' and whose runs have no owner
// columns, and checks that the migration keeps every trial row (and the
// views over them) and accepts both after it.
func TestMigrateDivergedAndOwner(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v8.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for v, m := range migrations[:8] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("migration %d: %v", v+1, err)
		}
		if _, err := db.Exec(`INSERT INTO schema_version VALUES (?, ?, '2026-01-01T00:00:00.000000000Z')`, v+1, m.name); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO runs (id, experiment, status, pid, host) VALUES (3, 'old', 'finished', 77, 'h')`,
		`INSERT INTO trial_rows (run_id, trial, status, error, seq, log_path) VALUES (3, 'a', 'done', '', 1, 'logs/a.log')`,
		`INSERT INTO trial_rows (run_id, trial, status, error, seq) VALUES (3, 'b', 'failed', 'boom', 2)`,
		`INSERT INTO trial_param_rows (run_id, trial, key, value) VALUES (3, 'a', 'lr', '0.5')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := db.Exec(`INSERT INTO trial_rows (run_id, trial, status) VALUES (3, 'c', 'diverged')`); err == nil {
		t.Fatal("schema 8 accepted the status diverged: the test does not test the migration")
	}
	db.Close()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.UpsertTrials(ctx, []Trial{{RunID: 3, ID: "c", Status: StatusDiverged, Error: "step 5: loss 1e+300 past its bound"}}); err != nil {
		t.Fatalf("record a diverged trial after the migration: %v", err)
	}
	got, err := st.TrialStatuses(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": StatusDone, "b": StatusFailed, "c": StatusDiverged}
	if len(got) != len(want) {
		t.Fatalf("trials after the migration: %+v", got)
	}
	for _, tr := range got {
		if tr.Status != want[tr.ID] {
			t.Errorf("trial %s: %s, want %s", tr.ID, tr.Status, want[tr.ID])
		}
	}
	var logPath, lr string
	if err := st.DB().QueryRowContext(ctx, `SELECT log_path, lr FROM trials WHERE run_id = 3 AND trial = 'a'`).Scan(&logPath, &lr); err != nil {
		t.Fatalf("the wide trials view after the migration: %v", err)
	}
	if logPath != "logs/a.log" || lr != "0.5" {
		t.Errorf("trial a in the wide view: log_path %q, lr %q", logPath, lr)
	}
	if n := count(t, st.DB(), `SELECT count(*) FROM trial_status WHERE run_id = 3`); n != 3 {
		t.Errorf("trial_status view: %d rows, want 3", n)
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE trial_rows SET status = 'exploded' WHERE trial = 'a'`); err == nil {
		t.Error("the rebuilt table lost its CHECK on status")
	}
	var tok, started string
	if err := st.DB().QueryRowContext(ctx, `SELECT owner_token, owner_started FROM runs WHERE id = 3`).Scan(&tok, &started); err != nil {
		t.Fatalf("owner columns: %v", err)
	}
	// The rebuilt table keeps its foreign key: deleting the run removes its trials.
	if _, err := st.DeleteRuns(ctx, []int64{3}, false); err != nil {
		t.Fatal(err)
	}
	if n := count(t, st.DB(), `SELECT count(*) FROM trial_rows`); n != 0 {
		t.Errorf("trial_rows after deleting the run: %d rows", n)
	}
}
