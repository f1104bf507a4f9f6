package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// stopOutsideWrites stops (SIGSTOP) the runner cmd at a moment it holds no
// write transaction on the database at dbPath, so that other runners are
// not kept waiting for its lock while it is stopped.
func stopOutsideWrites(t *testing.T, cmd *exec.Cmd, dbPath string) {
	t.Helper()
	probe, err := sql.Open("sqlite3", dbPath+"?_busy_timeout=0&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	for range 200 {
		if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		tx, err := probe.Begin() // BEGIN IMMEDIATE: the write lock
		if err == nil {
			tx.Rollback()
			return
		}
		cmd.Process.Signal(syscall.SIGCONT)
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the runner held the database's write lock at every try")
}

// Item 1 of "Failure paths, round 3": a resumed run belongs to the runner
// that resumed it. Killed, then resumed, and stopped (SIGSTOP: alive,
// holding no lock) while it trains: a run of another experiment on the same
// database leaves it running (it used to mark it interrupted, as left by a
// runner that is gone), and a second runner of the same experiment with
// another workdir refuses it in one line naming the run, the host and the
// resuming runner's pid (exit 2), and writes nothing: the run stays
// running, its trials as they were (it used to take the run over and train
// it beside the first). Continued, the resumed runner finishes the run
// alone.
func TestResumedRunHasOneOwner(t *testing.T) {
	e := newEnv(t)
	dbPath := filepath.Join(e.dir, "results.db")
	args := []string{"--experiment", "slow", "--jobs", "1"}
	e.runKilled("train:step@200", append(args, "--quiet")...)
	if s := e.runStatus(1); s != "running" {
		t.Fatalf("the killed runner's run is %s", s)
	}

	cmd := exec.Command(runnerBin, args...)
	cmd.Dir = e.dir
	var out, errs syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	db := e.db()
	// Resumed (its trials prepared) and training a trial again.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		var running int
		if strings.Contains(errs.String(), "resuming run") {
			db.QueryRow(`SELECT count(*) FROM trial_rows WHERE run_id = 1 AND status = 'running'`).Scan(&running)
		}
		if running > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run was not resumed within 2 minutes:\n%s%s", out.String(), errs.String())
		}
	}
	stopOutsideWrites(t, cmd, dbPath)
	var trialsBefore string
	db.QueryRow(`SELECT group_concat(trial || ':' || status || ':' || error, ' ') FROM (SELECT * FROM trial_rows WHERE run_id = 1 ORDER BY trial)`).Scan(&trialsBefore)

	_, otherErrs, code := e.run("--experiment", "small", "--set", "seed=1", "--workdir", "work3", "--quiet")
	if code != 0 || strings.Contains(otherErrs, "left running") {
		t.Errorf("a run of another experiment: exit %d\n%s", code, otherErrs)
	}
	if s := e.runStatus(1); s != "running" {
		t.Errorf("after a run of another experiment: run 1 %s", s)
	}

	host, _ := os.Hostname()
	second, secondErrs, code := e.run(append(args, "--workdir", "work2", "--quiet")...)
	want := fmt.Sprintf("run 1 of slow is in progress (pid %d on %s)", cmd.Process.Pid, host)
	if code != 2 || !strings.Contains(secondErrs, want) || strings.Count(strings.TrimSpace(secondErrs), "\n") != 0 {
		t.Errorf("a second runner on the live resumed run: exit %d, want 2 and the one line %q\n%s%s", code, want, second, secondErrs)
	}
	var trialsAfter string
	db.QueryRow(`SELECT group_concat(trial || ':' || status || ':' || error, ' ') FROM (SELECT * FROM trial_rows WHERE run_id = 1 ORDER BY trial)`).Scan(&trialsAfter)
	if s := e.runStatus(1); s != "running" || trialsAfter != trialsBefore {
		t.Errorf("after the second runner: run 1 %s, trials %s; before %s", s, trialsAfter, trialsBefore)
	}
	if n := e.runsCount(); n != 2 {
		t.Errorf("%d runs after the second runner, want 2 (run 1, and the other experiment's)", n)
	}
	if got := cacheEntries(t, filepath.Join(e.dir, "work2")); len(got) != 0 {
		t.Errorf("the second runner cached %v", got)
	}

	cmd.Process.Signal(syscall.SIGCONT)
	if code := waitExit(t, cmd, 5*time.Minute, "the resumed runner"); code != 0 || !strings.Contains(out.String(), "run 1 resumed and finished: 6 trials: 6 done, 0 failed") {
		t.Fatalf("the resumed runner: exit %d\n%s%s", code, out.String(), errs.String())
	}
	if s := e.runStatus(1); s != "finished" {
		t.Errorf("run 1 ended %s", s)
	}
}

// A pid recycled by a later process is not the owner: a runner killed, its
// pid then taken by another process (here a sleep started after it, the
// run's recorded pid set to it: the start time recorded is the killed
// runner's), the same command resumes the run instead of calling it in
// progress.
func TestRecycledPidIsNotTheOwner(t *testing.T) {
	e := newEnv(t)
	args := []string{"--experiment", "small", "--set", "seed=1", "--jobs", "1", "--quiet"}
	e.runKilled("train:step@50", args...)
	sleep := exec.Command("sleep", "600")
	if err := sleep.Start(); err != nil {
		t.Skipf("no sleep command: %v", err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	if _, err := e.db().Exec(`UPDATE runs SET pid = ? WHERE id = 1`, sleep.Process.Pid); err != nil {
		t.Fatal(err)
	}
	out, errs, code := e.run(args...)
	if code != 0 || !strings.Contains(out, "run 1 resumed and finished") {
		t.Fatalf("the same command after the pid was recycled: exit %d\n%s%s", code, out, errs)
	}
}
