package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The process back end (--executor process) runs the Slurm executor's
// behaviour tests here, without a cluster: the same results as a local
// run, status, collect once, a killed submitter adopted by the same
// command, and a killed worker and a cancelled run resumed from their
// checkpoints.

// procJob is what the tests read of the process back end's record of a
// job (sweep/procexec: <workdir>/batch/procs/<id>.json).
type procJob struct {
	Tasks []struct {
		Index int `json:"index"`
		PID   int `json:"pid"`
	} `json:"tasks"`
}

func readProcJob(t *testing.T, e *env, id string) *procJob {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, "work", "batch", "procs", id+".json"))
	if err != nil {
		return nil
	}
	var j procJob
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatalf("process job %s: %v", id, err)
	}
	return &j
}

// waitPID waits until task index of process job id has a process, and
// returns its pid.
func waitPID(t *testing.T, e *env, id string, index int, d time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if j := readProcJob(t, e, id); j != nil {
			for _, tk := range j.Tasks {
				if tk.Index == index && tk.PID > 0 {
					return tk.PID
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %d of process job %s started no process in %v", index, id, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits until process pid has exited (it is no child of the
// test: its runner was killed, or its end was reaped by its runner).
func waitGone(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for syscall.Kill(pid, 0) == nil {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(b), ") Z ") {
			return // a zombie: its runner is gone and init has not reaped it yet
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker pid %d still runs after %v", pid, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var processSubmitted = regexp.MustCompile(`run (\d+) (?:submitted|resumed[^:]*): (\d+) of (\d+) trials as process job (\d+) \(array ([^,]+),`)

// attemptsPerTrial is how many task executions the database recorded per
// trial of run, as "trial:count ...".
func attemptsPerTrial(t *testing.T, e *env, run string) string {
	t.Helper()
	var s string
	e.db().QueryRow(`SELECT group_concat(n, ' ') FROM (SELECT count(*) AS n FROM trial_attempts WHERE run_id = ? GROUP BY trial ORDER BY trial)`, run).Scan(&s)
	return s
}

func TestProcessExecutorMatchesLocal(t *testing.T) {
	e := newEnv(t)
	set := []string{"--experiment", "small", "--set", "steps=200", "--jobs", "2"}
	e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork")...)
	local := resultsOf(t, e, "local.db", "1")

	out := e.mustRun(0, append(set, "--executor", "process", "--slurm-poll", "100ms")...)
	m := processSubmitted.FindStringSubmatch(out)
	if m == nil || m[2] != "6" || m[5] != "0-5" {
		t.Fatalf("submission: %q\n%s", m, out)
	}
	if !strings.Contains(out, "6 trials: 6 done") || !strings.Contains(out, "run 1 finished") {
		t.Fatalf("waiting submit:\n%s", out)
	}
	if got := resultsOf(t, e, "results.db", "1"); got != local {
		t.Fatalf("process and local results differ:\nprocess %s\nlocal   %s", got, local)
	}
	var executor string
	e.db().QueryRow(`SELECT executor FROM runs WHERE id = 1`).Scan(&executor)
	if executor != "process" || attemptsPerTrial(t, e, "1") != "1 1 1 1 1 1" {
		t.Errorf("executor %q, attempts per trial %q", executor, attemptsPerTrial(t, e, "1"))
	}
	if st := e.mustRun(0, "status", "--run", "1"); !strings.Contains(st, "6 trials: 6 done") {
		t.Errorf("status:\n%s", st)
	}
	before := dumpDB(t, e.db())
	if again := e.mustRun(0, "collect", "--run", "1"); !strings.Contains(again, "0 new result(s)") || !strings.Contains(again, "nothing changed") {
		t.Errorf("second collect:\n%s", again)
	}
	if after := dumpDB(t, e.db()); after != before {
		t.Fatalf("collecting twice changed the database")
	}
	if out := e.mustRun(0, append(set, "--executor", "process")...); !strings.Contains(out, "up to date") {
		t.Errorf("the same command again:\n%s", out)
	}
	if _, errs, code := e.run(append(set, "--executor", "process", "--detach")...); code != 2 || !strings.Contains(errs, "no --detach") {
		t.Errorf("--detach: exit %d: %s", code, errs)
	}
	if _, errs, code := e.run(append(set, "--executor", "nosuch")...); code != 2 || !strings.Contains(errs, "local, process, slurm") {
		t.Errorf("--executor nosuch: exit %d: %s", code, errs)
	}
}

// TestProcessKilledSubmitterIsAdopted: the submitting runner is killed
// (SIGKILL) while its first worker runs and the other tasks wait. The
// worker runs on and leaves its result; the same command adopts the job:
// it starts the tasks nobody started, collects, and ends the run with
// the local results, every trial run once.
func TestProcessKilledSubmitterIsAdopted(t *testing.T) {
	e := newEnv(t)
	set := []string{"--experiment", "small", "--set", "steps=400", "--set", "seed=[1]", "--jobs", "1"}
	e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork")...)
	local := resultsOf(t, e, "local.db", "1")

	args := append(set, "--executor", "process", "--slurm-poll", "100ms")
	cmd, out := e.startRunner(args...)
	pid := waitPID(t, e, "1", 0, time.Minute)
	cmd.Process.Kill()
	cmd.Wait()
	waitGone(t, pid, time.Minute) // the worker outlives its submitter
	if j := readProcJob(t, e, "1"); j == nil || j.Tasks[1].PID != 0 {
		t.Fatalf("task 1 started before the kill: %+v\n%s", j, out)
	}
	res, _ := filepath.Glob(filepath.Join(e.dir, "work", "batch", "small", "run-1", "results", "*.json"))
	if len(res) != 1 {
		t.Fatalf("result files after the kill: %v", res)
	}
	again := e.mustRun(0, args...)
	if !strings.Contains(again, "already submitted") || !strings.Contains(again, "run 1 finished") {
		t.Fatalf("the same command after the kill:\n%s", again)
	}
	if got := resultsOf(t, e, "results.db", "1"); got != local {
		t.Fatalf("adopted run and local results differ:\nprocess %s\nlocal   %s", got, local)
	}
	if got := attemptsPerTrial(t, e, "1"); got != "1 1 1" {
		t.Errorf("attempts per trial %q: every trial runs once", got)
	}
}

// TestProcessKilledWorkerAndCancelResumeFromCheckpoints: worker 0 is
// killed (SIGKILL) and the run cancelled (worker 1 gets SIGTERM) after
// both wrote a checkpoint; status says so, and the same command resumes
// both trials from their checkpoints to the local results.
func TestProcessKilledWorkerAndCancelResumeFromCheckpoints(t *testing.T) {
	e := newEnv(t)
	set := []string{"--experiment", "slow", "--set", "steps=3000", "--set", "seed=[1,2]", "--jobs", "2"}
	e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork")...)
	local := resultsOf(t, e, "local.db", "1")

	args := append(set, "--executor", "process", "--slurm-poll", "100ms", "--checkpoint-every", "200")
	cmd, out := e.startRunner(args...)
	w0, w1 := waitPID(t, e, "1", 0, time.Minute), waitPID(t, e, "1", 1, time.Minute)
	waitCheckpoint(t, e, "slow", "1", 0, time.Minute)
	waitCheckpoint(t, e, "slow", "1", 1, time.Minute)
	syscall.Kill(w0, syscall.SIGKILL)
	waitGone(t, w0, time.Minute)
	if c := e.mustRun(0, "cancel", "--run", "1"); !strings.Contains(c, "cancelled job 1 (trials)") {
		t.Fatalf("cancel:\n%s", c)
	}
	waitGone(t, w1, time.Minute)
	cmd.Process.Signal(os.Interrupt) // stop waiting
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
	}
	st := e.mustRun(0, "status", "--run", "1")
	if !strings.Contains(st, "1 interrupted, 1 missing") {
		t.Fatalf("status after the kill and the cancel:\n%s\nsubmit:\n%s", st, out)
	}
	again := e.mustRun(0, args...)
	if !strings.Contains(again, "resumed") || !strings.Contains(again, "run 1 finished") {
		t.Fatalf("the same command:\n%s", again)
	}
	logs, _ := filepath.Glob(filepath.Join(e.dir, "work", "batch", "slow", "run-1", "logs", "2_*.out"))
	for _, l := range logs {
		if b, _ := os.ReadFile(l); !resumedAt.Match(b) {
			t.Errorf("%s: not resumed from a checkpoint:\n%s", filepath.Base(l), b)
		}
	}
	if len(logs) != 2 {
		t.Errorf("second submission's task logs: %v", logs)
	}
	if got := resultsOf(t, e, "results.db", "1"); got != local {
		t.Fatalf("resumed and local results differ:\nprocess %s\nlocal   %s", got, local)
	}
}
