package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"
)

// holdLock takes the database's write lock from a second connection (as
// another process would with BEGIN IMMEDIATE) and releases it after d.
func holdLock(t *testing.T, path string, d time.Duration) (released <-chan struct{}) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		time.Sleep(d)
		conn.ExecContext(context.Background(), "COMMIT")
		conn.Close()
		db.Close()
		close(done)
	}()
	t.Cleanup(func() { <-done })
	return done
}

// shortBusy makes SQLite's busy handler give up after d, so that a lock
// longer than d exercises the Store's own retries.
func shortBusy(t *testing.T, d time.Duration) {
	old := busyTimeout
	busyTimeout = d
	t.Cleanup(func() { busyTimeout = old })
}

func openWait(t *testing.T, path string, wait time.Duration) *Store {
	t.Helper()
	s, err := OpenWith(context.Background(), path, OpenOptions{Wait: wait})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A lock held longer than SQLite's busy timeout delays every kind of
// write, and fails none (issue 19, item 1: a 30 s lock failed trials).
func TestWritesOutlastALock(t *testing.T) {
	shortBusy(t, 100*time.Millisecond)
	_, path := openTemp(t)
	s := openWait(t, path, time.Minute)
	ctx := context.Background()
	run := mustRun(t, s, "lock")

	holdLock(t, path, time.Second)
	start := time.Now()
	if _, err := s.CreateRun(ctx, RunInfo{Experiment: "lock2"}); err != nil {
		t.Fatalf("CreateRun under a lock: %v", err)
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Fatalf("the lock was not held (CreateRun took %v)", waited)
	}

	holdLock(t, path, time.Second)
	series := []MetricPoint{{"loss", 0, 3}, {"loss", 1, 2}}
	if err := s.RecordTrial(ctx, Trial{RunID: run, ID: "t1", Status: StatusDone, Params: map[string]string{"lr": "0.5"}}, series, map[string]float64{"final": 2}); err != nil {
		t.Fatalf("RecordTrial under a lock: %v", err)
	}

	holdLock(t, path, time.Second)
	for i := range 100 {
		s.Metric(run, "t2", "loss", i, float64(i))
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("batched rows under a lock: %v", err)
	}
	if n := count(t, s.DB(), `SELECT count(*) FROM metrics WHERE run_id = ?`, run); n != 102 {
		t.Errorf("%d metric rows, want 102", n)
	}
}

// Past its wait a write fails with an error IsInfrastructure knows, and a
// trial's record is all or nothing.
func TestRecordTrialGivesUpWhole(t *testing.T) {
	shortBusy(t, 50*time.Millisecond)
	_, path := openTemp(t)
	s := openWait(t, path, 300*time.Millisecond)
	ctx := context.Background()
	run := mustRun(t, s, "lock")
	released := holdLock(t, path, 1500*time.Millisecond)
	series := make([]MetricPoint, 5000)
	for i := range series {
		series[i] = MetricPoint{"loss", i, float64(i)}
	}
	err := s.RecordTrial(ctx, Trial{RunID: run, ID: "t1", Status: StatusDone}, series, map[string]float64{"final": 1})
	if err == nil || !IsInfrastructure(err) {
		t.Fatalf("RecordTrial past its wait: %v, want an infrastructure error", err)
	}
	<-released
	if n := count(t, s.DB(), `SELECT count(*) FROM metrics`); n != 0 {
		t.Errorf("%d metric rows of a trial whose record failed", n)
	}
	if n := count(t, s.DB(), `SELECT count(*) FROM trial_rows`); n != 0 {
		t.Errorf("%d trial rows of a trial whose record failed", n)
	}
	// Recorded again (the next run, from the cache): whole, once.
	if err := s.RecordTrial(ctx, Trial{RunID: run, ID: "t1", Status: StatusDone}, series, map[string]float64{"final": 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordTrial(ctx, Trial{RunID: run, ID: "t1", Status: StatusDone}, series[:10], map[string]float64{"final": 1}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s.DB(), `SELECT count(*) FROM metrics`); n != 10 {
		t.Errorf("%d metric rows after recording 10 points again, want 10 (the record replaces the trial's series)", n)
	}
}

func TestIsInfrastructure(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("diverged"), false},
		{fmt.Errorf("record: %w", sqlite3.Error{Code: sqlite3.ErrBusy}), true},
		{sqlite3.Error{Code: sqlite3.ErrFull}, true},
		{sqlite3.Error{Code: sqlite3.ErrConstraint}, false},
		{fmt.Errorf("write x: %w", syscall.ENOSPC), true},
		{fmt.Errorf("write x: %w", syscall.EIO), true},
		{syscall.ENOENT, false},
	} {
		if got := IsInfrastructure(tt.err); got != tt.want {
			t.Errorf("IsInfrastructure(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestReadOnlyIsNotRetried: an error of a database that cannot be written
// at all (SQLITE_READONLY, SQLITE_CANTOPEN, EROFS, a ReadOnlyError) is a
// machine error (the trial it hits is interrupted, not failed) that no
// wait cures: retry returns it after one attempt, however long --db-wait.
// A lock is still retried. Before, a read-only database was retried for
// the whole wait, once per write.
func TestReadOnlyIsNotRetried(t *testing.T) {
	for _, tt := range []struct {
		err       error
		retryable bool
	}{
		{fmt.Errorf("record: %w", sqlite3.Error{Code: sqlite3.ErrBusy}), true},
		{sqlite3.Error{Code: sqlite3.ErrFull}, true},
		{fmt.Errorf("set report: %w", sqlite3.Error{Code: sqlite3.ErrReadonly}), false},
		{sqlite3.Error{Code: sqlite3.ErrCantOpen}, false},
		{fmt.Errorf("write x: %w", syscall.EROFS), false},
		{&ReadOnlyError{Path: "results.db", Why: "the file is not writable (file mode)", Err: syscall.EACCES}, false},
	} {
		if !IsInfrastructure(tt.err) {
			t.Errorf("IsInfrastructure(%v) = false, want true", tt.err)
		}
		if got := Retryable(tt.err); got != tt.retryable {
			t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.retryable)
		}
		if tt.retryable {
			continue
		}
		attempts := 0
		start := time.Now()
		err := retry(context.Background(), time.Minute, func() error { attempts++; return tt.err })
		if err != tt.err || attempts != 1 || time.Since(start) > 5*time.Second {
			t.Errorf("retry of %v: %d attempts in %v, %v; want one, at once", tt.err, attempts, time.Since(start), err)
		}
	}
}
