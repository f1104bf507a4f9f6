package main

// One end-to-end test per defect of issue 19 ("failure paths, round 2"),
// each of which failed before its fix.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"goldstone/pipeline"
)

// Item 2: an experiment name cannot lead a report, log or export outside
// its root: it is checked where it is decoded, and a name recorded in the
// database by an older version is refused where a path is built from it.
func TestExperimentNameCannotEscape(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(`
[experiments."../../escape"]
pipeline = "artificial"
[experiments."../../escape".settings]
time_steps = 4
steps = 20
`)
	args := []string{"--experiment", "../../escape", "--reports", "a/b/reports", "--workdir", "a/b/work", "--db", "a/b/results.db"}
	_, errs, code := e.run(args...)
	if code != 2 || !strings.Contains(errs, "invalid experiment name") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("exit %d, want 2 with one line naming the invalid name:\n%s", code, errs)
	}
	for _, p := range []string{"escape", "a/escape", "a/b/escape", "a/b/work"} {
		if _, err := os.Stat(filepath.Join(e.dir, p)); err == nil {
			t.Errorf("%s was created", p)
		}
	}

	// A run recorded under such a name (an older version, a hand-edited
	// database): export refuses to build a directory from it.
	e.writeConfig(e2eConfig)
	e.mustRun(0, "--experiment", "small", "--set", "seed=1", "--quiet", "--reports", "a/b/reports", "--db", "a/b/results.db")
	db := e.dbAt(filepath.Join(e.dir, "a", "b", "results.db"))
	if _, err := db.Exec(`UPDATE runs SET experiment = '../../escape'`); err != nil {
		t.Fatal(err)
	}
	_, errs, code = e.run("export", "--run", "1", "--reports", "a/b/reports", "--db", "a/b/results.db")
	if code != 2 || !strings.Contains(errs, "invalid experiment name") {
		t.Errorf("export of a run named ../../escape: exit %d: %s", code, errs)
	}
	for _, p := range []string{"escape", "a/escape", "a/b/escape"} {
		if _, err := os.Stat(filepath.Join(e.dir, p)); err == nil {
			t.Errorf("export created %s", p)
		}
	}
}

// Item 10: notes, tags and names recorded by someone else cannot drive the
// terminal (`runner runs`, `results`, the error line) nor inject HTML into
// the Markdown summary.
func TestNoTerminalOrMarkdownInjection(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(`
[experiments.inj]
pipeline = "artificial"
[experiments.inj.settings]
time_steps = 4
steps = 30
[experiments.inj.grid]
seed = [1]
[[experiments.inj.variants]]
name = "<b onmouseover=alert(1)>v</b>"
[[experiments.inj.variants]]
name = "esc\u001b[2Jv"
gauge = "goldstone"
`)
	note := "<script>alert(1)</script> \x1b]0;pwned\x07 \x1b[31mred"
	e.mustRun(0, "--experiment", "inj", "--quiet", "--note", note, "--tag", "x=<img src=x onerror=alert(1)>\x1b[2J")
	for _, args := range [][]string{{"runs"}, {"results", "--experiment", "inj"}, {"diff", "1", "1"}} {
		out := e.mustRun(0, args...)
		if strings.ContainsRune(out, 0x1b) || strings.ContainsRune(out, 0x07) {
			t.Errorf("runner %s prints control characters raw:\n%q", strings.Join(args, " "), out)
		}
		if args[0] == "runs" && !strings.Contains(out, `\x1b[31mred`) {
			t.Errorf("runner runs does not show the escaped note:\n%s", out)
		}
	}
	// Data formats written to a file or a pipe keep what was recorded.
	if out := e.mustRun(0, "runs", "--format", "csv"); !strings.Contains(out, "\x1b[31mred") {
		t.Errorf("runs --format csv to a pipe changed the note:\n%q", out)
	}
	md, err := os.ReadFile(filepath.Join(e.dir, "reports", "inj", "run-1", "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"<script", "<img", "<b ", "\x1b"} {
		if strings.Contains(string(md), raw) {
			t.Errorf("summary.md holds %q raw:\n%s", raw, md)
		}
	}
	if !strings.Contains(string(md), "&lt;script&gt;") || !strings.Contains(string(md), "&lt;b onmouseover") {
		t.Errorf("summary.md does not show the note and the variant name escaped:\n%s", md)
	}
}

// runReadOnly runs the runner with the directory dir (relative to the
// env) read-only: by its modes for an ordinary user, and for root (whom
// modes do not stop) by a read-only bind mount in a mount namespace of its
// own (unshare -m); it skips the test when neither is possible.
func (e *env) runReadOnly(dir string, args ...string) (string, string, int) {
	e.t.Helper()
	abs := filepath.Join(e.dir, dir)
	if os.Geteuid() != 0 {
		var paths []string
		filepath.WalkDir(abs, func(p string, d os.DirEntry, err error) error {
			if err == nil {
				paths = append(paths, p)
			}
			return nil
		})
		for _, p := range slices.Backward(paths) {
			fi, _ := os.Stat(p)
			os.Chmod(p, fi.Mode().Perm()&^0o222)
		}
		defer func() {
			for _, p := range paths {
				fi, _ := os.Stat(p)
				os.Chmod(p, fi.Mode().Perm()|0o200)
			}
		}()
		return e.run(args...)
	}
	const mountRO = `mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && ! touch "$1/.probe" 2>/dev/null`
	if _, err := exec.LookPath("unshare"); err != nil {
		e.t.Skip("running as root without unshare: cannot make a read-only file system")
	}
	if out, err := exec.Command("unshare", "-m", "sh", "-c", mountRO, "sh", abs).CombinedOutput(); err != nil {
		e.t.Skipf("running as root and cannot mount read-only (unshare -m: %v: %s)", err, out)
	}
	cmd := exec.Command("unshare", append([]string{"-m", "sh", "-c", mountRO + ` && shift && exec "$@"`, "sh", abs, runnerBin}, args...)...)
	cmd.Dir = e.dir
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// Item 7: the commands that only read the results database work on
// read-only media, and while another process holds its write lock.
func TestReadCommandsOnReadOnlyDatabase(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "--experiment", "small", "--set", "seed=1", "--quiet", "--db", "ro/results.db")
	for _, args := range [][]string{
		{"runs"},
		{"results", "--experiment", "small"},
		{"diff", "1", "1"},
		{"export", "--run", "1", "--out", filepath.Join(e.dir, "export")},
	} {
		out, errs, code := e.runReadOnly("ro", append(args, "--db", "ro/results.db")...)
		if code != 0 {
			t.Errorf("runner %s on a read-only database: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dir, "export", "trials.parquet")); err != nil {
		t.Errorf("export: %v", err)
	}

	// Beside a writer that holds the lock: no wait, no "database is locked".
	db := e.dbAt(filepath.Join(e.dir, "ro", "results.db"))
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, errs, code := e.run("runs", "--db", "ro/results.db")
	if code != 0 || time.Since(start) > 5*time.Second {
		t.Errorf("runner runs beside a held write lock: exit %d after %v\n%s%s", code, time.Since(start).Round(time.Millisecond), out, errs)
	}
	conn.ExecContext(t.Context(), "ROLLBACK")
}

// lockConfig: 6 trials of about a second each.
const lockConfig = `
[experiments.lk]
pipeline = "artificial"
[experiments.lk.settings]
time_steps = 30
steps = 3000
log_every = 1
[experiments.lk.grid]
seed = [1, 2, 3]
[[experiments.lk.variants]]
name = "gd"
[[experiments.lk.variants]]
name = "goldstone"
gauge = "goldstone"
`

// lockDB takes the results database's write lock from a second connection,
// as another program would with BEGIN IMMEDIATE; release gives it back.
func lockDB(t *testing.T, db *sql.DB) (release func()) {
	t.Helper()
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			conn.ExecContext(context.Background(), "COMMIT")
			conn.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// Item 1: a lock held longer than SQLite's busy timeout (10 s) while trials
// finish delays their records and fails none.
func TestLongDatabaseLockFailsNoTrial(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(lockConfig)
	cmd := exec.Command(runnerBin, "--experiment", "lk", "--jobs", "2", "--quiet")
	cmd.Dir = e.dir
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	db := e.db()
	waitForTrial(t, db, cmd, "running")
	release := lockDB(t, db)
	time.Sleep(16 * time.Second) // trials finish meanwhile, their records wait
	release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("runner under a 12 s lock: %v\n%s%s", err, out.String(), errs.String())
	}
	if got := e.trialStatuses(1); got["done"] != 6 {
		t.Errorf("trial statuses %v, want 6 done\n%s%s", got, out.String(), errs.String())
	}
	var points, withOutputs int
	db.QueryRow(`SELECT count(*) FROM series WHERE metric = 'loss'`).Scan(&points)
	if points != 6*3000 {
		t.Errorf("%d loss points, want %d", points, 6*3000)
	}
	// Nothing recorded about a trial is lost to the lock: its output files
	// too (gc finds its cache entries through them).
	db.QueryRow(`SELECT count(DISTINCT trial) FROM trial_outputs WHERE trial <> ''`).Scan(&withOutputs)
	if withOutputs != 6 {
		t.Errorf("%d trials have their outputs recorded, want 6\n%s", withOutputs, errs.String())
	}
}

// Item 1: a lock held past --db-wait ends the trial that trained as
// interrupted (exit 1), not failed; the same command resumes the run and
// records the trial from the cache without training it again.
func TestDatabaseLockPastWaitInterruptsAndResumes(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(lockConfig)
	args := []string{"--experiment", "lk", "--set", "seed=1", "--quiet"}
	cmd := exec.Command(runnerBin, append(args, "--jobs", "2", "--db-wait", "1s")...)
	cmd.Dir = e.dir
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	db := e.db()
	waitForTrial(t, db, cmd, "running")
	release := lockDB(t, db)
	err := cmd.Wait() // the lock outlasts the runner
	release()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.String(), "interrupted") || !strings.Contains(errs.String(), "run the same command again") {
		t.Fatalf("runner past --db-wait: %v, want exit 1 saying interrupted\n%s%s", err, out.String(), errs.String())
	}
	if got := e.trialStatuses(1); got["failed"] > 0 {
		t.Errorf("trials %v: a lock failed a trial", got)
	}
	again := e.mustRun(0, append(args, "--jobs", "2")...)
	if !strings.Contains(again, "resumed and finished") || !strings.Contains(again, "2 done, 0 failed") || !strings.Contains(again, "stages: 0 ran") {
		t.Errorf("the same command again: %s", again)
	}
	var points int
	db.QueryRow(`SELECT count(*) FROM series WHERE metric = 'loss'`).Scan(&points)
	if points != 2*3000 {
		t.Errorf("%d loss points, want %d", points, 2*3000)
	}
}

// Item 3: a report that cannot be written makes the exit code non-zero and
// the run's report state "failed"; "up to date" includes the report, so the
// same command writes it again once it can, and `runner report` rebuilds a
// run's report from the results it recorded.
func TestReportFailureIsVisibleAndRebuilt(t *testing.T) {
	e := newEnv(t)
	args := []string{"--experiment", "small", "--set", "seed=1", "--quiet"}
	// A file where the run's report directory goes (as a full disk would,
	// the copy fails).
	blocker := filepath.Join(e.dir, "reports", "small", "run-1")
	os.MkdirAll(filepath.Dir(blocker), 0o755)
	if err := os.WriteFile(blocker, []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := e.run(args...)
	if code != 1 || !strings.Contains(out, "report of run 1 failed") || !strings.Contains(errs, "report of run 1") {
		t.Fatalf("report into a blocked directory: exit %d, want 1 naming the report\n%s%s", code, out, errs)
	}
	var state, rerr string
	e.db().QueryRow(`SELECT report_state, report_error FROM runs WHERE id = 1`).Scan(&state, &rerr)
	if state != "failed" || rerr == "" || e.runStatus(1) != "finished" {
		t.Errorf("run 1: report state %q (%q), status %s; want failed, finished", state, rerr, e.runStatus(1))
	}
	// Not "up to date" while the report is missing.
	if _, _, code := e.run(args...); code != 1 {
		t.Errorf("the same command with the report still blocked: exit %d, want 1", code)
	}
	os.Remove(blocker)
	again := e.mustRun(0, args...)
	if !strings.Contains(again, "report written again") || strings.Contains(again, "nothing to run") {
		t.Errorf("the same command once the report can be written: %s", again)
	}
	want := reportFiles(t, filepath.Join(e.dir, "reports", "small", "run-1"))
	if !slices.Contains(want, "index.html") || !slices.Contains(want, "summary.md") {
		t.Fatalf("report files after the rebuild: %v", want)
	}
	if out := e.mustRun(0, args...); !strings.Contains(out, "nothing to run") {
		t.Errorf("with the report written: %s", out)
	}

	// runner report: the report directory and the report's cache entry
	// removed (as after an upgrade of the report's code), rebuilt from the
	// run's recorded trial results without training.
	os.RemoveAll(filepath.Join(e.dir, "reports", "small"))
	entries, _ := filepath.Glob(filepath.Join(e.dir, "work", "cache", "report-*"))
	for _, d := range entries {
		os.RemoveAll(d)
	}
	rep := e.mustRun(0, "report", "--run", "1")
	if !strings.Contains(rep, "stages: 1 ran, 0 cached") {
		t.Errorf("runner report: %s", rep)
	}
	if got := reportFiles(t, filepath.Join(e.dir, "reports", "small", "run-1")); !slices.Equal(got, want) {
		t.Errorf("runner report wrote %v, want %v", got, want)
	}
	if _, errs, code := e.run("report", "--run", "7"); code != 2 || !strings.Contains(errs, "not found") {
		t.Errorf("runner report --run 7: exit %d: %s", code, errs)
	}
}

// Item 4: a repro killed mid-way leaves neither a run "running" forever
// nor its scratch: the next command marks the run interrupted and removes
// the scratch, and gc can delete the run.
func TestKilledReproIsCleanedUp(t *testing.T) {
	e := newEnv(t)
	args := []string{"--experiment", "small", "--set", "seed=1", "--quiet"}
	e.mustRun(0, args...)
	e.runKilled("progress:train-artificial@3", append([]string{"repro"}, args...)...)
	if s := e.runStatus(2); s != "running" {
		t.Fatalf("the killed repro's run is %s", s)
	}
	scratch, _ := filepath.Glob(filepath.Join(e.dir, "work", "repro-*"))
	if len(scratch) != 1 {
		t.Fatalf("scratch of the killed repro: %v", scratch)
	}
	// A repro running beside the next command keeps its scratch.
	live := filepath.Join(e.dir, "work", "repro-live")
	held, err := pipeline.LockWorkDir(filepath.Join(live, "work"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()

	out := e.mustRun(0, append([]string{"repro", "--run", "1"}, args...)...)
	if !strings.Contains(out, "match") {
		t.Errorf("repro after a killed one: %s", out)
	}
	if s := e.runStatus(2); s != "interrupted" {
		t.Errorf("the killed repro's run is %s, want interrupted", s)
	}
	if got := e.trialStatuses(2); got["running"] > 0 {
		t.Errorf("trials of the killed repro: %v", got)
	}
	if _, err := os.Stat(scratch[0]); !os.IsNotExist(err) {
		t.Errorf("the killed repro's scratch %s is still there", scratch[0])
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the scratch of a live repro was removed: %v", err)
	}
	// gc deletes the interrupted repro run (the newest repro run stays).
	gc := e.mustRun(0, "gc", "--keep-last", "1")
	if !strings.Contains(gc, "2 (small)") {
		t.Errorf("gc: %s", gc)
	}
}

// entryDirs is filepath.Glob(pattern) without the cache entries' lock
// files (<key>.lock).
func entryDirs(pattern string) []string {
	all, _ := filepath.Glob(pattern)
	var out []string
	for _, p := range all {
		if !strings.HasSuffix(p, ".lock") {
			out = append(out, p)
		}
	}
	return out
}

// cacheEntries lists the cache entries under a workdir (<stage>/<key>),
// not their lock files (<key>.lock).
func cacheEntries(t *testing.T, work string) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(work, "cache", "*", "*"))
	var out []string
	for _, d := range dirs {
		if strings.HasSuffix(d, ".lock") {
			continue
		}
		rel, _ := filepath.Rel(filepath.Join(work, "cache"), d)
		out = append(out, rel)
	}
	return out
}

// Item 5: gc removes files before rows, so a gc killed half-way is
// finished by the next one; and it finds the files of a workdir that moved.
func TestGCIsRestartable(t *testing.T) {
	twoRuns := func(t *testing.T) (*env, []string) {
		e := newEnv(t)
		e.mustRun(0, "--experiment", "small", "--set", "seed=1", "--quiet")
		only1 := cacheEntries(t, filepath.Join(e.dir, "work"))
		e.mustRun(0, "--experiment", "small", "--set", "seed=2", "--quiet")
		return e, only1
	}
	gone := func(t *testing.T, e *env, work, reports string, run1 []string) {
		t.Helper()
		left := cacheEntries(t, filepath.Join(e.dir, work))
		for _, d := range run1 {
			if slices.Contains(left, d) {
				t.Errorf("entry %s of the deleted run is still in %s", d, work)
			}
		}
		if logs, _ := filepath.Glob(filepath.Join(e.dir, work, "logs", "small", "run-1", "*")); len(logs) > 0 {
			t.Errorf("logs of the deleted run: %v", logs)
		}
		if r, _ := filepath.Glob(filepath.Join(e.dir, reports, "small", "run-1")); len(r) > 0 {
			t.Errorf("report of the deleted run: %v", r)
		}
	}

	t.Run("killed", func(t *testing.T) {
		// Killed after its second removal: the next gc finishes.
		e, run1 := twoRuns(t)
		e.runKilled("gc:files@2", "gc", "--keep-last", "1")
		out := e.mustRun(0, "gc", "--keep-last", "1")
		if !strings.Contains(out, "deleted 1 runs: 1 (small)") {
			t.Errorf("gc after a killed gc: %s", out)
		}
		gone(t, e, "work", "reports", run1)
		if out := e.mustRun(0, "--experiment", "small", "--set", "seed=2", "--quiet"); !strings.Contains(out, "up to date") {
			t.Errorf("the kept run after gc: %s", out)
		}
	})

	t.Run("moved", func(t *testing.T) {
		// The workdir and reports moved: gc finds the deleted run's files
		// where they are now.
		e, run1 := twoRuns(t)
		for _, d := range []string{"work", "reports"} {
			if err := os.Rename(filepath.Join(e.dir, d), filepath.Join(e.dir, "moved-"+d)); err != nil {
				t.Fatal(err)
			}
		}
		out, errs, code := e.run("gc", "--keep-last", "1", "--workdir", "moved-work", "--reports", "moved-reports")
		if code != 0 || strings.Contains(out, " 0 cache entries") || strings.Contains(errs, "keeping") {
			t.Errorf("gc after the workdir moved: exit %d\n%s%s", code, out, errs)
		}
		gone(t, e, "moved-work", "moved-reports", run1)
	})
}

// grid1e6 is --set arguments for a grid of 1000 x 1000 points.
func grid1e6() []string {
	var seeds, lrs []string
	for i := range 1000 {
		seeds = append(seeds, fmt.Sprint(i+1))
		lrs = append(lrs, fmt.Sprint(float64(i+1)/1000))
	}
	return []string{"--set", "seed=" + strings.Join(seeds, ","), "--set", "lr=" + strings.Join(lrs, ",")}
}

// startRunner starts the runner in the env's directory.
func (e *env) startRunner(args ...string) (*exec.Cmd, *strings.Builder) {
	e.t.Helper()
	cmd := exec.Command(runnerBin, args...)
	cmd.Dir = e.dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd, &out
}

// waitExit waits up to limit for cmd to exit and returns its exit code;
// past the limit it kills cmd and fails the test.
func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration, what string) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: still running after %v", what, limit)
		return -1
	}
}

// Item 6: a grid beyond --max-trials is an error at once, naming the flag,
// the count and the grid; and Ctrl-C stops the enumeration of a large one
// (the limit raised) at once. The time limits are generous: the runner
// takes milliseconds; before this fix it enumerated for minutes.
func TestLargeGrids(t *testing.T) {
	e := newEnv(t)
	cmd, out := e.startRunner(append([]string{"--experiment", "small", "--quiet"}, grid1e6()...)...)
	if code := waitExit(t, cmd, 20*time.Second, "a grid of 3,000,000 trials"); code != 2 ||
		!strings.Contains(out.String(), "3000000 trials (3 variants × lr 1000 × seed 1000), more than --max-trials 10000") {
		t.Errorf("a grid of 3,000,000 trials: exit %d:\n%s", code, out)
	}
	if n := e.runsCount(); n != 0 {
		t.Errorf("%d runs recorded", n)
	}

	cmd, out = e.startRunner(append([]string{"--experiment", "small", "--quiet", "--max-trials", "5000000"}, grid1e6()...)...)
	time.Sleep(time.Second) // enumerating
	cmd.Process.Signal(os.Interrupt)
	if code := waitExit(t, cmd, 20*time.Second, "Ctrl-C while enumerating 3,000,000 trials"); code != 130 {
		t.Errorf("Ctrl-C while enumerating: exit %d, want 130:\n%s", code, out)
	}
}

// runsCount is the number of runs in the env's database (0 without one).
func (e *env) runsCount() int {
	e.t.Helper()
	if _, err := os.Stat(filepath.Join(e.dir, "results.db")); err != nil {
		return 0
	}
	var n int
	e.db().QueryRow(`SELECT count(*) FROM runs`).Scan(&n)
	return n
}

// tmpNames lists the temporary names (".NAME.tmp-PID-N", ".NAME.old-...")
// under root.
func tmpNames(root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".") && (strings.Contains(d.Name(), ".tmp-") || strings.Contains(d.Name(), ".old-")) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// Item 9: a kill leaves temporary files in the report and export
// directories, which the next start removes; an export is complete or
// absent.
func TestKilledWritesLeaveNothing(t *testing.T) {
	e := newEnv(t)
	args := []string{"--experiment", "small", "--set", "seed=1", "--quiet"}
	reports := filepath.Join(e.dir, "reports")
	// Killed while the run's HTML page is written, before its rename.
	e.runKilled("atomicfile:index.html", args...)
	if len(tmpNames(reports)) == 0 {
		t.Fatal("the kill left no temporary file to clean up")
	}
	if out := e.mustRun(0, args...); !strings.Contains(out, "report written again") {
		t.Errorf("after a kill while writing index.html: %s", out)
	}
	if left := tmpNames(reports); len(left) > 0 {
		t.Errorf("temporary files after the next start: %v", left)
	}

	// An export killed after its second file: no export (not a partial
	// one), and the next export is complete and leaves nothing else.
	export := filepath.Join(reports, "small", "run-1", "export")
	e.runKilled("export:file@2", "export", "--experiment", "small")
	if _, err := os.Stat(export); !os.IsNotExist(err) {
		t.Errorf("a killed export left %s: %v", export, err)
	}
	e.mustRun(0, "export", "--experiment", "small")
	if got := reportFiles(t, export); strings.Join(got, " ") != "outputs.parquet params.parquet series.parquet summaries.parquet trials.parquet" {
		t.Errorf("export: %v", got)
	}
	// Killed again while replacing it: the earlier export stays whole.
	e.runKilled("export:file@4", "export", "--experiment", "small")
	if got := reportFiles(t, export); len(got) != 5 {
		t.Errorf("the earlier export after a killed one: %v", got)
	}
	e.mustRun(0, "export", "--experiment", "small")
	if left := tmpNames(reports); len(left) > 0 {
		t.Errorf("temporary files after the next export: %v", left)
	}
	// An export does not replace a directory of the user's.
	mine := filepath.Join(e.dir, "mine")
	os.MkdirAll(mine, 0o777)
	os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("keep"), 0o666)
	if _, errs, code := e.run("export", "--experiment", "small", "--out", mine); code == 0 || !strings.Contains(errs, "notes.txt") {
		t.Errorf("export into a directory of the user's: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "notes.txt")); string(b) != "keep" {
		t.Error("the user's file is gone")
	}
}
