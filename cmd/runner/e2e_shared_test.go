package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// sharedConfig: two small artificial experiments; "a" with seed = [1]
// first is a run that gc deletes while the others run, and whose cache
// entries the full "a" reuses.
const sharedConfig = `
[experiments.a]
pipeline = "artificial"
[experiments.a.settings]
time_steps = 6
steps = 400
clip = 0.01
lr = 1.0
lr_s0 = 100.0
[experiments.a.grid]
seed = [1, 2]
[[experiments.a.variants]]
name = "gd"
[[experiments.a.variants]]
name = "procrustes"
gauge = "procrustes"

[experiments.b]
pipeline = "artificial"
[experiments.b.settings]
time_steps = 5
steps = 300
[experiments.b.grid]
seed = [1, 2, 3]
`

type cmdResult struct {
	args      []string
	out, errs string
	code      int
}

func runIn(dir string, args ...string) cmdResult {
	cmd := exec.Command(runnerBin, args...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := cmdResult{args: args, out: o.String(), errs: e.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		r.code, r.errs = -1, err.Error()
	}
	return r
}

// Issue 32 item 2: two runners of two experiments and gc at once on one
// workdir and one database finish with the results of the same runs made
// one after the other, bit for bit; gc deletes the old run without
// removing an entry the live runs use.
func TestTwoRunnersAndGCShareAWorkdir(t *testing.T) {
	prior := []string{"--experiment", "a", "--set", "seed=1", "--quiet"}
	runA := []string{"--experiment", "a", "--jobs", "2", "--quiet"}
	runB := []string{"--experiment", "b", "--jobs", "2", "--quiet"}
	gc := []string{"gc", "--keep-last", "1"}

	seq, par := newEnv(t), newEnv(t)
	for _, e := range []*env{seq, par} {
		if err := os.WriteFile(filepath.Join(e.dir, "experiments.toml"), []byte(sharedConfig), 0o644); err != nil {
			t.Fatal(err)
		}
		e.mustRun(0, prior...)
	}
	// One after the other.
	seq.mustRun(0, runA...)
	seq.mustRun(0, runB...)
	seq.mustRun(0, gc...)

	// At once: both runners, and gc over and over while they run.
	var wg sync.WaitGroup
	results := make([]cmdResult, 2)
	for i, args := range [][]string{runA, runB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runIn(par.dir, args...)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var gcs []cmdResult
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		gcs = append(gcs, runIn(par.dir, gc...))
	}
	for _, r := range append(results, gcs...) {
		if r.code != 0 {
			t.Fatalf("runner %s: exit %d\n%s%s", strings.Join(r.args, " "), r.code, r.out, r.errs)
		}
	}
	t.Logf("%d gc runs beside the two runners", len(gcs))

	for _, exp := range []string{"a", "b"} {
		want, got := resultsWithoutTimings(t, seq.results(exp)), resultsWithoutTimings(t, par.results(exp))
		if want != got {
			t.Errorf("experiment %s: at once and one after the other differ:\n%s\n%s", exp, got, want)
		}
	}
	var n, first int
	par.db().QueryRow(`SELECT count(*), min(id) FROM runs`).Scan(&n, &first)
	if n != 2 || first == 1 {
		t.Errorf("%d runs from run %d, want 2 (the prior run deleted by gc)", n, first)
	}
	if out, errs, code := par.run("verify"); code != 0 {
		t.Errorf("verify after the shared runs: exit %d\n%s%s", code, out, errs)
	}
	for _, args := range [][]string{runA, runB} {
		if out := par.mustRun(0, args...); !strings.Contains(out, "up to date") {
			t.Errorf("runner %s after the shared runs: %s", strings.Join(args, " "), out)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(par.dir, "work", "tmp")); len(left) != 0 {
		t.Errorf("work/tmp holds %d files after the runs", len(left))
	}
}
