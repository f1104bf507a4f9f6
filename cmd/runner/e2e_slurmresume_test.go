package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runFakeArray runs the tasks of a job the fake sbatch recorded (its
// script, with the array index of each task), as Slurm would, and
// returns how many ran.
func runFakeArray(t *testing.T, fake, job string, indices ...int) {
	t.Helper()
	script := filepath.Join(fake, "sbatch."+job+".script")
	for _, i := range indices {
		cmd := exec.Command("sh", script)
		cmd.Env = append(os.Environ(), fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", i), "SLURM_ARRAY_JOB_ID="+job, "SLURM_JOB_ID="+job)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("task %s_%d: %v\n%s", job, i, err, out)
		}
	}
}

// TestSlurmSameCommandFinishesTheRun: the same command, run again after
// the waiting submit was stopped, finishes the run whichever way it stands:
// every task ended (it collects and reports; before, it failed with
// "workdir ... is in use by another runner (pid <its own pid>)", exit 2),
// and tasks still queued (it waits for them and finishes; before, it
// refused, exit 1). Values equal the local run's.
func TestSlurmSameCommandFinishesTheRun(t *testing.T) {
	set := []string{"--experiment", "small", "--set", "seed=1"}
	for _, queued := range []bool{false, true} {
		t.Run(fmt.Sprintf("queued=%v", queued), func(t *testing.T) {
			fake := fakeSlurmBin(t)
			e := newEnv(t)
			e.mustRun(0, append(set, "--db", "local.db", "--workdir", "localwork", "--quiet")...)
			local := resultsOf(t, e, "local.db", "1")
			slurm := append(set, "--executor", "slurm", "--slurm-poll", "20ms", "--quiet")
			out := e.mustRun(0, append(slurm, "--detach")...)
			s := parseSubmission(t, out)
			idx := make([]int, s.n)
			for i := range idx {
				idx[i] = i
			}
			runFakeArray(t, fake, s.job, idx...)
			if queued {
				// squeue says the array is still there once, then that it left.
				os.WriteFile(filepath.Join(fake, "squeue.out"), []byte(s.job+"_0|COMPLETING|None\n"), 0o644)
				os.WriteFile(filepath.Join(fake, "bin", "squeue"), []byte("#!/bin/sh\nf='"+filepath.Join(fake, "squeue.out")+"'\ncat \"$f\" 2>/dev/null; rm -f \"$f\"; true\n"), 0o755)
			}
			out, errs, code := e.run(slurm...)
			if code != 0 || !strings.Contains(out, "finished") {
				t.Fatalf("the same command: exit %d\n%s\n%s", code, out, errs)
			}
			if got := resultsOf(t, e, "results.db", s.run); got != local {
				t.Errorf("results differ from the local run:\nslurm %s\nlocal %s", got, local)
			}
			if n, _ := filepath.Glob(filepath.Join(fake, "sbatch.*.args")); len(n) != 1 {
				t.Errorf("sbatch calls %v: want the first submission only", n)
			}
		})
	}
}

// TestCancelFindsAnUnrecordedSubmission: a submitter killed right after
// sbatch (fault point slurm:submitted) left its array queued but not in
// the database; runner cancel reads the run's intent, finds the array in
// the queue by its job name and cancels it. Before, it said "nothing to
// cancel", marked the run interrupted and left the tasks queued.
func TestCancelFindsAnUnrecordedSubmission(t *testing.T) {
	fake := fakeSlurmBin(t)
	e := newEnv(t)
	e.runKilled("slurm:submitted", "--experiment", "small", "--executor", "slurm", "--detach", "--set", "seed=1", "--quiet")
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte("100_0|PENDING|Resources\n100_1|PENDING|Resources\n"), 0o644)
	out := e.mustRun(0, "cancel", "--run", "1")
	if !strings.Contains(out, "cancelled job 100 (unrecorded)") {
		t.Errorf("cancel: %s", out)
	}
	if calls, _ := os.ReadFile(filepath.Join(fake, "scancel.calls")); strings.TrimSpace(string(calls)) != "100" {
		t.Errorf("scancel calls %q", calls)
	}
	if sq, _ := os.ReadFile(filepath.Join(fake, "squeue.calls")); !strings.Contains(string(sq), "--name=gs-small-1-") {
		t.Errorf("squeue not asked by the run's job names:\n%s", sq)
	}
}
