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

// Item 10: notes, tags and names recorded by someone else cannot drive the
// terminal (`runner runs`, `results`, the error line) nor inject HTML into
// the Markdown summary.
func TestNoTerminalOrMarkdownInjection(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(`
[experiments.inj]
pipeline = "artificial"
[experiments.inj.settings]
time_steps = 4
steps = 30
[experiments.inj.grid]
seed = [1]
[[experiments.inj.variants]]
name = "<b onmouseover=alert(1)>v</b>"
[[experiments.inj.variants]]
name = "esc\u001b[2Jv"
gauge = "goldstone"
`)
	note := "<script>alert(1)</script> \x1b]0;pwned\x07 \x1b[31mred"
	e.mustRun(0, "--experiment", "inj", "--quiet", "--note", note, "--tag", "x=<img src=x onerror=alert(1)>\x1b[2J")
	for _, args := range [][]string{{"runs"}, {"results", "--experiment", "inj"}, {"diff", "1", "1"}} {
		out := e.mustRun(0, args...)
		if strings.ContainsRune(out, 0x1b) || strings.ContainsRune(out, 0x07) {
			t.Errorf("runner %s prints control characters raw:\n%q", strings.Join(args, " "), out)
		}
		if args[0] == "runs" && !strings.Contains(out, `\x1b[31mred`) {
			t.Errorf("runner runs does not show the escaped note:\n%s", out)
		}
	}
	// Data formats written to a file or a pipe keep what was recorded.
	if out := e.mustRun(0, "runs", "--format", "csv"); !strings.Contains(out, "\x1b[31mred") {
		t.Errorf("runs --format csv to a pipe changed the note:\n%q", out)
	}
	md, err := os.ReadFile(filepath.Join(e.dir, "reports", "inj", "run-1", "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"<script", "<img", "<b ", "\x1b"} {
		if strings.Contains(string(md), raw) {
			t.Errorf("summary.md holds %q raw:\n%s", raw, md)
		}
	}
	if !strings.Contains(string(md), "&lt;script&gt;") || !strings.Contains(string(md), "&lt;b onmouseover") {
		t.Errorf("summary.md does not show the note and the variant name escaped:\n%s", md)
	}
}
