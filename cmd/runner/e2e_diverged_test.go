package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// divergesConfig is a tiny artificial experiment whose paper's update, at
// a gauge rate far above the paper's, diverges: psi passes its bound at
// the first step after a gauge round.
const divergesConfig = `
[experiments.diverges]
pipeline = "artificial"
[experiments.diverges.settings]
time_steps = 6
steps = 300
clip = 0.01
lr = 1.0
lr_s0 = 100.0
k1 = 10
snapshots = [0, 300]
[experiments.diverges.grid]
seed = [1]
[[experiments.diverges.variants]]
name = "gd"
[[experiments.diverges.variants]]
name = "goldstone-linear"
gauge = "goldstone"
rotation = "linear"
guard = false
flip_walls = false
gauge_lr = 50.0
`

// TestDivergedTrialIsAResult: a trial whose training diverges is a result
// of the algorithm, not a failure of the run: the run exits 0, finished,
// its summary line counts the trial as diverged and says where; the store
// records it diverged with its step and the thresholds it never reached as
// never; results, runs and both reports show it; the same command is up to
// date (also with --retry-failed: a divergence is deterministic), repro
// reproduces it, and --fail-on-diverged makes the exit 1. (Before, the
// trial failed and the run exited 1.)
func TestDivergedTrialIsAResult(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(e2eConfig + divergesConfig)
	out := e.mustRun(0, "--experiment", "diverges", "--quiet")
	if !strings.Contains(out, "diverges: run 1 finished: 2 trials: 1 done, 1 diverged, 0 failed; stages: 3 ran, 0 cached; status finished") {
		t.Fatalf("summary line:\n%s", out)
	}
	notice := regexp.MustCompile(`diverged at step (\d+): psi \S+ past its bound \S+`)
	m := notice.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "\n  diverged ") {
		t.Fatalf("the diverged trial is not listed with where it diverged:\n%s", out)
	}
	if s := e.runStatus(1); s != "finished" {
		t.Errorf("run status %s, want finished", s)
	}
	var status, msg string
	if err := e.db().QueryRow(`SELECT status, error FROM trial_status WHERE run_id = 1 AND status <> 'done'`).Scan(&status, &msg); err != nil {
		t.Fatal(err)
	}
	if status != "diverged" || msg != m[0] {
		t.Errorf("trial recorded %s %q, want diverged %q", status, msg, m[0])
	}
	for _, r := range e.results("diverges") {
		if r.Status != "diverged" {
			if r.Status != "done" || r.Metrics["diverged_step"] != nil || !finiteMetric(r, "final_excess") {
				t.Errorf("trial %s: %s %v", r.Trial, r.Status, r.Metrics)
			}
			continue
		}
		if v := r.Metrics["diverged_step"]; v == nil || m[1] != strconv.Itoa(int(*v)) {
			t.Errorf("diverged_step %v, the notice says step %s", v, m[1])
		}
		if v := r.Metrics["steps_to_excess_1"]; v == nil || !math.IsInf(float64(*v), 1) {
			t.Errorf("steps_to_excess_1 of the diverged trial %v, want never", v)
		}
		if v, ok := r.Metrics["final_excess"]; !ok || v != nil {
			t.Errorf("final_excess of the diverged trial %v (%v), want no value (NaN: null)", v, ok)
		}
	}
	if out := e.mustRun(0, "results", "--experiment", "diverges"); !strings.Contains(out, "diverged") || !strings.Contains(out, m[0]) {
		t.Errorf("results do not show the diverged trial with where:\n%s", out)
	}
	if out := e.mustRun(0, "runs"); !strings.Contains(out, "1/2 (1 diverged)") {
		t.Errorf("runs do not count the diverged trial:\n%s", out)
	}
	dir := filepath.Join(e.dir, "reports", "diverges", "run-1")
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !strings.Contains(string(md), "## Diverged trials (1)") || !strings.Contains(string(md), "| goldstone-linear seed=1 | "+m[0]) {
		t.Errorf("summary.md does not list the diverged trial (%v):\n%s", err, md)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "index.html")); err != nil || !strings.Contains(string(page), "<h2>Diverged trials</h2>") {
		t.Errorf("index.html does not list the diverged trial (%v)", err)
	}

	// The same command: up to date, also when asked to retry failures.
	for _, extra := range [][]string{nil, {"--retry-failed"}} {
		out := e.mustRun(0, append([]string{"--experiment", "diverges", "--quiet"}, extra...)...)
		if !strings.Contains(out, "up to date (run 1, finished, 2 trials: 1 done, 1 diverged, 0 failed); nothing to run") {
			t.Errorf("again %v:\n%s", extra, out)
		}
	}
	// --fail-on-diverged: exit 1, the run as it is.
	out, errs, code := e.run("--experiment", "diverges", "--quiet", "--fail-on-diverged")
	if code != 1 || !strings.Contains(errs, "1 of 2 trials diverged (--fail-on-diverged") {
		t.Errorf("--fail-on-diverged: exit %d\n%s\n%s", code, out, errs)
	}
	if s := e.runStatus(1); s != "finished" {
		t.Errorf("run status after --fail-on-diverged %s, want finished", s)
	}
	// repro runs it again and compares status and step.
	if out := e.mustRun(0, "repro", "--experiment", "diverges"); !strings.Contains(out, "match") || strings.Contains(out, "DRIFT") {
		t.Errorf("repro:\n%s", out)
	}

	// A fresh run with --fail-on-diverged exits 1 and is recorded as any.
	f := newEnv(t)
	f.writeConfig(e2eConfig + divergesConfig)
	out, errs, code = f.run("--experiment", "diverges", "--quiet", "--fail-on-diverged")
	if code != 1 || !strings.Contains(out, "1 diverged, 0 failed") || !strings.Contains(errs, "trials diverged") || f.runStatus(1) != "finished" {
		t.Errorf("fresh run with --fail-on-diverged: exit %d, status %s\n%s\n%s", code, f.runStatus(1), out, errs)
	}
}

func finiteMetric(r resultJSON, k string) bool {
	v := r.Metrics[k]
	return v != nil && !math.IsNaN(float64(*v)) && !math.IsInf(float64(*v), 0)
}
