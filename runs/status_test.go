package runs

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// v1Database writes a database at schema version 1 with runs in the old
// statuses, as an older runner left it.
func v1Database(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", path+"?_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{schemaV1,
		`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`,
		`INSERT INTO schema_version VALUES (1, 'initial schema', '2026-01-01T00:00:00.000000000Z')`,
		// 1: all done; 2: done with a failed trial; 3: 'done' but its trials
		// never ran (the empty run of two racing runners); 4: data error;
		// 5: interrupted; 6: running; 7: done without trials.
		`INSERT INTO runs (id, experiment, status) VALUES (1, 'e', 'done'), (2, 'e', 'done'), (3, 'e', 'done'),
			(4, 'e', 'failed'), (5, 'e', 'interrupted'), (6, 'e', 'running'), (7, 'f', 'done')`,
		`INSERT INTO trials (run_id, trial, status, error) VALUES (1, 'a', 'done', ''), (1, 'b', 'cached', ''),
			(2, 'a', 'done', ''), (2, 'b', 'failed', 'diverged'), (3, 'a', 'pending', ''), (3, 'b', 'pending', ''),
			(5, 'a', 'interrupted', 'interrupted')`,
		`INSERT INTO metrics (run_id, trial, name, step, value) VALUES (1, 'a', 'loss', 0, 1.5), (2, 'b', 'loss', 0, 2.5)`,
		`INSERT INTO summaries (run_id, trial, name, value) VALUES (1, 'a', 'best', 1.5)`,
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path
}

func TestMigrateOldRunStatuses(t *testing.T) {
	ctx := context.Background()
	path := v1Database(t)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs, err := s.Runs(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	for _, r := range rs {
		got[r.ID] = r.Status
	}
	want := map[int64]string{1: StatusFinished, 2: StatusFailed, 3: StatusInterrupted, 4: StatusFailed, 5: StatusInterrupted, 6: StatusRunning, 7: StatusFinished}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("migrated statuses %v, want %v", got, want)
	}
	// Rebuilding runs must not cascade into the rows that reference it.
	var trials, metrics, sums int
	s.DB().QueryRow(`SELECT count(*) FROM trial_status`).Scan(&trials)
	s.DB().QueryRow(`SELECT count(*) FROM series`).Scan(&metrics)
	s.DB().QueryRow(`SELECT count(*) FROM summary`).Scan(&sums)
	if trials != 7 || metrics != 2 || sums != 1 {
		t.Errorf("after migration: %d trials, %d metric rows, %d summaries; want 7, 2, 1", trials, metrics, sums)
	}
	// Foreign keys are on again and still enforced.
	if err := s.UpsertTrial(ctx, Trial{RunID: 99, ID: "x", Status: StatusPending}); err == nil {
		t.Error("a trial of a missing run was accepted after the migration")
	}
	if err := s.FinishRun(ctx, 6, StatusFinished, ""); err != nil {
		t.Errorf("finish a migrated run: %v", err)
	}
	if _, err := s.DB().Exec(`SELECT 1`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Reopening applies nothing twice.
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
}

func TestEndStatus(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	for _, tc := range []struct {
		trials []string
		want   string
	}{
		{[]string{StatusDone, StatusCached}, StatusFinished},
		{[]string{StatusDone, StatusDiverged}, StatusFinished},
		{[]string{StatusDiverged, StatusFailed}, StatusFailed},
		{[]string{StatusDiverged, StatusPending}, StatusInterrupted},
		{[]string{StatusDone, StatusFailed}, StatusFailed},
		{[]string{StatusFailed, StatusFailed}, StatusFailed},
		{[]string{StatusDone, StatusPending}, StatusInterrupted},
		{[]string{StatusFailed, StatusRunning}, StatusInterrupted},
		{[]string{StatusInterrupted}, StatusInterrupted},
		{nil, StatusFinished},
	} {
		run := mustRun(t, s, "e")
		for i, st := range tc.trials {
			if err := s.UpsertTrial(ctx, Trial{RunID: run, ID: string(rune('a' + i)), Status: st}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.EndStatus(ctx, run)
		if err != nil || got != tc.want {
			t.Errorf("EndStatus with trials %v = %q, %v; want %q", tc.trials, got, err, tc.want)
		}
		if err := s.FinishRun(ctx, run, got, ""); err != nil {
			t.Errorf("FinishRun(%s): %v", got, err)
		}
	}
	if !Ended(StatusFinished) || !Ended(StatusFailed) || Ended(StatusInterrupted) || Ended(StatusRunning) {
		t.Error("Ended")
	}
}

func TestResumeTrialsKeepsFailures(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := mustRun(t, s, "e")
	for _, tr := range []Trial{
		{RunID: run, ID: "done", Status: StatusDone},
		{RunID: run, ID: "diverged", Status: StatusDiverged, Error: "diverged at step 9: psi 1e+200 past its bound 1e+06"},
		{RunID: run, ID: "failed", Status: StatusFailed, Error: "train: open: no such file"},
		{RunID: run, ID: "running", Status: StatusRunning},
		{RunID: run, ID: "pending", Status: StatusPending},
		{RunID: run, ID: "interrupted", Status: StatusInterrupted, Error: "interrupted"},
	} {
		if err := s.UpsertTrial(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	keep, err := s.ResumeTrials(ctx, run, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"done": StatusDone, "diverged": StatusDiverged, "failed": StatusFailed}; !reflect.DeepEqual(keep, want) {
		t.Errorf("keep %v, want %v", keep, want)
	}
	status := func() map[string][2]string {
		ts, err := s.Trials(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string][2]string{}
		for _, tr := range ts {
			m[tr.ID] = [2]string{tr.Status, tr.Error}
		}
		return m
	}
	got := status()
	if got["failed"] != [2]string{StatusFailed, "train: open: no such file"} || got["running"][0] != StatusInterrupted {
		t.Errorf("after resume: %v", got)
	}
	keep, err = s.ResumeTrials(ctx, run, true)
	if err != nil {
		t.Fatal(err)
	}
	// A divergence is deterministic: --retry-failed does not run it again.
	if want := map[string]string{"done": StatusDone, "diverged": StatusDiverged}; !reflect.DeepEqual(keep, want) {
		t.Errorf("keep with retry %v, want %v", keep, want)
	}
	if got := status(); got["failed"] != [2]string{StatusPending, ""} {
		t.Errorf("failed trial after a retry resume: %v", got["failed"])
	}
}

func TestOpenExistingRefusesMissingFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "results.db")
	if _, err := OpenExisting(ctx, path); !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("OpenExisting of a missing file: %v, want ErrNoDatabase", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("OpenExisting created %s", filepath.Dir(path))
	}
	if _, err := OpenExisting(ctx, dir); err == nil {
		t.Error("OpenExisting of a directory succeeded")
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = OpenExisting(ctx, path)
	if err != nil {
		t.Fatalf("OpenExisting of an existing database: %v", err)
	}
	s.Close()
}

func TestLatestViews(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	old := mustRun(t, s, "e")
	cur := mustRun(t, s, "e")
	repro, err := s.CreateRun(ctx, RunInfo{Experiment: "e", Kind: KindRepro})
	if err != nil {
		t.Fatal(err)
	}
	other := mustRun(t, s, "f")
	// The same trial id in every run, as a trial id repeats across runs.
	for i, run := range []int64{old, cur, repro, other} {
		if err := s.UpsertTrial(ctx, Trial{RunID: run, ID: "t", Status: StatusDone, Params: map[string]string{"seed": "1"}}); err != nil {
			t.Fatal(err)
		}
		s.Metric(run, "t", "psi", 0, float64(i))
		s.Metric(run, "t", "psi", 1, float64(i))
		s.Summary(run, "t", "best", float64(i))
	}
	mustFlush(t, s)
	_, rows := queryAll(t, s.DB(), `SELECT experiment, run_id FROM latest ORDER BY experiment`)
	if want := [][]string{{"e", "2"}, {"f", "4"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("latest = %v, want %v", rows, want)
	}
	_, rows = queryAll(t, s.DB(), `SELECT step, value FROM latest_series WHERE experiment = 'e' AND trial = 't' AND metric = 'psi' ORDER BY step`)
	if want := [][]string{{"0", "1"}, {"1", "1"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("latest_series psi of t = %v, want %v (the current run's only)", rows, want)
	}
	_, rows = queryAll(t, s.DB(), `SELECT count(*) FROM summary WHERE experiment = 'e' AND kind = 'run'`)
	if rows[0][0] != "2" {
		t.Errorf("summary rows of kind run: %v, want 2 (the repro run excluded)", rows)
	}
	for _, v := range []string{"latest_summary", "latest_trial_params", "latest_trial_status"} {
		_, rows = queryAll(t, s.DB(), `SELECT count(*), min(run_id) FROM `+v+` WHERE experiment = 'e'`)
		if rows[0][0] != "1" || rows[0][1] != "2" {
			t.Errorf("%s: %v, want one row of run 2", v, rows)
		}
	}
}
