package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// oneTrialConfig: experiments whose runs have one trial (no variants and
// no grid, or a grid that --set narrows to one point), and one with a grid
// and no variants.
const oneTrialConfig = `
[experiments.one]
pipeline = "artificial"
[experiments.one.settings]
time_steps = 5
steps = 20

[experiments.seeds]
pipeline = "artificial"
[experiments.seeds.settings]
time_steps = 5
steps = 20
[experiments.seeds.grid]
seed = [1, 2]
`

// TestOneTrialRunRebuildsItsReport: a run of one trial (whose trial name
// is ""), a grid narrowed to one trial by --set, and an experiment without
// variants each finish, rebuild their report after the report folder was
// removed ('runner report --run N') and after a report killed while it
// wrote its page (the same command), and reproduce. Before, the report was
// rebuilt by trial name: 'runner report' of a one-trial run exited 1 with
// 'trial "" has no result in run 1 (status "")', on every try.
func TestOneTrialRunRebuildsItsReport(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(oneTrialConfig)
	for _, c := range []struct {
		name   string
		args   []string
		trials int
	}{
		{"one trial", []string{"--experiment", "one"}, 1},
		{"grid narrowed to one trial", []string{"--experiment", "seeds", "--set", "seed=2"}, 1},
		{"no variants", []string{"--experiment", "seeds"}, 2},
	} {
		exp := c.args[1]
		args := append(c.args, "--quiet")
		out := e.mustRun(0, args...)
		m := regexp.MustCompile(`run (\d+) finished: (\d+) trials`).FindStringSubmatch(out)
		if m == nil || m[2] != strconv.Itoa(c.trials) {
			t.Fatalf("%s: %q, want a run of %d trials", c.name, out, c.trials)
		}
		run := m[1]
		dir := filepath.Join(e.dir, "reports", exp, "run-"+run)
		page := filepath.Join(dir, "index.html")
		if _, err := os.Stat(page); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The report folder removed: 'runner report' writes it again.
		os.RemoveAll(dir)
		out = e.mustRun(0, "report", "--run", run, "--quiet")
		if !strings.Contains(out, "report of run "+run) {
			t.Errorf("%s: report: %s", c.name, out)
		}
		for _, f := range []string{"index.html", "summary.md"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s: rebuilt report: %v", c.name, err)
			}
		}
		// A report killed while it writes its page: the same command
		// writes it again.
		e.runKilled("report:page", "report", "--run", run, "--quiet")
		out = e.mustRun(0, args...)
		if !strings.Contains(out, "report written again") {
			t.Errorf("%s: after an interrupted report: %s", c.name, out)
		}
		out = e.mustRun(0, "repro", "--run", run, "--quiet")
		if !strings.Contains(out, "match") {
			t.Errorf("%s: repro: %s", c.name, out)
		}
	}
}
