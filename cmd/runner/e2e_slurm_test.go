package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The Slurm end-to-end tests need a cluster: CI starts a one-node one on
// the test machine (.ci/slurm.sh start). The run directory lives in the
// test's temporary directory, which the one node shares with the submit
// host.

func needSlurm(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sbatch"); err != nil {
		t.Skip("sbatch not on PATH: no Slurm cluster to test against (start one with .ci/slurm.sh start)")
	}
	if out, err := exec.Command("sinfo", "-h", "-o", "%t").CombinedOutput(); err != nil {
		t.Skipf("sbatch is installed but no Slurm controller answers (sinfo: %s); start one with .ci/slurm.sh start", strings.TrimSpace(string(out)))
	}
}

var submittedRE = regexp.MustCompile(`run (\d+) (?:submitted|resumed[^:]*): (\d+) of (\d+) trials as Slurm job (\d+) \(array ([^,]+),`)

type submission struct {
	run, job, array string
	n               int
}

func parseSubmission(t *testing.T, out string) submission {
	t.Helper()
	m := submittedRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no submission in the output:\n%s", out)
	}
	var n int
	fmt.Sscan(m[2], &n)
	return submission{run: m[1], n: n, job: m[4], array: m[5]}
}

// waitRun polls the database until the run's status is one of want.
func waitRun(t *testing.T, db *sql.DB, run string, d time.Duration, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var st string
		db.QueryRow(`SELECT status FROM runs WHERE id = ?`, run).Scan(&st)
		for _, w := range want {
			if st == w {
				return st
			}
		}
		if time.Now().After(deadline) {
			out, _ := exec.Command("squeue", "-h", "-o", "%i %T %r").CombinedOutput()
			t.Fatalf("run %s is %q after %v, want %v; queue:\n%s", run, st, d, want, out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitQueueEmpty waits until squeue lists no task of job.
func waitQueueEmpty(t *testing.T, job string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		out, err := exec.Command("squeue", "-h", "-j", job).CombinedOutput()
		if strings.TrimSpace(string(out)) == "" || err != nil && strings.Contains(string(out), "Invalid job id") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still queued after %v:\n%s", job, d, out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// dumpDB renders every row of every table (the whole database) as text.
func dumpDB(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	var b strings.Builder
	for _, tb := range tables {
		rs, err := db.Query(`SELECT * FROM "` + tb + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rs.Scan(ptrs...)
			line, _ := json.Marshal(vals)
			fmt.Fprintf(&b, "%s %s\n", tb, line)
		}
		rs.Close()
	}
	return b.String()
}

func resultsOf(t *testing.T, e *env, db, run string) string {
	t.Helper()
	out := e.mustRun(0, "results", "--db", db, "--run", run, "--format", "json")
	var rs []resultJSON
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("results json: %v\n%s", err, out)
	}
	return resultsWithoutTimings(t, rs)
}

func TestSlurmSweepMatchesLocalAndCollectsOnce(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	set := []string{"--experiment", "small", "--set", "steps=200"}
	e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork")...)
	local := resultsOf(t, e, "local.db", "1")

	out := e.mustRun(0, append(set, "--executor", "slurm", "--detach", "--slurm-collect-job", "--slurm-max-parallel", "2", "--slurm-time", "00:10:00")...)
	s := parseSubmission(t, out)
	if s.n != 6 || s.array != "0-5%2" {
		t.Fatalf("submission %+v, want 6 trials as 0-5%%2:\n%s", s, out)
	}
	db := e.db()
	waitRun(t, db, s.run, 3*time.Minute, "finished")
	if got := resultsOf(t, e, "results.db", s.run); got != local {
		t.Fatalf("Slurm and local results differ:\nslurm %s\nlocal %s", got, local)
	}
	// Once the run has ended, its collect job has recorded everything.
	var executor string
	var jobs int
	db.QueryRow(`SELECT executor FROM runs WHERE id = ?`, s.run).Scan(&executor)
	db.QueryRow(`SELECT count(*) FROM slurm_jobs WHERE run_id = ?`, s.run).Scan(&jobs)
	if executor != "slurm" || jobs != 2 {
		t.Errorf("run %s: executor %q, %d slurm jobs; want slurm and 2 (array, collect)", s.run, executor, jobs)
	}
	st := e.mustRun(0, "status", "--run", s.run)
	if !strings.Contains(st, "6 trials: 6 done") {
		t.Errorf("status:\n%s", st)
	}
	// The collect job has collected; collecting again changes nothing.
	before := dumpDB(t, db)
	again := e.mustRun(0, "collect", "--run", s.run)
	if !strings.Contains(again, "0 new result(s)") || !strings.Contains(again, "nothing changed") {
		t.Errorf("second collect:\n%s", again)
	}
	if after := dumpDB(t, db); after != before {
		t.Fatalf("collecting twice changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// The same command again: the run is up to date.
	if out := e.mustRun(0, append(set, "--executor", "slurm")...); !strings.Contains(out, "up to date") {
		t.Errorf("resubmitting a finished run:\n%s", out)
	}
}

func TestSlurmCancelledTaskIsResubmittedAndSecondSubmitRefused(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	// Trials long enough (seconds each, more on a loaded machine) to cancel
	// one mid-run.
	set := []string{"--experiment", "slow", "--set", "steps=15000", "--set", "seed=[1,2,3]"}
	e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork")...)
	local := resultsOf(t, e, "local.db", "1")

	out := e.mustRun(0, append(set, "--executor", "slurm", "--detach", "--slurm-collect-job", "--slurm-max-parallel", "2")...)
	s := parseSubmission(t, out)
	// While its tasks are queued, a second submission of the run is refused.
	refused, errs, code := e.run(append(set, "--executor", "slurm", "--detach", "--slurm-collect-job")...)
	if code == 0 || !strings.Contains(errs, "already submitted") {
		t.Fatalf("second submission: exit %d\n%s\n%s", code, refused, errs)
	}
	// Cancel task 1 once its worker has begun the trial (it made its
	// private pipeline directory): it records interrupted.
	db := e.db()
	deadline := time.Now().Add(2 * time.Minute)
	taskDir := filepath.Join(e.dir, "work", "batch", "slow", "run-"+s.run, "tasks", "1")
	for {
		if _, err := os.Stat(taskDir); err == nil {
			break
		}
		if time.Now().After(deadline) {
			q, _ := exec.Command("squeue", "-h", "-r", "-j", s.job, "-o", "%i %T").CombinedOutput()
			t.Fatalf("task 1 of job %s has not started after 2 minutes; queue:\n%s", s.job, q)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // into the training loop
	if out, err := exec.Command("scancel", s.job+"_1").CombinedOutput(); err != nil {
		t.Fatalf("scancel: %v %s", err, out)
	}
	waitQueueEmpty(t, s.job, 3*time.Minute)
	st := e.mustRun(0, "status", "--run", s.run)
	t.Logf("status after scancel of task 1:\n%s", st)
	if !regexp.MustCompile(`(?m)^1\s+\S+\s+\S+\s+interrupted\s`).MatchString(st) || !strings.Contains(st, "2 done") {
		t.Fatalf("status after cancelling task 1:\n%s", st)
	}
	// The collect job ran when the array ended: a trial lacks a result and
	// nothing is queued, so the run is interrupted (resumable).
	waitRun(t, db, s.run, time.Minute, "interrupted")
	// Re-running the command resubmits only trial 1.
	for {
		out, errs, code := e.run(append(set, "--executor", "slurm", "--detach", "--slurm-collect-job")...)
		if code == 0 {
			s2 := parseSubmission(t, out)
			if s2.run != s.run || s2.array != "1%1" && s2.array != "1" {
				t.Fatalf("resubmission %+v:\n%s", s2, out)
			}
			break
		}
		// The collect job may still be queued for a moment.
		if !strings.Contains(errs, "already submitted") || time.Now().After(deadline.Add(time.Minute)) {
			t.Fatalf("resubmission: exit %d\n%s\n%s", code, out, errs)
		}
		time.Sleep(500 * time.Millisecond)
	}
	waitRun(t, db, s.run, 3*time.Minute, "finished")
	if got := resultsOf(t, e, "results.db", s.run); got != local {
		t.Fatalf("Slurm results after a resubmission differ from local:\nslurm %s\nlocal %s", got, local)
	}
	var attempts int
	db.QueryRow(`SELECT count(*) FROM trial_attempts WHERE run_id = ? AND array_index = 1`, s.run).Scan(&attempts)
	if attempts < 1 {
		t.Errorf("trial 1 has %d collected attempts", attempts)
	}
}

// TestSlurmPackedSweepMatchesLocal: on the cluster, a sweep of 6 trials
// packed 3 per task (--slurm-trials-per-task 3) runs as 2 array tasks,
// each running its 3 trials one after another; the waiting submit
// collects them and ends the run, its values equal to the local run's bit
// for bit.
func TestSlurmPackedSweepMatchesLocal(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	set := []string{"--experiment", "small", "--set", "steps=200"}
	e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork", "--quiet")...)
	local := resultsOf(t, e, "local.db", "1")
	out := e.mustRun(0, append(set, "--executor", "slurm", "--slurm-poll", "200ms", "--slurm-trials-per-task", "3", "--slurm-time", "00:10:00")...)
	s := parseSubmission(t, out)
	if s.n != 6 || s.array != "0-1" || !strings.Contains(out, "2 tasks of up to 3 trials") || !strings.Contains(out, "finished") {
		t.Fatalf("submission %+v, want 6 trials as 2 tasks (0-1), finished:\n%s", s, out)
	}
	if got := resultsOf(t, e, "results.db", s.run); got != local {
		t.Fatalf("packed Slurm and local results differ:\nslurm %s\nlocal %s", got, local)
	}
	var tasks string
	e.db().QueryRow(`SELECT group_concat(job_id, ' ') FROM (SELECT job_id FROM trial_attempts WHERE run_id = ? ORDER BY array_index)`, s.run).Scan(&tasks)
	j := s.job
	if want := strings.Repeat(j+"_0 ", 3) + strings.Repeat(j+"_1 ", 2) + j + "_1"; tasks != want {
		t.Errorf("the trials' tasks %q, want %q", tasks, want)
	}
}
