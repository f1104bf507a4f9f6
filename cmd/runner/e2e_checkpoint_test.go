package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// checkpointLog is what a trial log says about checkpoints: "checkpoint at
// step S of N: B bytes in Ts" and "resumed from the checkpoint of step S".
var (
	ckptSaved   = regexp.MustCompile(`checkpoint at step (\d+) of \d+: (\d+) bytes in ([0-9.]+)s`)
	ckptResumed = regexp.MustCompile(`resumed from the checkpoint of step (\d+)`)
)

// trialLogs returns the text of every trial log of the env's runs.
func trialLogs(t *testing.T, e *env) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(e.dir, "work", "logs", "*", "run-*", "*.log"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = string(b)
	}
	return out
}

// cachedFiles returns the bytes of every file of the stage's cache entries
// but summary.json (its timings differ) and the cache's manifest.json (its
// times), by entry and name.
func cachedFiles(t *testing.T, e *env, stage string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	root := filepath.Join(e.dir, "work", "cache", stage)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "summary.json" || d.Name() == "manifest.json" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = b
		return nil
	})
	if len(out) == 0 {
		t.Fatalf("no cache entries of %s", stage)
	}
	return out
}

// checkpointCase runs an experiment uninterrupted (default checkpoint
// policy: none written in a run this short) and, in a second env,
// killed with SIGKILL at the given fault points inside the training loop
// ("train:step@N": after the N-th step this process took) with a
// checkpoint every `every` steps, each time resumed by the same command.
// Every recorded value, every series point and every file the trials
// cached (parameters included) must be the uninterrupted run's; every
// resume must start from the newest checkpoint its trial wrote, so that
// fewer than `every` steps are redone; no checkpoint is left at the end.
func checkpointCase(t *testing.T, clean, e *env, stage string, every int, kills []string, args ...string) {
	t.Helper()
	clean.mustRun(0, args...)
	want, wantSeries := recorded(t, clean.db()), seriesDigest(t, clean.db())
	if strings.Count(want, "|done||") == 0 {
		t.Fatalf("uninterrupted run:\n%s", want)
	}
	if ck, _ := filepath.Glob(filepath.Join(clean.dir, "work", "checkpoints", "*", "*", "*")); len(ck) > 0 {
		t.Errorf("the uninterrupted run wrote checkpoints: %v", ck)
	}
	kargs := append([]string{"--checkpoint-every", strconv.Itoa(every)}, args...)
	for i, k := range kills {
		e.runKilled(k, kargs...)
		if i == 0 {
			out := e.mustRun(0, "gc", "--keep-last", "5")
			if !strings.Contains(out, "checkpoints: 1 of interrupted trials kept") {
				t.Errorf("gc after a kill mid-trial: %s", out)
			}
		}
	}
	e.mustRun(0, kargs...)
	if got := recorded(t, e.db()); got != want {
		t.Errorf("killed and resumed, rows differ from the uninterrupted run's:\n%s", lineDiff(want, got))
	}
	if got := seriesDigest(t, e.db()); got != wantSeries {
		t.Errorf("series differ: %s, uninterrupted %s", got, wantSeries)
	}
	wf, gf := cachedFiles(t, clean, stage), cachedFiles(t, e, stage)
	if len(wf) != len(gf) {
		t.Errorf("%d cached files, uninterrupted %d", len(gf), len(wf))
	}
	for name, b := range wf {
		if !bytes.Equal(gf[name], b) {
			t.Errorf("cached %s/%s differs from the uninterrupted run's", stage, name)
		}
	}
	if ck, _ := filepath.Glob(filepath.Join(e.dir, "work", "checkpoints", "*", "*", "*")); len(ck) > 0 {
		t.Errorf("checkpoints left after the run: %v", ck)
	}
	resumes, saves := 0, 0
	var bytesMax int
	var secs []float64
	for name, text := range trialLogs(t, e) {
		last := -1
		for _, line := range strings.Split(text, "\n") {
			if m := ckptSaved.FindStringSubmatch(line); m != nil {
				last, _ = strconv.Atoi(m[1])
				b, _ := strconv.Atoi(m[2])
				s, _ := strconv.ParseFloat(m[3], 64)
				bytesMax, secs = max(bytesMax, b), append(secs, s)
				saves++
			}
			if m := ckptResumed.FindStringSubmatch(line); m != nil {
				s, _ := strconv.Atoi(m[1])
				if s != last {
					t.Errorf("%s: resumed from step %d, the newest checkpoint was of step %d", name, s, last)
				}
				resumes++
			}
		}
	}
	if resumes < len(kills) {
		t.Errorf("%d resumes from a checkpoint after %d kills mid-trial", resumes, len(kills))
	}
	sort.Float64s(secs)
	t.Logf("%s: %d kills, %d resumes, %d checkpoints written, largest %d bytes, write time median %.4fs max %.4fs",
		stage, len(kills), resumes, saves, bytesMax, secs[len(secs)/2], secs[len(secs)-1])
}

// TestCheckpointResumeMovieLens: logistic MF trials (AdaGrad, Goldstone
// rounds, minibatch counter, validation series) killed mid-trial resume
// from their checkpoints bit-identically.
func TestCheckpointResumeMovieLens(t *testing.T) {
	ratings := filepath.Join(t.TempDir(), "ratings.csv")
	if err := os.WriteFile(ratings, syntheticRatings(3000), 0o644); err != nil {
		t.Fatal(err)
	}
	checkpointCase(t, faultEnv(t, ratings), faultEnv(t, ratings), "train-movielens", 5,
		[]string{"train:step@13", "train:step@29", "train:step@3", "train:step@51"},
		"--experiment", "mlf", "--jobs", "1", "--quiet")
}

// TestCheckpointResumeDWE: the DWE trainer (MAP and variational, Adam,
// Goldstone rounds; killed in the minibatch phase, whose draws come from a
// random source the checkpoint carries, and after it) resumes
// bit-identically.
func TestCheckpointResumeDWE(t *testing.T) {
	corpus := writeDWECorpus(t)
	mk := func() *env {
		e := newEnv(t)
		e.writeConfig(fmt.Sprintf(dweConfig, corpus))
		return e
	}
	checkpointCase(t, mk(), mk(), "train-dwe", 7,
		[]string{"train:step@9", "train:step@30", "train:step@45", "train:step@12"},
		"--experiment", "words", "--jobs", "1", "--quiet", "--set", `inference=["map", "vi"]`)
}

// TestInterruptSavesCheckpoint: Ctrl-C mid-trial (default policy: no
// periodic checkpoint in so short a trial) saves one of the step the trial
// had reached; the same command resumes it there and ends with the values
// of an uninterrupted run.
func TestInterruptSavesCheckpoint(t *testing.T) {
	ratings := filepath.Join(t.TempDir(), "ratings.csv")
	if err := os.WriteFile(ratings, syntheticRatings(3000), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--experiment", "mlf", "--jobs", "1", "--set", "steps=20000", "--set", "log_every=100", "--set", "seed=1", "--set", "valid_every=5000", "--set", "gauge_gap_every=5000"}
	clean, e := faultEnv(t, ratings), faultEnv(t, ratings)
	clean.mustRun(0, args...)
	cmd := exec.Command(runnerBin, args...)
	cmd.Dir = e.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForTrial(t, e.db(), cmd, "running")
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err == nil {
		t.Skipf("the trial ended before the interrupt reached it:\n%s", out.String())
	}
	e.mustRun(0, args...)
	var resumed []string
	for _, text := range trialLogs(t, e) {
		resumed = append(resumed, ckptResumed.FindAllString(text, -1)...)
	}
	if len(resumed) != 1 || resumed[0] == "resumed from the checkpoint of step 0" {
		t.Errorf("after Ctrl-C: resumed %q, want one resume past step 0\n%s", resumed, out.String())
	}
	if got, want := recorded(t, e.db()), recorded(t, clean.db()); got != want {
		t.Errorf("interrupted and resumed, rows differ from the uninterrupted run's:\n%s", lineDiff(want, got))
	}
	if got, want := seriesDigest(t, e.db()), seriesDigest(t, clean.db()); got != want {
		t.Errorf("series differ: %s, uninterrupted %s", got, want)
	}
}

// TestCheckpointResumeExplicit: the same with the Gaussian likelihood
// (explicit ratings: its minibatch counter and biases go with the
// checkpoint through the model seam).
func TestCheckpointResumeExplicit(t *testing.T) {
	ratings := filepath.Join(t.TempDir(), "ratings.csv")
	if err := os.WriteFile(ratings, syntheticRatings(3000), 0o644); err != nil {
		t.Fatal(err)
	}
	checkpointCase(t, faultEnv(t, ratings), faultEnv(t, ratings), "train-movielens", 6,
		[]string{"train:step@17", "train:step@40"},
		"--experiment", "mlf", "--jobs", "1", "--quiet", "--set", "likelihood=gaussian")
}
