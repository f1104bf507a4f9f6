package main

// One end-to-end test per defect of issue 19 ("failure paths, round 2"),
// each of which failed before its fix.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
