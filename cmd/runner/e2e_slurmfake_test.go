package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCollectNeedsTheDatabase: collect on a database path that does not
// exist (a host that cannot see it, a typo) fails with one line and
// creates nothing there. Before, it created an empty database and then
// failed with "run 1: runs: not found".
func TestCollectNeedsTheDatabase(t *testing.T) {
	e := newEnv(t)
	db := filepath.Join(e.dir, "elsewhere", "results.db")
	os.MkdirAll(filepath.Dir(db), 0o755)
	_, errs, code := e.run("collect", "--run", "1", "--db", db)
	if code != 2 || !strings.Contains(errs, "no such results database") {
		t.Errorf("collect on a missing database: exit %d: %s", code, errs)
	}
	if ents, _ := os.ReadDir(filepath.Dir(db)); len(ents) != 0 {
		t.Errorf("collect left %v behind", ents)
	}
}

// fakeSlurmBin puts an sbatch that answers job ids 100, 101, ... (saving
// each call's arguments and script) and an squeue that prints
// dir/squeue.out on PATH, and returns dir.
func fakeSlurmBin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("sbatch", `#!/bin/sh
d='`+dir+`'
if [ "$1" = --test-only ]; then
  printf '%s\n' "$@" >> "$d/testonly.args"; cat > /dev/null
  if [ -f "$d/refuse" ]; then cat "$d/refuse" >&2; exit 1; fi
  echo "sbatch: Job 1 to start at 2026-01-01T00:00:00 using 1 processors on nodes n1 in partition debug" >&2; exit 0
fi
n=$(cat "$d/n" 2>/dev/null || echo 100); echo $((n+1)) > "$d/n"
printf '%s\n' "$@" > "$d/sbatch.$n.args"; cat > "$d/sbatch.$n.script"
echo $n
`)
	write("squeue", `#!/bin/sh
printf '%s\n' "$@" >> '`+dir+`/squeue.calls'
cat '`+dir+`/squeue.out' 2>/dev/null; true
`)
	write("scontrol", `#!/bin/sh
printf '%s\n' "$@" >> '`+dir+`/scontrol.calls'
if [ -f '`+dir+`/scontrol.out' ]; then cat '`+dir+`/scontrol.out'; else echo 'MaxArraySize            = 1001'; fi
`)
	write("scancel", `#!/bin/sh
printf '%s\n' "$@" >> '`+dir+`/scancel.calls'
`)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// TestKilledSubmitterNeverSubmitsTwice: the submitting runner killed
// between sbatch and recording the job (fault point slurm:submitted) left
// the array queued and unrecorded; the same command finds it by its job
// name, adopts it (and submits the collect job the killed runner never
// did) and refuses to submit the trials again. Before, it submitted a
// second array that ran every trial again.
func TestKilledSubmitterNeverSubmitsTwice(t *testing.T) {
	fake := fakeSlurmBin(t)
	e := newEnv(t)
	args := []string{"--experiment", "small", "--executor", "slurm", "--detach", "--slurm-collect-job", "--set", "seed=1", "--quiet"}
	e.runKilled("slurm:submitted", args...)
	calls := func() []string {
		m, _ := filepath.Glob(filepath.Join(fake, "sbatch.*.args"))
		return m
	}
	if len(calls()) != 1 {
		t.Fatalf("sbatch calls before the kill: %v", calls())
	}
	first, _ := os.ReadFile(filepath.Join(fake, "sbatch.100.args"))
	var name string
	for _, a := range strings.Split(string(first), "\n") {
		if v, ok := strings.CutPrefix(a, "--job-name="); ok {
			name = v
		}
	}
	if !strings.HasPrefix(name, "gs-small-1-") {
		t.Fatalf("job name %q: want gs-small-1-<token>", name)
	}
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte("100_0|PENDING|Resources\n100_1|RUNNING|None\n"), 0o644)
	_, errs, code := e.run(args...)
	if code != 1 || !strings.Contains(errs, "already submitted") || !strings.Contains(errs, "job 100") {
		t.Errorf("re-run after the kill: exit %d: %s", code, errs)
	}
	if got := calls(); len(got) != 2 {
		t.Fatalf("sbatch calls after the re-run: %v (want the one array and its collect job)", got)
	}
	second, _ := os.ReadFile(filepath.Join(fake, "sbatch.101.args"))
	if strings.Contains(string(second), "--array") || !strings.Contains(string(second), "--dependency=afterany:100") {
		t.Errorf("second sbatch call:\n%s", second)
	}
	sq, _ := os.ReadFile(filepath.Join(fake, "squeue.calls"))
	if !strings.Contains(string(sq), "--name="+name) {
		t.Errorf("squeue was not asked for the job name %s:\n%s", name, sq)
	}
	var jobs string
	e.db().QueryRow(`SELECT group_concat(job_id || ':' || role || ':' || attempt, ' ') FROM slurm_jobs`).Scan(&jobs)
	if jobs != "100:trials:1 101:collect:1" {
		t.Errorf("recorded jobs %q", jobs)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "work", "batch", "small", "run-1", "submitting.json")); !os.IsNotExist(err) {
		t.Errorf("intent left after the adoption: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(e.dir, "work", "batch", "small", "run-1", "submit.1.sh")); err != nil || !strings.Contains(string(b), "#SBATCH --array=") {
		t.Errorf("copy of the batch script: %v\n%s", err, b)
	}
}

// TestCancelRun: runner cancel scancels the run's queued jobs and marks the
// run interrupted (the submitting command resumes it).
func TestCancelRun(t *testing.T) {
	fake := fakeSlurmBin(t)
	e := newEnv(t)
	e.mustRun(0, "--experiment", "small", "--executor", "slurm", "--detach", "--slurm-collect-job", "--set", "seed=1", "--quiet")
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte("100_0|RUNNING|None\n100_1|PENDING|Resources\n"), 0o644)
	out := e.mustRun(0, "cancel", "--run", "1")
	if !strings.Contains(out, "cancelled job 100 (trials)") {
		t.Errorf("cancel: %s", out)
	}
	calls, _ := os.ReadFile(filepath.Join(fake, "scancel.calls"))
	if strings.TrimSpace(string(calls)) != "100" {
		t.Errorf("scancel calls %q", calls)
	}
	var status string
	e.db().QueryRow(`SELECT status FROM runs WHERE id = 1`).Scan(&status)
	if status != "interrupted" {
		t.Errorf("run %s after cancel", status)
	}
	if _, errs, code := e.run("cancel", "--run", "7"); code != 2 || !strings.Contains(errs, "7") {
		t.Errorf("cancel of an unknown run: exit %d %s", code, errs)
	}
}

// TestSlurmDivergedTrial: through the fake sbatch, a task whose trial
// diverges exits 0 with a result "diverged"; collect records the trial as
// diverged, says so in its counts, and ends the run finished (exit 0), as
// the local executor does.
func TestSlurmDivergedTrial(t *testing.T) {
	fakeSlurmBin(t)
	e := newEnv(t)
	e.writeConfig(e2eConfig + divergesConfig)
	e.mustRun(0, "--experiment", "diverges", "--executor", "slurm", "--detach", "--quiet")
	var statuses []string
	for _, i := range []string{"0", "1"} {
		out := e.mustRun(0, "worker", "--experiment", "diverges", "--run", "1", "--index", i)
		for _, s := range []string{"done", "diverged"} {
			if strings.Contains(out, "attempt 1: "+s+" in ") {
				statuses = append(statuses, s)
			}
		}
	}
	if strings.Join(statuses, ",") != "done,diverged" {
		t.Fatalf("task results %v, want done,diverged", statuses)
	}
	out := e.mustRun(0, "collect", "--run", "1")
	if !strings.Contains(out, "run 1: 2 trials: 1 done, 1 diverged, 0 failed, 0 interrupted, 0 without a result; 2 new result(s) collected") || !strings.Contains(out, "run 1 finished") {
		t.Fatalf("collect:\n%s", out)
	}
	var status, msg string
	e.db().QueryRow(`SELECT status, error FROM trial_status WHERE run_id = 1 AND status <> 'done'`).Scan(&status, &msg)
	if status != "diverged" || !strings.HasPrefix(msg, "diverged at step ") {
		t.Errorf("trial recorded %s %q, want diverged at a step", status, msg)
	}
	if s := e.runStatus(1); s != "finished" {
		t.Errorf("run status %s, want finished", s)
	}
}

// TestSlurmPackedSweepFake: with --slurm-trials-per-task 4 a sweep of 6
// trials is submitted as ceil(6/4) = 2 array tasks, mapped to their trials
// by packs.1.json; a lost task's 4 trials show as missing in status, and
// the same command repacks only them (one task, packs.2.json); collect
// then ends the run with the local run's values.
func TestSlurmPackedSweepFake(t *testing.T) {
	fake := fakeSlurmBin(t)
	e := newEnv(t)
	set := []string{"--experiment", "small", "--set", "seed=1,2", "--set", "steps=100"}
	e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork", "--quiet")...)
	local := resultsOf(t, e, "local.db", "1")
	slurm := append(set, "--executor", "slurm", "--detach", "--slurm-trials-per-task", "4", "--quiet")
	out := e.mustRun(0, slurm...)
	s := parseSubmission(t, out)
	if s.n != 6 || s.array != "0-1" || !strings.Contains(out, "2 tasks of up to 4 trials") {
		t.Fatalf("submission: %+v\n%s", s, out)
	}
	arrays := func() (n int, specs []string) {
		m, _ := filepath.Glob(filepath.Join(fake, "sbatch.*.args"))
		for _, p := range m {
			b, _ := os.ReadFile(p)
			for _, a := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(a, "--array="); ok {
					specs = append(specs, v)
				}
			}
		}
		return len(m), specs
	}
	if n, specs := arrays(); n != 1 || strings.Join(specs, " ") != "0-1" {
		t.Fatalf("sbatch calls %d, arrays %v: want one array of 2 tasks", n, specs)
	}
	run := filepath.Join(e.dir, "work", "batch", "small", "run-"+s.run)
	if b, err := os.ReadFile(filepath.Join(run, "packs.1.json")); err != nil || !strings.Contains(string(b), `"tasks":[[0,1,2,3],[4,5]]`) {
		t.Fatalf("packs.1.json: %v\n%s", err, b)
	}
	// Task 1 (trials 4 and 5) ran; task 0 was lost.
	runFakeArray(t, fake, s.job, 1)
	st := e.mustRun(0, "status", "--run", s.run)
	if len(regexp.MustCompile(`(?m) done +1 `).FindAllString(st, -1)) != 2 || len(regexp.MustCompile(`(?m) missing +0 `).FindAllString(st, -1)) != 4 {
		t.Errorf("status after task 0 was lost:\n%s", st)
	}
	if out := e.mustRun(0, "collect", "--run", s.run); !strings.Contains(out, "2 done") {
		t.Errorf("collect:\n%s", out)
	}
	out = e.mustRun(0, slurm...)
	if !strings.Contains(out, "4 of 6 trials") || !strings.Contains(out, "1 tasks of up to 4 trials") {
		t.Fatalf("resubmission:\n%s", out)
	}
	if n, specs := arrays(); n != 2 || strings.Join(specs, " ") != "0-1 0" {
		t.Fatalf("sbatch calls %d, arrays %v: want the first array and one task", n, specs)
	}
	if b, err := os.ReadFile(filepath.Join(run, "packs.2.json")); err != nil || !strings.Contains(string(b), `"tasks":[[0,1,2,3]]`) {
		t.Fatalf("packs.2.json: %v\n%s", err, b)
	}
	runFakeArray(t, fake, "101", 0)
	if out := e.mustRun(0, "collect", "--run", s.run); !strings.Contains(out, "finished") {
		t.Fatalf("collect:\n%s", out)
	}
	if got := resultsOf(t, e, "results.db", s.run); got != local {
		t.Errorf("results differ from the local run:\nslurm %s\nlocal %s", got, local)
	}
	var jobs string
	e.db().QueryRow(`SELECT group_concat(job_id, ' ') FROM (SELECT job_id FROM trial_attempts WHERE run_id = ? AND status = 'done' ORDER BY array_index)`, s.run).Scan(&jobs)
	if jobs != "101_0 101_0 101_0 101_0 100_1 100_1" {
		t.Errorf("the trials' tasks: %q", jobs)
	}
}
