package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"goldstone/runs"
)

// runnerBin is the runner built once for the end-to-end tests.
var runnerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runner-e2e-")
	if err != nil {
		panic(err)
	}
	runnerBin = filepath.Join(dir, "runner")
	out, err := exec.Command("go", "build", "-o", runnerBin, ".").CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const e2eConfig = `
[experiments.small]
description = "tiny artificial sweep"
pipeline = "artificial"
[experiments.small.settings]
time_steps = 6
steps = 400
clip = 0.01
lr = 1.0
lr_s0 = 100.0
k1 = 20
snapshots = [0, 400]
[experiments.small.grid]
seed = [1, 2]
[[experiments.small.variants]]
name = "gd"
[[experiments.small.variants]]
name = "goldstone"
gauge = "goldstone"
[[experiments.small.variants]]
name = "procrustes"
gauge = "procrustes"

[experiments.withnan]
description = "one trial diverges"
pipeline = "artificial"
[experiments.withnan.settings]
time_steps = 5
steps = 300
[experiments.withnan.grid]
lr = [0.01, 1e200]
seed = [1]

[experiments.withbad]
description = "one trial fails: its loss is not finite at the start"
pipeline = "artificial"
[experiments.withbad.settings]
time_steps = 5
steps = 300
[experiments.withbad.grid]
init_scale = [0.1, 1e200]
seed = [1]

[experiments.slow]
pipeline = "artificial"
[experiments.slow.settings]
time_steps = 30
steps = 6000
log_every = 1
clip = 0.01
lr = 1.0
lr_s0 = 100.0
[experiments.slow.grid]
seed = [1, 2, 3, 4, 5, 6]
`

type env struct {
	t   *testing.T
	dir string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "experiments.toml"), []byte(e2eConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, dir: dir}
}

// run runs the runner in the env's directory and returns stdout, stderr and the exit code.
func (e *env) run(args ...string) (string, string, int) {
	e.t.Helper()
	return e.runWithEnv(nil, args...)
}

func (e *env) mustRun(want int, args ...string) string {
	e.t.Helper()
	out, errs, code := e.run(args...)
	if code != want {
		e.t.Fatalf("runner %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errs)
	}
	return out
}

func (e *env) db() *sql.DB {
	e.t.Helper()
	return e.dbAt(filepath.Join(e.dir, "results.db"))
}

// dbAt opens the results database at path (closed when the test ends).
func (e *env) dbAt(path string) *sql.DB {
	e.t.Helper()
	db, err := sql.Open("sqlite3", path+"?_busy_timeout=10000")
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { db.Close() })
	return db
}

type resultJSON struct {
	Trial   string                     `json:"trial"`
	Status  string                     `json:"status"`
	Params  map[string]any             `json:"params"`
	Metrics map[string]*runs.JSONValue `json:"metrics"`
}

func (e *env) results(exp string) []resultJSON {
	e.t.Helper()
	out := e.mustRun(0, "results", "--experiment", exp, "--format", "json")
	var rs []resultJSON
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		e.t.Fatalf("results json: %v\n%s", err, out)
	}
	return rs
}

// resultsWithoutTimings renders results with timing metrics removed.
func resultsWithoutTimings(t *testing.T, rs []resultJSON) string {
	t.Helper()
	for _, r := range rs {
		for k := range r.Metrics {
			if strings.HasSuffix(k, "_seconds") {
				delete(r.Metrics, k)
			}
		}
	}
	b, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestJobsGiveIdenticalResultsAndSecondRunTrainsNothing(t *testing.T) {
	a, b := newEnv(t), newEnv(t)
	outA := a.mustRun(0, "--experiment", "small", "--jobs", "1")
	b.mustRun(0, "--experiment", "small", "--jobs", "2")
	if !strings.Contains(outA, "6 trials: 6 done, 0 failed") {
		t.Fatalf("unexpected summary: %s", outA)
	}
	ra, rb := a.results("small"), b.results("small")
	if len(ra) != 6 {
		t.Fatalf("%d result rows, want 6", len(ra))
	}
	if x, y := resultsWithoutTimings(t, ra), resultsWithoutTimings(t, rb); x != y {
		t.Fatalf("--jobs 1 and --jobs 2 differ:\n%s\n%s", x, y)
	}
	for _, r := range ra {
		if r.Status != "done" || r.Metrics["final_excess"] == nil {
			t.Fatalf("trial %s: status %s metrics %v", r.Trial, r.Status, r.Metrics)
		}
	}
	again := a.mustRun(0, "--experiment", "small", "--jobs", "2")
	if !strings.Contains(again, "up to date") {
		t.Fatalf("second run did work: %s", again)
	}
	var runsN int
	a.db().QueryRow(`SELECT count(*) FROM runs`).Scan(&runsN)
	if runsN != 1 {
		t.Fatalf("%d runs recorded, want 1", runsN)
	}
	// A new seed: the plan shows the old trials cached and only the new one to run.
	plan := a.mustRun(0, "plan", "--experiment", "small", "--set", "seed=[1, 2, 3]")
	if !strings.Contains(plan, "10 stages: 6 cached, 4 to run") {
		t.Fatalf("plan after adding a seed:\n%s", plan)
	}
	out := a.mustRun(0, "--experiment", "small", "--set", "seed=[1, 2, 3]")
	if !strings.Contains(out, "stages: 4 ran, 6 cached") {
		t.Fatalf("run after adding a seed: %s", out)
	}
}

func TestFailingTrialFailsWhileSiblingsComplete(t *testing.T) {
	e := newEnv(t)
	out := e.mustRun(1, "--experiment", "withbad")
	if !strings.Contains(out, "2 trials: 1 done, 1 failed") {
		t.Fatalf("unexpected: %s", out)
	}
	rows, err := e.db().Query(`SELECT status, error FROM trial_status WHERE experiment = 'withbad' ORDER BY status`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var st, msg string
		rows.Scan(&st, &msg)
		got = append(got, st)
		if st == "failed" && (!strings.Contains(msg, "step 0: local loss") || !strings.Contains(msg, "initial iterate")) {
			t.Errorf("failure error %q does not say the start had no finite loss", msg)
		}
	}
	if strings.Join(got, ",") != "done,failed" {
		t.Fatalf("statuses %v", got)
	}
}

func TestReproMatchesAndDetectsDrift(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "--experiment", "small", "--set", "seed=1")
	out := e.mustRun(0, "repro", "--experiment", "small", "--set", "seed=1")
	if !strings.Contains(out, "match") {
		t.Fatalf("repro: %s", out)
	}
	if _, err := e.db().Exec(`UPDATE summaries SET value = value * 1.5 WHERE name = 'final_psi' AND run_id = 1`); err != nil {
		t.Fatal(err)
	}
	out = e.mustRun(1, "repro", "--experiment", "small", "--set", "seed=1")
	if !strings.Contains(out, "DRIFT") || !strings.Contains(out, "final_psi") {
		t.Fatalf("repro after altering a value: %s", out)
	}
}

func TestKilledSweepResumesWithEveryTrialOnce(t *testing.T) {
	e := newEnv(t)
	cmd := exec.Command(runnerBin, "--experiment", "slow", "--jobs", "2")
	cmd.Dir = e.dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until at least one trial is recorded as done, then SIGKILL.
	db := e.db()
	waitForTrial(t, db, cmd, "done")
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	var done int
	db.QueryRow(`SELECT count(*) FROM trials WHERE status = 'done'`).Scan(&done)
	if done == 6 {
		t.Skip("the sweep finished before it could be killed")
	}
	out := e.mustRun(0, "--experiment", "slow", "--jobs", "2")
	if !strings.Contains(out, "resumed") || !strings.Contains(out, "6 trials: 6 done, 0 failed") {
		t.Fatalf("resume: %s", out)
	}
	var runsN, trialsN, distinct int
	db.QueryRow(`SELECT count(*) FROM runs`).Scan(&runsN)
	db.QueryRow(`SELECT count(*), count(DISTINCT trial) FROM trial_status WHERE status = 'done'`).Scan(&trialsN, &distinct)
	if runsN != 1 || trialsN != 6 || distinct != 6 {
		t.Fatalf("runs=%d done trials=%d distinct=%d, want 1, 6, 6", runsN, trialsN, distinct)
	}
	// Every trial's series is recorded once: one loss point per step.
	var points, steps int
	db.QueryRow(`SELECT count(*), count(DISTINCT trial || ':' || step) FROM series WHERE metric = 'loss'`).Scan(&points, &steps)
	if points != 6*6000 || steps != points {
		t.Fatalf("loss points %d (distinct %d), want %d", points, steps, 6*6000)
	}
}

func TestConfigErrorsExitTwoWithOneLine(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{
		{"--experiment", "nope"},
		{"--experiment", "small", "--set", "steps=0"},
		{"--experiment", "small", "--set", "lambda=-1"},
		{"--experiment", "small", "--jobs", "0"},
		{"results", "--experiment", "small", "--format", "xml"},
	} {
		_, errs, code := e.run(args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errs)
		}
		if lines := strings.Count(strings.TrimSpace(errs), "\n"); lines != 0 {
			t.Errorf("%v: error is %d lines: %q", args, lines+1, errs)
		}
	}
	os.WriteFile(filepath.Join(e.dir, "bad.toml"), []byte("[experiments.x]\npipeline = \"artificial\"\n[experiments.x.settings]\nstepz = 3\n"), 0o644)
	_, errs, code := e.run("--config", "bad.toml", "--experiment", "x")
	if code != 2 || !strings.Contains(errs, "bad.toml:4") || !strings.Contains(errs, "stepz") {
		t.Fatalf("bad config: exit %d: %s", code, errs)
	}
}

func TestInterruptMarksRunningTrialsAndResumes(t *testing.T) {
	e := newEnv(t)
	cmd := exec.Command(runnerBin, "--experiment", "slow", "--jobs", "2")
	cmd.Dir = e.dir
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	db := e.db()
	waitForTrial(t, db, cmd, "running")
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit after Ctrl-C: %v, want 130\n%s", err, out.String())
	}
	var running, interrupted int
	var runStatus string
	db.QueryRow(`SELECT count(*) FROM trials WHERE status = 'running'`).Scan(&running)
	db.QueryRow(`SELECT count(*) FROM trials WHERE status = 'interrupted'`).Scan(&interrupted)
	db.QueryRow(`SELECT status FROM runs`).Scan(&runStatus)
	if running != 0 || interrupted == 0 || runStatus != "interrupted" {
		t.Fatalf("after Ctrl-C: %d running, %d interrupted trials, run %s", running, interrupted, runStatus)
	}
	res := e.mustRun(0, "--experiment", "slow", "--jobs", "2")
	if !strings.Contains(res, "resumed") || !strings.Contains(res, "6 trials: 6 done") {
		t.Fatalf("resume after Ctrl-C: %s", res)
	}
}

// waitForTrial polls the results database of a running runner until some
// trial has the given status; after 2 minutes it kills the runner and fails.
func waitForTrial(t *testing.T, db *sql.DB, cmd *exec.Cmd, status string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int
		db.QueryRow(`SELECT count(*) FROM trials WHERE status = ?`, status).Scan(&n)
		if n >= 1 {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no trial %s within 2 minutes", status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
