package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"goldstone/pipeline"
	"goldstone/trialio"
)

// oneTrialConfig: experiments whose runs have one trial (no variants and
// no grid, or a grid that --set narrows to one point), and one with a grid
// and no variants.
const oneTrialConfig = `
[experiments.one]
pipeline = "artificial"
[experiments.one.settings]
time_steps = 5
steps = 20

[experiments.seeds]
pipeline = "artificial"
[experiments.seeds.settings]
time_steps = 5
steps = 20
[experiments.seeds.grid]
seed = [1, 2]
`

// TestOneTrialRunRebuildsItsReport: a run of one trial (whose trial name
// is ""), a grid narrowed to one trial by --set, and an experiment without
// variants each finish, rebuild their report after the report folder was
// removed ('runner report --run N') and after a report killed while it
// wrote its page (the same command), and reproduce. Before, the report was
// rebuilt by trial name: 'runner report' of a one-trial run exited 1 with
// 'trial "" has no result in run 1 (status "")', on every try.
func TestOneTrialRunRebuildsItsReport(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(oneTrialConfig)
	for _, c := range []struct {
		name   string
		args   []string
		trials int
	}{
		{"one trial", []string{"--experiment", "one"}, 1},
		{"grid narrowed to one trial", []string{"--experiment", "seeds", "--set", "seed=2"}, 1},
		{"no variants", []string{"--experiment", "seeds"}, 2},
	} {
		exp := c.args[1]
		args := append(c.args, "--quiet")
		out := e.mustRun(0, args...)
		m := regexp.MustCompile(`run (\d+) finished: (\d+) trials`).FindStringSubmatch(out)
		if m == nil || m[2] != strconv.Itoa(c.trials) {
			t.Fatalf("%s: %q, want a run of %d trials", c.name, out, c.trials)
		}
		run := m[1]
		dir := filepath.Join(e.dir, "reports", exp, "run-"+run)
		page := filepath.Join(dir, "index.html")
		if _, err := os.Stat(page); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The report folder removed: 'runner report' writes it again.
		os.RemoveAll(dir)
		out = e.mustRun(0, "report", "--run", run, "--quiet")
		if !strings.Contains(out, "report of run "+run) {
			t.Errorf("%s: report: %s", c.name, out)
		}
		for _, f := range []string{"index.html", "summary.md"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s: rebuilt report: %v", c.name, err)
			}
		}
		// A report killed while it writes its page: the same command
		// writes it again.
		e.runKilled("report:page", "report", "--run", run, "--quiet")
		out = e.mustRun(0, args...)
		if !strings.Contains(out, "report written again") {
			t.Errorf("%s: after an interrupted report: %s", c.name, out)
		}
		out = e.mustRun(0, "repro", "--run", run, "--quiet")
		if !strings.Contains(out, "match") {
			t.Errorf("%s: repro: %s", c.name, out)
		}
	}
}

// manyConfig: 30 tiny trials, so that a report copies 30 logs and their
// outputs.
func manyConfig() string {
	seeds := make([]string, 30)
	for i := range seeds {
		seeds[i] = strconv.Itoa(i + 1)
	}
	return `
[experiments.many]
pipeline = "artificial"
[experiments.many.settings]
time_steps = 5
steps = 5
[experiments.many.grid]
seed = [` + strings.Join(seeds, ", ") + `]
`
}

// TestInterruptDuringReport: Ctrl-C or SIGTERM during the report phase
// (sent by the fault points themselves, at a chosen moment: the report
// stage starting, the 10th file the report copies) stops the runner
// before it writes the rest of the report, with exit 130; the run is left
// resumable and the same command finishes it. Before, the report's copies
// and its page were written with the signal ignored (context.WithoutCancel):
// a 3,000-trial run went on for 94 s after Ctrl-C and exited 0.
func TestInterruptDuringReport(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(manyConfig())
	page := filepath.Join(e.dir, "reports", "many", "run-1", "index.html")
	state := func() (status, report string) {
		t.Helper()
		if err := e.db().QueryRow(`SELECT status, report_state FROM runs WHERE id = 1`).Scan(&status, &report); err != nil {
			t.Fatal(err)
		}
		return status, report
	}
	args := []string{"--experiment", "many", "--quiet"}

	// Ctrl-C as the report stage starts: the run is interrupted, and the
	// same command resumes it (nothing is trained again).
	out, errs, code := e.runWithEnv([]string{"GOLDSTONE_FAULT=start:report-artificial!int"}, args...)
	if code != exitInterrupted || !strings.Contains(out, "run 1 interrupted") {
		t.Fatalf("Ctrl-C in the report stage: exit %d\n%s%s", code, out, errs)
	}
	if st, _ := state(); st != "interrupted" {
		t.Errorf("run %s after Ctrl-C in the report stage, want interrupted", st)
	}
	if _, err := os.Stat(page); err == nil {
		t.Errorf("the page was written after Ctrl-C in the report stage")
	}
	out = e.mustRun(0, args...)
	if !strings.Contains(out, "run 1 resumed and finished: 30 trials: 30 done") || !strings.Contains(out, "stages: 1 ran, 30 cached") {
		t.Errorf("resumed after Ctrl-C in the report stage: %s", out)
	}
	if _, err := os.Stat(page); err != nil {
		t.Errorf("resumed: %v", err)
	}

	// Ctrl-C while the report copies its files: the run has finished,
	// its report is not, and the same command writes it.
	os.RemoveAll(filepath.Join(e.dir, "reports"))
	out, errs, code = e.runWithEnv([]string{"GOLDSTONE_FAULT=report:copy@10!int"}, args...)
	if code != exitInterrupted || !strings.Contains(out, "its report was interrupted: run the same command again to write it") {
		t.Fatalf("Ctrl-C while the report copies: exit %d\n%s%s", code, out, errs)
	}
	if st, rep := state(); st != "finished" || rep == "done" {
		t.Errorf("after Ctrl-C while the report copies: run %s, report %s; want finished, not done", st, rep)
	}
	if _, err := os.Stat(page); err == nil {
		t.Errorf("the page was written after Ctrl-C")
	}
	if logs, _ := filepath.Glob(filepath.Join(e.dir, "reports", "many", "run-1", "logs", "*.log")); len(logs) != 0 {
		t.Errorf("%d logs copied after Ctrl-C: the copies are renamed into place together, or not at all", len(logs))
	}
	out = e.mustRun(0, args...)
	if !strings.Contains(out, "report written again") {
		t.Errorf("after Ctrl-C while the report copies: %s", out)
	}
	if logs, _ := filepath.Glob(filepath.Join(e.dir, "reports", "many", "run-1", "logs", "*.log")); len(logs) != 30 {
		t.Errorf("%d logs copied, want 30", len(logs))
	}

	// SIGTERM while 'runner report' copies: the same holds.
	out, errs, code = e.runWithEnv([]string{"GOLDSTONE_FAULT=report:copy@5!term"}, "report", "--run", "1", "--quiet")
	if code != exitInterrupted {
		t.Fatalf("SIGTERM during runner report: exit %d\n%s%s", code, out, errs)
	}
	if st, rep := state(); st != "finished" || rep == "done" {
		t.Errorf("after SIGTERM during runner report: run %s, report %s", st, rep)
	}
	e.mustRun(0, "report", "--run", "1", "--quiet")
	if st, rep := state(); st != "finished" || rep != "done" {
		t.Errorf("after runner report: run %s, report %s", st, rep)
	}
}

// makeReadOnly makes path (a file or a directory) read-only for this
// process until the test ends: chmod a-w, or, as root, whom file modes do
// not bind (the tests and CI run as root), the immutable attribute
// (chattr +i), which binds root too. It skips the test where that cannot
// be set (a file system without attributes, no CAP_LINUX_IMMUTABLE).
func makeReadOnly(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, fi.Mode().Perm()&^0o222); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(path, fi.Mode().Perm()) })
		return
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("running as root and cannot make %s read-only: chattr +i: %v: %s", path, err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
}

// TestReadOnlyDatabaseFailsAtOnce: a command that writes the results
// database (report, run, repro) on a database it cannot write (its
// directory read-only, so SQLite cannot create results.db-wal; the file
// read-only; a read-only file system) fails at once, even with a long
// --db-wait, with one line naming the file and why; the commands that only
// read it work. Before, 'runner report' retried every write for --db-wait
// (25.6 s and 4 error lines at --db-wait 10s, more than 7 minutes at the
// default) and, on a read-only directory, said "migrate: unable to open
// database file: no such file or directory" of a file that exists.
func TestReadOnlyDatabaseFailsAtOnce(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(oneTrialConfig)
	db := filepath.Join(e.dir, "ro", "results.db")
	e.mustRun(0, "--experiment", "one", "--quiet", "--db", "ro/results.db")
	e.mustRun(0, "--experiment", "seeds", "--quiet", "--db", "ro/results.db")
	if _, err := os.Stat(db + "-wal"); err == nil {
		t.Fatalf("%s-wal left by a runner that ended", db)
	}
	writers := [][]string{
		{"report", "--run", "1"},
		{"--experiment", "one"},
		{"repro", "--run", "1"},
	}
	readers := [][]string{
		{"runs"},
		{"results", "--run", "2"},
		{"diff", "1", "2"},
		{"compare", "1", "2", "--out", filepath.Join(e.dir, "cmp")},
		{"export", "--run", "2", "--out", filepath.Join(e.dir, "export")},
	}
	check := func(what, want string, run func(args ...string) (string, string, int)) {
		t.Helper()
		for _, args := range writers {
			args = append(args, "--db", "ro/results.db", "--db-wait", "10s", "--quiet")
			start := time.Now()
			out, errs, code := run(args...)
			took := time.Since(start)
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			if code != exitUsage || len(lines) != 1 || !strings.Contains(errs, "ro/results.db: read-only ("+want) || took > 5*time.Second {
				t.Errorf("%s: runner %s: exit %d after %v, want 2 at once with one line naming the file and %q\n%s%s",
					what, strings.Join(args, " "), code, took.Round(time.Millisecond), want, out, errs)
			}
		}
		for _, args := range readers {
			args = append(args, "--db", "ro/results.db")
			if out, errs, code := run(args...); code != 0 {
				t.Errorf("%s: runner %s: exit %d\n%s%s", what, strings.Join(args, " "), code, out, errs)
			}
		}
	}
	local := func(args ...string) (string, string, int) { return e.run(args...) }

	// The directory first, while the database is clean (no -wal, -shm).
	t.Run("directory", func(t *testing.T) {
		makeReadOnly(t, filepath.Dir(db))
		check("read-only directory", "the directory "+filepath.Dir(db), local)
	})
	t.Run("file", func(t *testing.T) {
		makeReadOnly(t, db)
		check("read-only file", "the file", local)
	})
	t.Run("file system", func(t *testing.T) {
		check("read-only file system", "a read-only file system", func(args ...string) (string, string, int) {
			return e.runReadOnly("ro", args...)
		})
	})
	// Nothing was changed: the database still reads as it did.
	e.mustRun(0, "results", "--run", "2", "--db", "ro/results.db")
}

// TestReportsApartFromWorkdir: --reports equal to --workdir, or inside
// one of the folders the runner keeps there (tmp, cache, a repro's
// scratch...), is refused before anything is written, naming both; a
// reports folder elsewhere inside the workdir is fine. Before, the reports
// of an experiment named tmp went to <workdir>/tmp/run-1, which the next
// run's clean-up of its scratch space removed.
func TestReportsApartFromWorkdir(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(strings.ReplaceAll(oneTrialConfig, "experiments.one", "experiments.tmp"))
	for _, args := range [][]string{
		{"--experiment", "tmp", "--reports", "work"},
		{"--experiment", "tmp", "--reports", "./work/", "--workdir", "work"},
		{"--experiment", "tmp", "--reports", "work/tmp/reports"},
		{"--experiment", "tmp", "--reports", "work/cache"},
		{"report", "--run", "1", "--reports", "work"},
		{"gc", "--keep-last", "1", "--reports", "work/repro-x"},
	} {
		_, errs, code := e.run(append(args, "--quiet")...)
		if code != exitUsage || !strings.Contains(errs, "--reports ") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("runner %s: exit %d, want 2 with one line naming --reports\n%s", strings.Join(args, " "), code, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dir, "results.db")); err == nil {
		t.Errorf("a refused command created the results database")
	}
	// Inside the workdir but apart from its own folders: fine, and the
	// reports of tmp outlive the next run.
	args := []string{"--experiment", "tmp", "--reports", "work/reports", "--quiet"}
	e.mustRun(0, args...)
	e.mustRun(0, append(args, "--set", "steps=21")...)
	for _, run := range []string{"run-1", "run-2"} {
		if _, err := os.Stat(filepath.Join(e.dir, "work", "reports", "tmp", run, "index.html")); err != nil {
			t.Errorf("report of %s: %v", run, err)
		}
	}
}

// TestReproAndVerifyCompareSeries: repro compares every series point with
// the recorded run (and --series=false skips it), and verify checks every
// recorded series point against the trial's series file in the cache: a
// point changed in the results database, and a point doubled in a cache
// entry's series file (its manifest rewritten to match, as code that
// wrote the point twice would leave it), each make both commands exit 1
// naming the trial, the metric and the step. Before, both compared
// summaries (repro) or digests (verify) only, and passed.
func TestReproAndVerifyCompareSeries(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(oneTrialConfig)
	e.mustRun(0, "--experiment", "seeds", "--quiet")
	if out := e.mustRun(0, "verify"); !strings.Contains(out, "2 series files of 1 runs checked against the recorded points: 0 differ") {
		t.Errorf("verify: %s", out)
	}
	if out := e.mustRun(0, "repro", "--run", "1", "--quiet"); !strings.Contains(out, "series points") {
		t.Errorf("repro: %s", out)
	}
	db := e.db()
	var trial, cacheDir string
	if err := db.QueryRow(`SELECT trial FROM trial_params WHERE run_id = 1 AND key = 'name' AND value = 'seed=1'`).Scan(&trial); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT cache_dir FROM trial_output_rows WHERE run_id = 1 AND trial = ? AND file = 'result/series.arrow'`, trial).Scan(&cacheDir); err != nil {
		t.Fatal(err)
	}
	// want: exit 1, and a line naming the trial, the metric and the step.
	want := func(what string, args ...string) {
		t.Helper()
		out, errs, code := e.run(args...)
		named := false
		for _, l := range strings.Split(out, "\n") {
			named = named || strings.Contains(l, "seed=1") && strings.Contains(l, "series loss step 3:")
		}
		if code != 1 || !named {
			t.Errorf("%s: runner %s: exit %d, want 1 naming trial seed=1, series loss, step 3\n%s%s", what, strings.Join(args, " "), code, out, errs)
		}
	}

	// A changed point in the results database.
	if _, err := db.Exec(`UPDATE metrics SET value = value * 2 WHERE run_id = 1 AND trial = ? AND name = 'loss' AND step = 3`, trial); err != nil {
		t.Fatal(err)
	}
	want("changed point", "verify")
	want("changed point", "repro", "--run", "1", "--quiet")
	if out := e.mustRun(0, "repro", "--run", "1", "--quiet", "--series=false"); !strings.Contains(out, "series not compared") {
		t.Errorf("repro --series=false: %s", out)
	}
	if _, err := db.Exec(`UPDATE metrics SET value = value / 2 WHERE run_id = 1 AND trial = ? AND name = 'loss' AND step = 3`, trial); err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "verify")

	// A doubled point in the cache entry's series file, the entry's
	// digests brought in line.
	file := filepath.Join(cacheDir, "result", trialio.SeriesArrow)
	s, err := trialio.ReadSeries(file)
	if err != nil {
		t.Fatal(err)
	}
	var doubled trialio.Series
	for i := range s.Step {
		doubled.Add(s.Metric[i], int(s.Step[i]), s.Value[i])
		if s.Metric[i] == "loss" && s.Step[i] == 3 {
			doubled.Add(s.Metric[i], int(s.Step[i]), s.Value[i])
		}
	}
	if err := trialio.WriteSeries(file, &doubled); err != nil {
		t.Fatal(err)
	}
	sum, err := pipeline.Digest(t.Context(), filepath.Join(cacheDir, "result"))
	if err != nil {
		t.Fatal(err)
	}
	var man map[string]any
	b, _ := os.ReadFile(filepath.Join(cacheDir, "manifest.json"))
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	man["outputs"].(map[string]any)["result"] = sum
	b, _ = json.Marshal(man)
	if err := os.WriteFile(filepath.Join(cacheDir, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := e.mustRun(1, "verify"); !strings.Contains(out, "0 corrupt") || !strings.Contains(out, "twice") {
		t.Errorf("verify of a doubled point: the entry's digests hold, and the point is named doubled:\n%s", out)
	}
	want("doubled point", "verify")
	want("doubled point", "repro", "--run", "1", "--quiet")
	e.mustRun(0, "verify", "--series=false")
}
