package main

// Issue 32, item 5: housekeeping.

import (
	"strings"
	"testing"
)

// TestSameAsAnEarlierRunAndPins: rerunning a configuration whose earlier
// run finished (another configuration ran in between) records no
// duplicate run and says which run it is the same as; a pinned run
// survives gc --keep-last 0, and an unpinned one does not.
func TestSameAsAnEarlierRunAndPins(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "--experiment", "small", "--quiet")
	e.mustRun(0, "--experiment", "small", "--set", "seed=1", "--quiet")
	out := e.mustRun(0, "--experiment", "small")
	if !strings.Contains(out, "small: up to date: same as run 1 (finished, 6 trials: 6 done, 0 failed), an earlier run of this configuration; nothing to run, no new run recorded") {
		t.Errorf("rerun of run 1's configuration:\n%s", out)
	}
	if n := e.runCount(); n != 2 {
		t.Fatalf("%d runs recorded, want 2", n)
	}
	if out := e.mustRun(0, "pin", "1"); !strings.Contains(out, "pinned run 1 (small): gc keeps it") {
		t.Errorf("pin: %s", out)
	}
	if _, errs, code := e.run("pin", "7"); code != exitUsage || !strings.Contains(errs, "not found") {
		t.Errorf("pin 7: exit %d %s", code, errs)
	}
	out = e.mustRun(0, "gc", "--keep-last", "0")
	if !strings.Contains(out, "deleted 1 runs: 2 (small)") {
		t.Errorf("gc --keep-last 0 with run 1 pinned:\n%s", out)
	}
	e.mustRun(0, "unpin", "1")
	if out := e.mustRun(0, "gc", "--keep-last", "0"); !strings.Contains(out, "deleted 1 runs: 1 (small)") {
		t.Errorf("gc --keep-last 0 unpinned:\n%s", out)
	}
}
