package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/runs"
)

func TestFindCommandAnywhere(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		name     string
		rest     []string
		explicit bool
	}{
		{[]string{"plan", "--experiment", "x"}, "plan", []string{"--experiment", "x"}, true},
		{[]string{"--experiment", "x", "plan"}, "plan", []string{"--experiment", "x"}, true},
		{[]string{"--experiment=x", "--quiet", "plan", "--jobs", "2"}, "plan", []string{"--experiment=x", "--quiet", "--jobs", "2"}, true},
		// A flag's value that happens to be a command name is not the command.
		{[]string{"--experiment", "list", "plan"}, "plan", []string{"--experiment", "list"}, true},
		{[]string{"--set", "seed=1", "--fail-fast", "--experiment", "x"}, "run", []string{"--set", "seed=1", "--fail-fast", "--experiment", "x"}, false},
		{[]string{"--quiet", "diff", "1", "2"}, "diff", []string{"--quiet", "1", "2"}, true},
		{[]string{"bogus"}, "bogus", []string{}, true},
	} {
		name, rest, explicit := findCommand(tc.args)
		if name != tc.name || !slices.Equal(rest, tc.rest) || explicit != tc.explicit {
			t.Errorf("findCommand(%q) = %q, %q, %v; want %q, %q, %v", tc.args, name, rest, explicit, tc.name, tc.rest, tc.explicit)
		}
	}
}

// Every flag name means the same kind (boolean or not) in every command, so
// that findCommand can skip flag values before knowing the command.
func TestFlagKindsAgree(t *testing.T) {
	kind := map[string]string{}
	for _, c := range commands {
		c.flagSet(&globalOptions{}, &bytes.Buffer{}).VisitAll(func(f *flag.Flag) {
			var k string
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				k = "bool"
			} else {
				k = "value"
			}
			if old, ok := kind[f.Name]; ok && old != k {
				t.Errorf("flag --%s is %s in one command and %s in %s", f.Name, old, k, c.name)
			}
			kind[f.Name] = k
		})
	}
}

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, _, code := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, "commands:") || !strings.Contains(out, "  plan") || !strings.Contains(out, "-experiment") {
			t.Errorf("runner %s: exit %d, output lacks the commands or the global flags:\n%s", strings.Join(args, " "), code, out)
		}
	}
	for _, args := range [][]string{{"help", "words"}, {"words", "--help"}, {"--help", "words"}} {
		out, _, code := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, "usage: runner words") || !strings.Contains(out, "-age") || !strings.Contains(out, "-experiment") {
			t.Errorf("runner %s: exit %d, output is not words' usage with its flags:\n%s", strings.Join(args, " "), code, out)
		}
	}
	if _, errs, code := runCLI(t, "help", "nope"); code != exitUsage || !strings.Contains(errs, "unknown command") {
		t.Errorf("runner help nope: exit %d: %s", code, errs)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := runCLI(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "runner goldstone ") || !strings.Contains(out, "go1.") {
		t.Errorf("runner --version: exit %d, %q", code, out)
	}
}

func TestFlagsBeforeTheCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "e.toml")
	if err := os.WriteFile(cfg, []byte("[experiments.a]\npipeline = \"artificial\"\n[experiments.a.grid]\nseed = [1, 2]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "--config", cfg, "--experiment", "a", "--workdir", filepath.Join(dir, "work"), "plan")
	if code != 0 || !strings.Contains(out, "2 stages") && !strings.Contains(out, "3 stages") {
		t.Fatalf("runner --experiment a plan: exit %d\n%s\n%s", code, out, errs)
	}
	out, _, code = runCLI(t, "--config", cfg, "list", "--quiet")
	if code != 0 || !strings.Contains(out, "artificial") {
		t.Fatalf("runner --config F list: exit %d\n%s", code, out)
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{usageErr("missing --experiment"), exitUsage},
		{&exitError{exitUsage, &experiment.ConfigError{File: "x.toml", Line: 3, Key: "steps", Err: errors.New("must be > 0")}}, exitUsage},
		{&exitError{exitUsage, &experiment.DataError{Err: errors.New("dataset ml-20m: not found")}}, exitUsage},
		{&exitError{exitUsage, fmt.Errorf("open: %w", runs.ErrNoDatabase)}, exitUsage},
		{&exitError{exitUsage, fmt.Errorf("run 7: %w", runs.ErrNotFound)}, exitUsage},
		// An I/O failure wrapped the old way is a runtime failure, not a usage error.
		{&exitError{exitUsage, errors.New("open results database: disk I/O error")}, exitFailed},
		{errors.New("database is locked"), exitFailed},
		{&exitError{exitFailed, errors.New("2 of 4 trials failed")}, exitFailed},
		{fmt.Errorf("run: %w", errContextCanceled()), exitInterrupted},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	if _, errs, code := runCLI(t, "--config", filepath.Join(t.TempDir(), "missing.toml"), "list"); code != exitUsage || strings.Count(errs, "\n") != 1 {
		t.Errorf("missing config: exit %d, %q", code, errs)
	}
}

func errContextCanceled() error { return context.Canceled }

// TestHelpThatHelps (issue 21, item 6): a command's help lists its own
// flags and the global ones it reads, no others, each in --flag style with
// an example, defaults that read right, and example command lines; a
// mistyped command, flag or experiment gets a "did you mean".
func TestHelpThatHelps(t *testing.T) {
	out, _, code := runCLI(t, "help", "diff")
	if code != 0 || !strings.Contains(out, "  --format VALUE") && !strings.Contains(out, "  --format table|csv|json") ||
		!strings.Contains(out, "e.g. --format csv") || !strings.Contains(out, "  --db FILE") || !strings.Contains(out, "examples:\n  runner diff 3 5") {
		t.Errorf("runner help diff:\n%s", out)
	}
	for _, not := range []string{"--jobs", "--workdir", "--set", "\n  -format"} {
		if strings.Contains(out, not) {
			t.Errorf("runner help diff lists %q, which diff does not read:\n%s", not, out)
		}
	}
	for _, c := range commands {
		out, _, code := runCLI(t, "help", c.name)
		if code != 0 {
			t.Fatalf("runner help %s: exit %d", c.name, code)
		}
		flags := strings.Count(out, "\n  --")
		if ex := strings.Count(out, "      e.g. --"); ex != flags {
			t.Errorf("runner help %s: %d flags, %d examples:\n%s", c.name, flags, ex, out)
		}
		if strings.Contains(out, "default NaN") || strings.Contains(out, "default -1") || strings.Contains(out, "\n  -") && !strings.Contains(out, "\n  --") {
			t.Errorf("runner help %s: a default that does not read right, or -flag style:\n%s", c.name, out)
		}
		if c.name != "worker" && !strings.Contains(out, "examples:\n  runner ") {
			t.Errorf("runner help %s has no example:\n%s", c.name, out)
		}
	}
	out, _, _ = runCLI(t, "words", "--help")
	if !strings.Contains(out, "(default: the first time step)") || strings.Contains(out, "NaN") {
		t.Errorf("words --help: the defaults of --to and --from:\n%s", out)
	}
	out, _, _ = runCLI(t, "gc", "--help")
	if strings.Contains(out, "default -1") || !strings.Contains(out, "--dry-run alone") {
		t.Errorf("gc --help: the default of --keep-last:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rn", "--experiment", "x"}, `unknown command "rn" (did you mean run?)`},
		{[]string{"help", "comapre"}, "(did you mean compare?)"},
		{[]string{"gc", "--keep-lst", "2"}, "unknown flag --keep-lst (did you mean --keep-last?) (see 'runner help gc')"},
		{[]string{"run", "--experimnt", "x"}, "unknown flag --experimnt (did you mean --experiment?)"},
	} {
		_, errs, code := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("runner %s: exit %d, want 2 and one line with %q:\n%s", strings.Join(c.args, " "), code, c.want, errs)
		}
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "e.toml")
	if err := os.WriteFile(cfg, []byte("[experiments.artificial]\npipeline = \"artificial\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runCLI(t, "plan", "--config", cfg, "--experiment", "artifical"); code != exitUsage || !strings.Contains(errs, `no experiment "artifical" (did you mean artificial?)`) {
		t.Errorf("a mistyped experiment: exit %d: %s", code, errs)
	}
}
