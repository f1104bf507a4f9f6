package main

// End-to-end tests of what happens when things go wrong: crashes at chosen
// points (internal/fault), corrupt cache entries, two runners, failed
// trials, bad data. See also e2e_trust_test.go for one test per defect of
// issue 9.

import (
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"goldstone/internal/fault"
)

// faultConfig is a small MovieLens sweep over a synthetic ratings file:
// ingest, binarize, bin and split stages, then 4 trials (2 variants x 2
// seeds) of train and evaluate, then the report.
const faultConfig = `
[experiments.mlf]
pipeline = "movielens"
[experiments.mlf.settings]
dataset = %q
bins = 4
dim = 2
steps = 40
valid_every = 10
gauge_gap_every = 10
k1 = 4
optimizer = "adagrad"
lr = 1.0
lambda = 10.0
[experiments.mlf.grid]
seed = [1, 2]
[[experiments.mlf.variants]]
name = "none"
gauge = "none"
[[experiments.mlf.variants]]
name = "goldstone"
gauge = "goldstone"
`

// faultEnv is an env whose experiments file holds faultConfig over the
// ratings file at ratings (shared, so that trial ids agree between envs).
func faultEnv(t *testing.T, ratings string) *env {
	t.Helper()
	e := newEnv(t)
	e.writeConfig(fmt.Sprintf(faultConfig, ratings))
	return e
}

// runKilled runs the runner with GOLDSTONE_FAULT=point and requires that it
// died of SIGKILL there.
func (e *env) runKilled(point string, args ...string) {
	e.t.Helper()
	cmd := exec.Command(runnerBin, args...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), fault.Env+"="+point)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		e.t.Fatalf("runner with %s=%s: %v, want killed by SIGKILL\n%s", fault.Env, point, err, out)
	}
}

// recorded is everything a run left in the results database that must not
// depend on how often it was interrupted: per trial its status, error,
// parameters, every non-timing summary value and every series point.
func recorded(t *testing.T, db *sql.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT experiment, kind, status FROM runs ORDER BY id`,
		`SELECT trial, status, error FROM trial_status ORDER BY trial`,
		`SELECT trial, key, value FROM trial_params ORDER BY trial, key`,
		`SELECT trial, metric, quote(value) FROM summary WHERE metric NOT LIKE '%_seconds' ORDER BY trial, metric`,
		`SELECT trial, metric, count(*), min(step), max(step), quote(sum(value)), quote(min(value)), quote(max(value))
			FROM series GROUP BY trial, metric ORDER BY trial, metric`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				b.WriteString(v.String + "|")
			}
			b.WriteString("\n")
		}
		rows.Close()
	}
	return b.String()
}

// seriesDigest is a digest of every series point, in order, for an exact
// comparison of two databases.
func seriesDigest(t *testing.T, db *sql.DB) string {
	t.Helper()
	var n int
	var s sql.NullString
	if err := db.QueryRow(`SELECT count(*), group_concat(trial || ':' || metric || ':' || step || '=' || quote(value), ',')
		FROM (SELECT * FROM series ORDER BY trial, metric, step)`).Scan(&n, &s); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(s.String))
	return fmt.Sprintf("%d points, sha256 %x", n, sum[:8])
}

// reportFiles lists the report directory of run 1 (relative names).
func reportFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// TestFaultInjection kills a small MovieLens sweep with SIGKILL during
// ingest, mid-trial, between a trial's cache entry and its record, during a
// trial's results transaction and during the report; corrupts a cached
// file; and resumes with two runners started at once. The end state equals
// an uninterrupted run's: one run, every trial done once, the same values.
// Then it kills the rebuild of the finished run's report while it writes
// the HTML page, two repros, an export and a gc, and checks that the next
// command finishes or undoes each.
func TestFaultInjection(t *testing.T) {
	args := []string{"--experiment", "mlf", "--jobs", "2", "--quiet"}
	ratings := filepath.Join(t.TempDir(), "ratings.csv")
	if err := os.WriteFile(ratings, syntheticRatings(3000), 0o644); err != nil {
		t.Fatal(err)
	}
	clean := faultEnv(t, ratings)
	clean.mustRun(0, args...)
	want, wantSeries := recorded(t, clean.db()), seriesDigest(t, clean.db())
	if !strings.Contains(want, "mlf|run|finished|") || strings.Count(want, "|done||") != 4 {
		t.Fatalf("uninterrupted run:\n%s", want)
	}
	wantReport := reportFiles(t, filepath.Join(clean.dir, "reports", "mlf", "run-1"))
	if len(wantReport) == 0 {
		t.Fatal("uninterrupted run wrote no report")
	}

	e := faultEnv(t, ratings)
	// Each point is reached in this order, because what came before it is
	// cached by then.
	for _, point := range []string{
		"promote:ingest-movielens",   // ingest wrote its output, not yet in the cache
		"progress:train-movielens@2", // mid-trial: the second trial has taken its first step
		"promoted:train-movielens",   // a trial's entry is cached, its results not recorded
		"runs:trial@2",               // inside a trial's results transaction
		"start:report-movielens",     // during the report
	} {
		e.runKilled(point, args...)
	}
	// A corrupt cache file: the resumed run must not trust it.
	entries := entryDirs(filepath.Join(e.dir, "work", "cache", "train-movielens", "*"))
	if len(entries) == 0 {
		t.Fatal("no cached trial to corrupt")
	}
	corruptSomeFile(t, entries[0])

	// Two runners at the same moment: one resumes, the other finds the
	// workdir busy (or, if it starts after the first is done, up to date).
	type res struct {
		out, errs string
		code      int
	}
	ch := make(chan res, 2)
	for range 2 {
		go func() {
			cmd := exec.Command(runnerBin, args...)
			cmd.Dir = e.dir
			var o, er strings.Builder
			cmd.Stdout, cmd.Stderr = &o, &er
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			ch <- res{o.String(), er.String(), code}
		}()
	}
	a, b := <-ch, <-ch
	if a.code != 0 {
		a, b = b, a
	}
	if a.code != 0 || (b.code != 0 && b.code != 2) || (b.code == 2 && !strings.Contains(b.errs, "busy") && !strings.Contains(b.errs, "in progress")) {
		t.Fatalf("two runners: exit %d and %d\n%s%s\n%s%s", a.code, b.code, a.out, a.errs, b.out, b.errs)
	}
	if !strings.Contains(a.errs+b.errs, "corrupt") {
		t.Errorf("no warning about the corrupt cache entry:\n%s\n%s", a.errs, b.errs)
	}
	got, gotSeries := recorded(t, e.db()), seriesDigest(t, e.db())
	if got != want {
		t.Errorf("after crashes and resumes, rows differ from the uninterrupted run's:\n%s", lineDiff(want, got))
	}
	if gotSeries != wantSeries {
		t.Errorf("series differ: %s, uninterrupted %s", gotSeries, wantSeries)
	}
	if r := reportFiles(t, filepath.Join(e.dir, "reports", "mlf", "run-1")); strings.Join(r, " ") != strings.Join(wantReport, " ") {
		t.Errorf("report files %v, uninterrupted %v", r, wantReport)
	}
	if out := e.mustRun(0, args...); !strings.Contains(out, "up to date") {
		t.Errorf("after the resume: %s", out)
	}
	verify := e.mustRun(0, "verify")
	if !strings.Contains(verify, " 0 corrupt") {
		t.Errorf("verify after the resume:\n%s", verify)
	}

	// The report of a finished run: its files removed, the same command
	// writes it again (up to date includes the report); killed while it
	// writes the HTML page, the next command finishes it.
	reports := filepath.Join(e.dir, "reports", "mlf", "run-1")
	os.RemoveAll(reports)
	e.runKilled("report:page", args...)
	if out := e.mustRun(0, args...); !strings.Contains(out, "report written again") {
		t.Errorf("after a kill while writing the report: %s", out)
	}
	if r := reportFiles(t, reports); strings.Join(r, " ") != strings.Join(wantReport, " ") {
		t.Errorf("report files after the kill %v, uninterrupted %v", r, wantReport)
	}
	if out := e.mustRun(0, args...); !strings.Contains(out, "nothing to run") {
		t.Errorf("with the report written: %s", out)
	}

	// repro killed mid-way and after its runs: the next command marks the
	// run it left "running" interrupted and removes the scratch.
	e.runKilled("progress:train-movielens@2", "repro", "--experiment", "mlf", "--quiet")
	e.runKilled("repro:ran", "repro", "--experiment", "mlf", "--quiet")
	if out := e.mustRun(0, "repro", "--experiment", "mlf", "--quiet"); !strings.Contains(out, "match") {
		t.Errorf("repro after killed ones: %s", out)
	}
	if scratch, _ := filepath.Glob(filepath.Join(e.dir, "work", "repro-*")); len(scratch) > 0 {
		t.Errorf("scratch of killed repros: %v", scratch)
	}
	var running int
	e.db().QueryRow(`SELECT count(*) FROM runs WHERE status = 'running'`).Scan(&running)
	if running > 0 {
		t.Errorf("%d runs left running", running)
	}

	// export killed between its files: none, then a complete one.
	export := filepath.Join(reports, "export")
	e.runKilled("export:file@3", "export", "--experiment", "mlf")
	if _, err := os.Stat(export); !os.IsNotExist(err) {
		t.Errorf("a killed export left %s (%v)", export, err)
	}
	e.mustRun(0, "export", "--experiment", "mlf")
	if got := reportFiles(t, export); len(got) != 5 {
		t.Errorf("export after a killed one: %v", got)
	}

	// gc of the repro runs killed before it deletes their rows: the next gc
	// finishes it, and the experiment's run is untouched.
	e.runKilled("gc:rows", "gc", "--keep-last", "1")
	out := e.mustRun(0, "gc", "--keep-last", "1")
	if !strings.Contains(out, "deleted 2 runs") {
		t.Errorf("gc after a killed gc: %s", out)
	}
	if got := recorded(t, e.db()); !strings.HasPrefix(got, "mlf|run|finished|\nmlf|repro|finished|\n") {
		t.Errorf("runs after gc:\n%s", got)
	}
	if out := e.mustRun(0, args...); !strings.Contains(out, "nothing to run") {
		t.Errorf("after gc: %s", out)
	}
}

// corruptSomeFile flips 4 bytes in the middle of the largest file under dir
// other than the manifest.
func corruptSomeFile(t *testing.T, dir string) string {
	t.Helper()
	var best string
	var size int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "manifest.json" {
			if fi, err := d.Info(); err == nil && fi.Size() > size {
				best, size = p, fi.Size()
			}
		}
		return nil
	})
	if best == "" || size < 8 {
		t.Fatalf("no file to corrupt under %s", dir)
	}
	f, err := os.OpenFile(best, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4)
	f.ReadAt(buf, size/2)
	for i := range buf {
		buf[i] ^= 0xA5
	}
	if _, err := f.WriteAt(buf, size/2); err != nil {
		t.Fatal(err)
	}
	return best
}

// lineDiff lists the lines of a missing from b ("-") and of b missing from
// a ("+").
func lineDiff(a, b string) string {
	in := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if mb[l] == 0 {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if ma[l] == 0 {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
