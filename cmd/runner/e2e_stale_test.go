package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChangedCacheKeysStartANewRun: a finished run is "up to date" only
// while its trials' results would come from the cache; when a done trial's
// cache entry is gone (as after a stage's version change, which changes its
// key, or a gc), the same settings start a new run that trains it again,
// and the old run stays as recorded.
func TestChangedCacheKeysStartANewRun(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "--experiment", "small", "--jobs", "2", "--quiet")
	if out := e.mustRun(0, "--experiment", "small"); !strings.Contains(out, "up to date") {
		t.Fatalf("second run did work: %s", out)
	}
	trains := entryDirs(filepath.Join(e.dir, "work", "cache", "train-artificial", "*"))
	if len(trains) == 0 {
		t.Fatal("no train cache entries")
	}
	if err := os.RemoveAll(trains[0]); err != nil {
		t.Fatal(err)
	}
	out := e.mustRun(0, "--experiment", "small", "--quiet")
	if strings.Contains(out, "up to date") || !strings.Contains(out, "run 2") || !strings.Contains(out, "6 trials: 6 done") {
		t.Fatalf("after a train entry was removed: %s", out)
	}
	var runsN int
	e.db().QueryRow(`SELECT count(*) FROM runs WHERE status = 'finished'`).Scan(&runsN)
	if runsN != 2 {
		t.Fatalf("%d finished runs, want 2", runsN)
	}
	if out := e.mustRun(0, "--experiment", "small"); !strings.Contains(out, "up to date (run 2") {
		t.Fatalf("third run: %s", out)
	}
}
