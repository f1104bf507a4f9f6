package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDocsSearchExampleRuns: the worked example of docs/search.md runs as
// written (every runner line naming artificial-search, in order, in a fresh
// directory with the repository's experiments.toml), and the plan and best
// outputs the page shows are what those commands print.
func TestDocsSearchExampleRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the example trains 42 small trials")
	}
	if ran := runSearchDocExample(t, "artificial-search"); ran < 4 {
		t.Fatalf("ran %d documented artificial-search commands, want plan, run, best and the rerun", ran)
	}
}

// TestDocsPruningExampleRuns: the pruning example of docs/search.md
// (artificial-asha) runs as written, and its plan and best outputs are
// those the page shows.
func TestDocsPruningExampleRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the example trains 49 small trials")
	}
	if ran := runSearchDocExample(t, "artificial-asha"); ran < 4 {
		t.Fatalf("ran %d documented artificial-asha commands, want plan, run, best and results", ran)
	}
}

// runSearchDocExample runs every runner line of docs/search.md naming
// experiment, in order, in a fresh directory with the repository's
// experiments.toml, checks that the lines plan and best print are on the
// page, and returns how many commands ran.
func runSearchDocExample(t *testing.T, experiment string) int {
	t.Helper()
	path := filepath.Join(repoRoot, "docs", "search.md")
	cmds, err := extractCommands(path)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	cfg, err := os.ReadFile(filepath.Join(repoRoot, "experiments.toml"))
	if err != nil {
		t.Fatal(err)
	}
	writeConfig(t, e, string(cfg))
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, c := range cmds {
		if c.synopsis || !slices.Contains(c.args, experiment) {
			continue
		}
		out, errs, code := e.run(c.args...)
		if code != 0 {
			t.Fatalf("%s: %s: exit %d\nstdout:\n%s\nstderr:\n%s", c.where, c.text, code, out, errs)
		}
		ran++
		name, _, _ := findCommand(c.args)
		if name != "plan" && name != "best" {
			continue
		}
		// The page shows the lines these commands print (plan: its search
		// part, before the stage table).
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "STAGE ") {
				break
			}
			if strings.TrimSpace(line) != "" && !strings.Contains(line, "html report:") && !strings.Contains(string(page), line) {
				t.Errorf("%s: %s prints a line the page does not show:\n%s", c.where, c.text, line)
			}
		}
	}
	return ran
}
