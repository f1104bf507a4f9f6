package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// waitCheckpoint waits until task index of the run has written a
// checkpoint (its private pipeline directory holds one).
func waitCheckpoint(t *testing.T, e *env, exp, run string, index int, d time.Duration) {
	t.Helper()
	pat := filepath.Join(e.dir, "work", "batch", exp, "run-"+run, "tasks", strconv.Itoa(index), "checkpoints", "*", "*", "*.ckpt")
	deadline := time.Now().Add(d)
	for {
		if m, _ := filepath.Glob(pat); len(m) > 0 {
			return
		}
		if time.Now().After(deadline) {
			q, _ := exec.Command("squeue", "-h", "-r", "-o", "%i %T %r").CombinedOutput()
			t.Fatalf("task %d wrote no checkpoint in %v; queue:\n%s", index, d, q)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var resumedAt = regexp.MustCompile(`resumed from the checkpoint of step (\d+) of (\d+)`)

// TestSlurmRequeuedAndStoppedTasksResumeFromCheckpoints: on the one-node
// cluster, task 0 is requeued mid-trial (scontrol requeue, as a preempting
// cluster does) and task 1 is sent the time-limit warning (SIGTERM to the
// batch step, as --signal=B:TERM@120 does before a time limit). Task 0
// runs again by itself and its result (a new execution, restart 1) is
// collected; task 1 is resubmitted by the same command. Both continue
// from the checkpoint they wrote when stopped, and every trial's values
// are those of a local uninterrupted run.
func TestSlurmRequeuedAndStoppedTasksResumeFromCheckpoints(t *testing.T) {
	needSlurm(t)
	t0 := time.Now()
	mark := func(what string) { t.Logf("%5.1fs %s", time.Since(t0).Seconds(), what) }
	e := newEnv(t)
	set := []string{"--experiment", "slow", "--set", "steps=15000", "--set", "seed=[1,2]", "--set", "log_every=10"}
	e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork")...)
	local := resultsOf(t, e, "local.db", "1")
	mark("local run")

	slurm := append(set, "--executor", "slurm", "--detach", "--slurm-collect-job", "--slurm-extra", "--requeue", "--checkpoint-every", "1000")
	out := e.mustRun(0, slurm...)
	s := parseSubmission(t, out)
	if s.n != 2 {
		t.Fatalf("submission %+v", s)
	}
	waitCheckpoint(t, e, "slow", s.run, 0, 2*time.Minute)
	mark("task 0 checkpointed")
	if out, err := exec.Command("scontrol", "requeue", s.job+"_0").CombinedOutput(); err != nil {
		t.Fatalf("scontrol requeue: %v %s", err, out)
	}
	// Slurm holds a requeued job back for a while (its begin time is set
	// ahead); a test does not wait for it.
	for i := 0; ; i++ {
		q, _ := exec.Command("squeue", "-h", "-r", "-j", s.job+"_0", "-o", "%T %r").CombinedOutput()
		if strings.HasPrefix(string(q), "PENDING") {
			if out, err := exec.Command("scontrol", "update", "JobId="+s.job+"_0", "StartTime=now").CombinedOutput(); err != nil {
				t.Logf("scontrol update StartTime=now: %v %s", err, out)
			}
			break
		}
		if i > 400 {
			t.Logf("task 0 after the requeue: %s", q)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitCheckpoint(t, e, "slow", s.run, 1, 2*time.Minute)
	if out, err := exec.Command("scancel", "--batch", "--signal=TERM", s.job+"_1").CombinedOutput(); err != nil {
		t.Fatalf("scancel --signal=TERM: %v %s", err, out)
	}
	db := e.db()
	// Task 0 finishes after its requeue; task 1 stopped: once the array
	// has ended the collect job marks the run interrupted.
	waitRun(t, db, s.run, 4*time.Minute, "interrupted")
	mark("run interrupted")
	var resub submission
	deadline := time.Now().Add(time.Minute)
	for {
		out, errs, code := e.run(slurm...)
		if code == 0 {
			resub = parseSubmission(t, out)
			break
		}
		if !strings.Contains(errs, "already submitted") || time.Now().After(deadline) {
			t.Fatalf("resubmission: exit %d\n%s\n%s", code, out, errs)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if resub.array != "1" {
		t.Fatalf("resubmitted %+v, want task 1 only", resub)
	}
	waitRun(t, db, s.run, 4*time.Minute, "finished")
	mark("run finished")
	if got := resultsOf(t, e, "results.db", s.run); got != local {
		t.Fatalf("results after a requeue and a stop differ from the local run's:\nslurm %s\nlocal %s", got, local)
	}
	var execs string
	db.QueryRow(`SELECT group_concat(array_index || '/' || attempt || '/' || status, ' ') FROM
		(SELECT * FROM trial_attempts WHERE run_id = ? ORDER BY array_index, attempt)`, s.run).Scan(&execs)
	if execs != "0/1/interrupted 0/2/done 1/1/interrupted 1/2/done" {
		t.Errorf("executions %q", execs)
	}
	// Each stopped task saved a checkpoint of the step it had reached and
	// resumed there: no step taken was lost. (A requeued task's output
	// file holds both executions: --open-mode=append.)
	logs := filepath.Join(e.dir, "work", "batch", "slow", "run-"+s.run, "logs")
	read := func(f string) string { b, _ := os.ReadFile(filepath.Join(logs, f)); return string(b) }
	for _, c := range []struct{ stopped, resumed string }{{s.job + "_0.out", s.job + "_0.out"}, {s.job + "_1.out", resub.job + "_1.out"}} {
		saves := ckptSaved.FindAllStringSubmatch(read(c.stopped), -1)
		m := resumedAt.FindStringSubmatch(read(c.resumed))
		if m == nil || m[1] == "0" || len(saves) == 0 {
			t.Errorf("%s: no resume from a checkpoint past step 0:\n%s\n%s", c.resumed, read(c.stopped), read(c.resumed))
			continue
		}
		last := saves[len(saves)-1]
		if c.stopped == c.resumed {
			// The resumed execution's own saves come after the resume.
			for _, sv := range saves {
				if sv[1] == m[1] {
					last = sv
					break
				}
			}
		}
		if last[1] != m[1] {
			t.Errorf("%s: stopped with a checkpoint of step %s, resumed at %s", c.stopped, last[1], m[1])
		}
		t.Logf("%s: stopped at step %s (checkpoint %s bytes in %ss), %s: 0 steps redone", c.stopped, last[1], last[2], last[3], m[0])
	}
}

// TestSlurmSubmitWaits: by default the Slurm submit waits, prints the
// progress of the trials, collects their results on this host (no collect
// job: no compute node opens the database) and ends the run with its
// report, as a local run does; the values are the local run's.
func TestSlurmSubmitWaits(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	set := []string{"--experiment", "small", "--set", "steps=200", "--set", "seed=1"}
	e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork")...)
	local := resultsOf(t, e, "local.db", "1")
	out := e.mustRun(0, append(set, "--executor", "slurm", "--slurm-poll", "200ms")...)
	s := parseSubmission(t, out)
	t.Logf("waiting submit:\n%s", out)
	for _, want := range []string{"waiting for them", "run " + s.run + ": trials ", "/3 done", "run " + s.run + " finished", "report: "} {
		if !strings.Contains(out, want) {
			t.Errorf("waiting submit's output lacks %q:\n%s", want, out)
		}
	}
	db := e.db()
	var status string
	var jobs int
	db.QueryRow(`SELECT status FROM runs WHERE id = ?`, s.run).Scan(&status)
	db.QueryRow(`SELECT count(*) FROM slurm_jobs WHERE run_id = ?`, s.run).Scan(&jobs)
	if status != "finished" || jobs != 1 {
		t.Errorf("run %s: %s with %d Slurm jobs; want finished with 1 (no collect job)", s.run, status, jobs)
	}
	if got := resultsOf(t, e, "results.db", s.run); got != local {
		t.Fatalf("Slurm and local results differ:\nslurm %s\nlocal %s", got, local)
	}
}

// TestSlurmSplitSweepMatchesLocal: on the one-node cluster, a sweep larger
// than the MaxArraySize it is told goes as two arrays (the second's task 0
// runs trial 2) and is collected as one run, with the local run's values.
func TestSlurmSplitSweepMatchesLocal(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	set := []string{"--experiment", "small", "--set", "steps=200", "--set", "seed=1"}
	e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork")...)
	local := resultsOf(t, e, "local.db", "1")
	out := e.mustRun(0, append(set, "--executor", "slurm", "--slurm-poll", "200ms", "--slurm-max-array-size", "2")...)
	m := regexp.MustCompile(`run (\d+) submitted: 3 of 3 trials as Slurm 2 jobs \((\d+) 0-1, (\d+) 2\+0: trial = offset\+array index`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no split submission in the output:\n%s", out)
	}
	if !strings.Contains(out, "run "+m[1]+" finished") {
		t.Errorf("waiting submit's output:\n%s", out)
	}
	if got := resultsOf(t, e, "results.db", m[1]); got != local {
		t.Fatalf("Slurm and local results differ:\nslurm %s\nlocal %s", got, local)
	}
	var jobID string
	e.db().QueryRow(`SELECT job_id FROM trial_attempts WHERE run_id = ? AND array_index = 2`, m[1]).Scan(&jobID)
	if jobID != m[3]+"_0" {
		t.Errorf("trial 2 ran as %q, want %s_0", jobID, m[3])
	}
}

// TestSlurmRefusedRequestRecordsNoRun: on the one-node cluster, a request
// sbatch --test-only refuses (a partition the cluster lacks) ends the
// submit (exit 1) with sbatch's message, recording no run.
func TestSlurmRefusedRequestRecordsNoRun(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	_, errs, code := e.run("--experiment", "small", "--set", "seed=1", "--executor", "slurm", "--slurm-partition", "no-such-partition")
	if code != 1 || !strings.Contains(errs, "--test-only") || !strings.Contains(strings.ToLower(errs), "invalid partition") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var n int
	e.db().QueryRow(`SELECT count(*) FROM runs`).Scan(&n)
	if n != 0 {
		t.Errorf("%d run(s) recorded after a refused request", n)
	}
}
