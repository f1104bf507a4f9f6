package main

// One end-to-end test per defect of issue 9 ("trustworthy runs and
// cache"), and its rough edges. Each failed before its fix.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"goldstone/runs"
)

// mlDataEnv is an env with a MovieLens experiment "mlbad" over the ratings
// file or directory at dataset.
func mlDataEnv(t *testing.T, dataset string) *env {
	t.Helper()
	e := newEnv(t)
	e.writeConfig(fmt.Sprintf(`
[experiments.mlbad]
pipeline = "movielens"
[experiments.mlbad.settings]
dataset = %q
bins = 2
dim = 2
steps = 5
valid_every = 5
k1 = 2
[experiments.mlbad.grid]
seed = [1, 2, 3]
`, dataset))
	return e
}

func (e *env) trialStatuses(run int) map[string]int {
	e.t.Helper()
	rows, err := e.db().Query(`SELECT status, count(*) FROM trial_status WHERE run_id = ? GROUP BY status`, run)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		rows.Scan(&s, &n)
		m[s] = n
	}
	return m
}

func (e *env) runStatus(run int) string {
	e.t.Helper()
	var s string
	if err := e.db().QueryRow(`SELECT status FROM runs WHERE id = ?`, run).Scan(&s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// Defect 1: a data error fixed in the file is retried: the next run trains
// and records every trial.
func TestFixedDataErrorIsRetried(t *testing.T) {
	ratings := filepath.Join(t.TempDir(), "ratings.csv")
	good := syntheticRatings(10000)
	// Truncate the 8000th line in the middle: past the first rows that plan
	// checks (ratings.CheckTable), so the run starts and its ingest fails.
	lines := bytes.SplitAfter(good, []byte("\n"))
	bad := bytes.Join(lines[:7999], nil)
	bad = append(bad, lines[7999][:4]...)
	bad = append(bad, '\r', '\n')
	bad = append(bad, bytes.Join(lines[8000:], nil)...)
	if err := os.WriteFile(ratings, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	e := mlDataEnv(t, ratings)
	_, errs, code := e.run("--experiment", "mlbad", "--quiet")
	if code != 2 || !strings.Contains(errs, ratings+":8000") {
		t.Fatalf("truncated line: exit %d, want 2 naming %s:8000\n%s", code, ratings, errs)
	}
	if s := e.runStatus(1); s != "failed" {
		t.Errorf("run after a data error is %s, want failed", s)
	}
	if err := os.WriteFile(ratings, good, 0o644); err != nil {
		t.Fatal(err)
	}
	out := e.mustRun(0, "--experiment", "mlbad", "--quiet")
	if !strings.Contains(out, "3 trials: 3 done, 0 failed") {
		t.Fatalf("after fixing the file: %s", out)
	}
	var runs, sums int
	e.db().QueryRow(`SELECT count(*) FROM runs`).Scan(&runs)
	e.db().QueryRow(`SELECT count(DISTINCT trial) FROM latest_summary WHERE experiment = 'mlbad' AND metric = 'test_ll'`).Scan(&sums)
	if st := e.trialStatuses(1); st["done"] != 3 || runs != 1 || sums != 3 {
		t.Errorf("after the fix: trials %v, %d runs, %d trials with test_ll; want 3 done, 1 run, 3", st, runs, sums)
	}
	if s := e.runStatus(1); s != "finished" {
		t.Errorf("run status %s, want finished", s)
	}
	if out := e.mustRun(0, "--experiment", "mlbad", "--quiet"); !strings.Contains(out, "up to date") {
		t.Errorf("third run: %s", out)
	}
}

// Defect 2: one failed trial does not suppress the report; the report
// covers the finished trials and lists the failed ones with their errors.
func TestReportDespiteFailedTrials(t *testing.T) {
	e := newEnv(t)
	out, errs, code := e.run("--experiment", "small", "--set", "init_scale=[0.1,1e200]", "--set", "seed=1", "--quiet")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "6 trials: 3 done, 3 failed") {
		t.Fatalf("summary: %s", out)
	}
	dir := filepath.Join(e.dir, "reports", "small", "run-1")
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatalf("no summary.md despite finished trials: %v\n%s", err, out)
	}
	if !strings.Contains(string(md), "initial iterate") || !strings.Contains(string(md), "init_scale=1e+200") {
		t.Errorf("summary.md does not list the failed trials with their errors:\n%s", md)
	}
	figs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	if len(figs) == 0 {
		t.Errorf("no figures in %s", dir)
	}
	if s := e.runStatus(1); s != "failed" {
		t.Errorf("run status %s, want failed", s)
	}
}

// Defect 3: an interrupted run keeps its failed trials failed, with their
// errors, when it is resumed; only interrupted and pending trials run.
func TestResumeKeepsFailedTrials(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(e2eConfig + `
[experiments.mixed]
pipeline = "artificial"
[experiments.mixed.settings]
time_steps = 30
steps = 6000
log_every = 1
clip = 0.01
lr = 1.0
lr_s0 = 100.0
[experiments.mixed.grid]
init_scale = [1e200, 0.1]
seed = [1, 2, 3]
`)
	cmd := exec.Command(runnerBin, "--experiment", "mixed", "--jobs", "2")
	cmd.Dir = e.dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	db := e.db()
	waitForTrial(t, db, cmd, "failed")
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	var id, msg string
	if err := db.QueryRow(`SELECT trial, error FROM trial_status WHERE status = 'failed' ORDER BY trial LIMIT 1`).Scan(&id, &msg); err != nil {
		t.Fatal(err)
	}
	if e.runStatus(1) != "interrupted" {
		t.Fatalf("run after Ctrl-C: %s", e.runStatus(1))
	}
	out, _, code := e.run("--experiment", "mixed", "--jobs", "2", "--quiet")
	if code != 1 || !strings.Contains(out, "resumed") {
		t.Fatalf("resume: exit %d: %s", code, out)
	}
	var st, msg2 string
	db.QueryRow(`SELECT status, error FROM trial_status WHERE trial = ?`, id).Scan(&st, &msg2)
	if st != "failed" || msg2 != msg {
		t.Errorf("failed trial after resume: %s %q, want failed %q", st, msg2, msg)
	}
	if got := e.trialStatuses(1); got["done"] != 3 || got["failed"] != 3 {
		t.Errorf("after resume: %v, want 3 done, 3 failed", got)
	}
	if s := e.runStatus(1); s != "failed" {
		t.Errorf("run status %s, want failed", s)
	}
	// --retry-failed runs them again (and they fail again, recorded anew).
	out, _, code = e.run("--experiment", "mixed", "--jobs", "2", "--quiet", "--retry-failed")
	if code != 1 || !strings.Contains(out, "3 failed") {
		t.Errorf("--retry-failed: exit %d: %s", code, out)
	}
}

// Defect 4: of two runners started at the same moment, the loser leaves no
// trace: no run row, and the next run is up to date with the real one.
func TestLosingRunnerLeavesNoTrace(t *testing.T) {
	e := newEnv(t)
	cmd := exec.Command(runnerBin, "--experiment", "slow", "--jobs", "2")
	cmd.Dir = e.dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	db := e.db()
	waitForTrial(t, db, cmd, "running")
	_, errs, code := e.run("--experiment", "slow", "--jobs", "2")
	if code != 2 || !strings.Contains(errs, "is in progress") {
		t.Fatalf("second runner: exit %d, want 2 (the run is in progress): %s", code, errs)
	}
	var runsN int
	db.QueryRow(`SELECT count(*) FROM runs`).Scan(&runsN)
	if runsN != 1 {
		t.Errorf("%d runs after the loser exited, want 1", runsN)
	}
	// Another experiment shares the workdir and runs beside it.
	out, errs, code := e.run("--experiment", "small", "--jobs", "1", "--quiet")
	db.QueryRow(`SELECT count(*) FROM runs`).Scan(&runsN)
	if code != 0 || runsN != 2 {
		t.Errorf("other experiment beside a running one: exit %d, %d runs\n%s%s", code, runsN, out, errs)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// Started together, from scratch.
	f := newEnv(t)
	args := []string{"--experiment", "small", "--set", "steps=300", "--set", "seed=[1,2]", "--quiet"}
	done := make(chan int, 2)
	for range 2 {
		go func() {
			c := exec.Command(runnerBin, args...)
			c.Dir = f.dir
			err := c.Run()
			done <- c.ProcessState.ExitCode()
			_ = err
		}()
	}
	c1, c2 := <-done, <-done
	if c1+c2 != 2 && c1+c2 != 0 {
		t.Errorf("two runners at once: exit %d and %d, want 0 and 2 (or 0 and 0)", c1, c2)
	}
	var n int
	f.db().QueryRow(`SELECT count(*) FROM runs`).Scan(&n)
	if n != 1 {
		t.Errorf("%d runs after two runners at once, want 1", n)
	}
	if out := f.mustRun(0, args...); !strings.Contains(out, "up to date (run 1") {
		t.Errorf("third runner: %s", out)
	}
	out = f.mustRun(0, "repro", "--experiment", "small", "--set", "steps=300", "--set", "seed=[1,2]")
	if !strings.Contains(out, "all 70 summary metrics of 6 trials match") && !strings.Contains(out, "match") {
		t.Errorf("repro: %s", out)
	}
}

// Defect 5: a corrupt cached output is detected (plan says corrupt, verify
// reports it), evicted with a one-line warning and recomputed; the values
// recorded are the original ones.
func TestCorruptCacheEntryIsRecomputed(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "--experiment", "small", "--set", "seed=1", "--quiet")
	want := e.results("small")
	entries, _ := filepath.Glob(filepath.Join(e.dir, "work", "cache", "train-artificial", "*", "result", "series.arrow"))
	if len(entries) != 3 {
		t.Fatalf("%d cached series.arrow files, want 3", len(entries))
	}
	corruptSomeFile(t, filepath.Dir(entries[0])) // the largest file of the result: its series
	plan := e.mustRun(0, "plan", "--experiment", "small", "--set", "seed=1")
	if !strings.Contains(plan, "corrupt") || !strings.Contains(plan, "1 corrupt") {
		t.Errorf("plan does not show the corrupt entry:\n%s", plan)
	}
	vout, _, code := e.run("verify")
	if code != 1 || !strings.Contains(vout, "corrupt") || !strings.Contains(vout, "1 corrupt") {
		t.Errorf("verify: exit %d, want 1:\n%s", code, vout)
	}
	// A new run that reuses the entry: a new seed adds trials.
	out, errs, code := e.run("--experiment", "small", "--set", "seed=[1,2]", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var warn []string
	for _, l := range strings.Split(errs, "\n") {
		if strings.Contains(l, "corrupt") {
			warn = append(warn, l)
		}
	}
	if len(warn) != 1 {
		t.Errorf("want one warning line about the corrupt entry, got %q", errs)
	}
	if !strings.Contains(out, "stages: 5 ran, 2 cached") {
		t.Errorf("the corrupt trial was not recomputed: %s", out)
	}
	got := map[string]*runs.JSONValue{}
	for _, r := range e.results("small") {
		got[r.Trial] = r.Metrics["final_excess"]
	}
	for _, r := range want {
		if g := got[r.Trial]; g == nil || r.Metrics["final_excess"] == nil || *g != *r.Metrics["final_excess"] {
			t.Errorf("trial %s: final_excess %v, originally %v", r.Trial, g, r.Metrics["final_excess"])
		}
	}
	if vout := e.mustRun(0, "verify"); !strings.Contains(vout, " 0 corrupt") {
		t.Errorf("verify after the rebuild:\n%s", vout)
	}
}

// Defect 5, Parquet: a corrupt cached Parquet file is evicted, not
// "cached" and failing forever.
func TestCorruptParquetEntryIsRecomputed(t *testing.T) {
	ratings := filepath.Join(t.TempDir(), "ratings.csv")
	if err := os.WriteFile(ratings, syntheticRatings(600), 0o644); err != nil {
		t.Fatal(err)
	}
	e := mlDataEnv(t, ratings)
	e.mustRun(0, "--experiment", "mlbad", "--set", "seed=1", "--quiet")
	// The split's Parquet tables are read by the new trial's training.
	entries := entryDirs(filepath.Join(e.dir, "work", "cache", "split", "*"))
	if len(entries) != 1 {
		t.Fatalf("%d split entries", len(entries))
	}
	if p := corruptSomeFile(t, entries[0]); !strings.HasSuffix(p, ".parquet") {
		t.Fatalf("corrupted %s, want a Parquet file", p)
	}
	for i := range 2 {
		out, errs, code := e.run("--experiment", "mlbad", "--set", "seed=[1,2]", "--quiet")
		if code != 0 || !strings.Contains(out, "2 trials: 2 done") {
			t.Fatalf("run %d after corrupting the Parquet entry: exit %d\n%s\n%s", i+1, code, out, errs)
		}
	}
}

// Defect 6: run statuses a script can act on.
func TestRunStatus(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "--experiment", "small", "--set", "seed=1", "--quiet")
	if s := e.runStatus(1); s != "finished" {
		t.Errorf("all trials done: %s, want finished", s)
	}
	e.mustRun(1, "--experiment", "withbad", "--set", "init_scale=1e200", "--quiet")
	if s := e.runStatus(2); s != "failed" {
		t.Errorf("all trials failed: %s, want failed", s)
	}
	e.mustRun(1, "--experiment", "withbad", "--quiet")
	if s := e.runStatus(3); s != "failed" {
		t.Errorf("some trials failed: %s, want failed", s)
	}
	if out := e.mustRun(0, "results", "--experiment", "withbad"); !strings.Contains(out, "(failed,") {
		t.Errorf("results header does not show the run status:\n%s", out)
	}
	// A diverged trial is a result: the run is finished.
	e.mustRun(0, "--experiment", "withnan", "--quiet")
	if s := e.runStatus(4); s != "finished" {
		t.Errorf("some trials diverged, the others done: %s, want finished", s)
	}
}

// Rough edge: with --quiet a data error is exactly one line on stderr,
// naming the user's file and line.
func TestQuietDataErrorIsOneLine(t *testing.T) {
	ratings := filepath.Join(t.TempDir(), "ratings.csv")
	os.WriteFile(ratings, []byte("userId,movieId,rating,timestamp\n1,1,4.0,964982703\n1,2,x,964982703\n"), 0o644)
	e := mlDataEnv(t, ratings)
	_, errs, code := e.run("--experiment", "mlbad", "--quiet")
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, ratings+":3") {
		t.Errorf("exit %d, stderr (want one line naming %s:3):\n%s", code, ratings, errs)
	}
}

// Rough edge: results and repro refuse a --db that does not exist (exit
// 2) instead of creating an empty database.
func TestResultsAndReproRefuseMissingDB(t *testing.T) {
	e := newEnv(t)
	for _, cmd := range []string{"results", "repro"} {
		db := filepath.Join(e.dir, "nope", cmd+".db")
		_, errs, code := e.run(cmd, "--experiment", "small", "--db", db)
		if code != 2 || !strings.Contains(errs, db) {
			t.Errorf("%s --db missing: exit %d: %s", cmd, code, errs)
		}
		if _, err := os.Stat(filepath.Dir(db)); !os.IsNotExist(err) {
			t.Errorf("%s created %s", cmd, filepath.Dir(db))
		}
	}
}

// Rough edge: reports are written with the umask's modes, not 0600; and
// (issue 19, item 9) so are cache entries and trial logs, under any umask:
// files 0666 and directories 0777 less the umask.
func TestReportModesFollowUmask(t *testing.T) {
	for _, mask := range []int{0o022, 0o077} {
		old := syscall.Umask(mask)
		e := newEnv(t)
		e.mustRun(0, "--experiment", "small", "--set", "seed=1", "--quiet")
		syscall.Umask(old)
		n := 0
		for _, root := range []string{filepath.Join(e.dir, "reports"), filepath.Join(e.dir, "work", "cache"), filepath.Join(e.dir, "work", "logs")} {
			filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err != nil {
					return err
				}
				fi, _ := d.Info()
				want := os.FileMode(0o666 &^ mask)
				if d.IsDir() {
					want = os.FileMode(0o777 &^ mask)
				}
				if fi.Mode().Perm() != want {
					t.Errorf("umask %03o: %s: mode %v, want %v", mask, p, fi.Mode().Perm(), want)
				}
				n++
				return nil
			})
		}
		if n < 10 {
			t.Errorf("umask %03o: only %d paths", mask, n)
		}
	}
}
