package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// plantedE2E has stages all trials share (generate, ingest, binarize,
// bin, split, references) and needs no data set.
const plantedE2E = `
[experiments.planted]
pipeline = "movielens"
[experiments.planted.settings]
dataset = "planted"
planted_users = 120
planted_items = 60
planted_ratings = 4000
planted_dim = 3
bins = 3
dim = 10
steps = 30
valid_every = 10
gauge_gap_every = 10
k1 = 10
optimizer = "adagrad"
lr = 0.5
gamma = 1.0
[[experiments.planted.variants]]
name = "goldstone"
gauge = "goldstone"
[[experiments.planted.variants]]
name = "procrustes"
gauge = "procrustes"
`

var sharedJobRE = regexp.MustCompile(`shared stages: job (\d+) runs them first`)

// appendConfig adds text to the env's experiments file.
func appendConfig(t *testing.T, e *env, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(e.dir, "experiments.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// sharedResult reads a submission's shared job result file.
func sharedResult(t *testing.T, dir string, attempt int) (status, errText string, ran []string, ended time.Time) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("shared.%d.json", attempt)))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Status, Error string
		Ran           []string
		Ended         time.Time
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r.Status, r.Error, r.Ran, r.Ended
}

// TestSlurmSharedJobRunsSharedStagesFirst: on the one-node cluster, a
// fresh work directory and an experiment whose shared stages are not
// cached: the waiting submit runs none of them (they ran in the shared
// job: its log shows each start, which a cached stage would not have),
// submits the array after it (afterok), and the run's values are the
// local run's.
func TestSlurmSharedJobRunsSharedStagesFirst(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	appendConfig(t, e, plantedE2E)
	set := []string{"--experiment", "planted"}
	e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork")...)
	local := resultsOf(t, e, "local.db", "1")
	start := time.Now()
	out := e.mustRun(0, append(set, "--executor", "slurm", "--slurm-poll", "200ms")...)
	t.Logf("waiting submit (%.1fs):\n%s", time.Since(start).Seconds(), out)
	s := parseSubmission(t, out)
	m := sharedJobRE.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "run "+s.run+" finished") {
		t.Fatalf("no shared job, or the run did not finish:\n%s", out)
	}
	if got := resultsOf(t, e, "results.db", s.run); got != local {
		t.Fatalf("Slurm and local results differ:\nslurm %s\nlocal %s", got, local)
	}
	dir := filepath.Join(e.dir, "work", "batch", "planted", "run-"+s.run)
	log, err := os.ReadFile(filepath.Join(dir, "logs", "shared-"+m[1]+".out"))
	if err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{"generate", "ingest", "binarize", "split"} {
		if !strings.Contains(string(log), "planted/"+stage+": started") {
			t.Errorf("the shared job did not run %s (the submit host did?):\n%s", stage, log)
		}
	}
	status, _, ran, ended := sharedResult(t, dir, 1)
	if status != "done" || len(ran) < 4 {
		t.Errorf("shared result: %s, ran %v", status, ran)
	}
	// Every trial's task started after the shared job ended.
	rows, err := e.db().Query(`SELECT started_at FROM trial_attempts WHERE run_id = ?`, s.run)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var at string
		rows.Scan(&at)
		ts, err := time.Parse(time.RFC3339Nano, at)
		if err != nil || ts.Before(ended) {
			t.Errorf("a task started at %s (%v), before the shared job ended at %s", at, err, ended)
		}
		n++
	}
	rows.Close()
	var roles string
	e.db().QueryRow(`SELECT group_concat(role, ',') FROM (SELECT role FROM slurm_jobs WHERE run_id = ? ORDER BY CAST(job_id AS INTEGER))`, s.run).Scan(&roles)
	if n != 2 || roles != "shared,trials" {
		t.Errorf("%d attempts, jobs %q; want 2 and shared,trials", n, roles)
	}
	if st := e.mustRun(0, "status", "--run", s.run); !strings.Contains(st, "shared stages: job "+m[1]+" (submission 1) done") {
		t.Errorf("status:\n%s", st)
	}
	// Other trials over the same data: cached shared stages, no shared job.
	out = e.mustRun(0, append(set, "--set", "k1=5", "--executor", "slurm", "--slurm-poll", "200ms")...)
	if strings.Contains(out, "shared stages: job") || !strings.Contains(out, " finished") {
		t.Errorf("with the shared stages cached:\n%s", out)
	}
}

// writeRatings writes a MovieLens-layout ratings table of n rows; with bad,
// a row past the part CheckTable reads (64 KiB) has a rating that is not a
// number, so that only the shared job's ingest finds it.
func writeRatings(t *testing.T, path string, n int, bad bool) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("userId,movieId,rating,timestamp\n")
	for i := range n {
		fmt.Fprintf(&b, "%d,%d,%d.0,%d\n", 1+r.IntN(80), 1+r.IntN(40), 1+r.IntN(5), 1_500_000_000+i*1000)
	}
	if bad {
		b.WriteString("7,3,four,1600000000\n")
	}
	if b.Len() < 80_000 {
		t.Fatalf("the table is %d bytes: the bad row would be within what CheckTable reads", b.Len())
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSlurmFailedSharedJobFailsTheRun: on the one-node cluster, a shared
// job whose ingest fails (a bad row past what the submit host checks)
// makes Slurm cancel the trials' array (kill-on-invalid-dep); the waiting
// submit ends the run failed with one line naming the job and its log;
// with the table fixed, the same command resubmits the shared job and the
// trials, and the run finishes.
func TestSlurmFailedSharedJobFailsTheRun(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	table := filepath.Join(e.dir, "ratings.csv")
	writeRatings(t, table, 4000, true)
	appendConfig(t, e, strings.Replace(strings.Replace(plantedE2E, `dataset = "planted"`, `dataset = "`+table+`"`, 1), "[experiments.planted", "[experiments.own", -1))
	set := []string{"--experiment", "own", "--executor", "slurm", "--slurm-poll", "200ms"}
	start := time.Now()
	out, errs, code := e.run(set...)
	t.Logf("failed shared job (%.1fs):\n%s\n%s", time.Since(start).Seconds(), out, errs)
	s := parseSubmission(t, out)
	m := sharedJobRE.FindStringSubmatch(out)
	if code != 1 || m == nil {
		t.Fatalf("exit %d, want 1 with a shared job", code)
	}
	dir := filepath.Join(e.dir, "work", "batch", "own", "run-"+s.run)
	logPath := filepath.Join(dir, "logs", "shared-"+m[1]+".out")
	want := "run " + s.run + " failed: the shared stages' job " + m[1] + " (submission 1) failed: "
	line := strings.TrimSpace(errs[strings.LastIndex(strings.TrimSpace(errs), "\n")+1:])
	if !strings.Contains(line, want) || !strings.Contains(line, "ratings.csv") || !strings.Contains(line, "log: "+logPath) {
		t.Errorf("last line of stderr %q, want %q ... naming the table and %s", line, want, logPath)
	}
	var status string
	e.db().QueryRow(`SELECT status FROM runs WHERE id = ?`, s.run).Scan(&status)
	if status != "failed" {
		t.Errorf("run %s is %s, want failed", s.run, status)
	}
	if rs, _ := filepath.Glob(filepath.Join(dir, "results", "*")); len(rs) != 0 {
		t.Errorf("tasks ran although their shared job failed: %v", rs)
	}
	if st, _, code := e.run("collect", "--run", s.run); code != 1 {
		t.Errorf("collect of the failed run: exit %d\n%s", code, st)
	}
	if st := e.mustRun(0, "status", "--run", s.run); !strings.Contains(st, "shared stages: job "+m[1]+" (submission 1) failed: own/ingest: ") {
		t.Errorf("status of the failed run:\n%s", st)
	}
	// Fixed: the same command resubmits the shared job and the trials.
	writeRatings(t, table, 4000, false)
	out = e.mustRun(0, set...)
	t.Logf("resubmission:\n%s", out)
	s2 := parseSubmission(t, out)
	m2 := sharedJobRE.FindStringSubmatch(out)
	if s2.run != s.run || m2 == nil || m2[1] == m[1] || !strings.Contains(out, "run "+s.run+" finished") {
		t.Fatalf("resubmission did not rerun the shared job and finish run %s:\n%s", s.run, out)
	}
	if st, _, _, _ := sharedResult(t, dir, 2); st != "done" {
		t.Errorf("second shared job: %s", st)
	}
}
