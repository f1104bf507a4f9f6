package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var helpFlagLine = regexp.MustCompile(`(?m)^  --([a-z0-9-]+)`)

// helpFlags are the flags `runner help CMD` lists, and --help.
func helpFlags(t *testing.T, cmd string) []string {
	t.Helper()
	if cmd == "help" {
		return []string{"--help"}
	}
	out, _, code := runCLI(t, "help", cmd)
	if code != 0 {
		t.Fatalf("runner help %s: exit %d", cmd, code)
	}
	flags := []string{"--help"}
	for _, m := range helpFlagLine.FindAllStringSubmatch(out, -1) {
		flags = append(flags, "--"+m[1])
	}
	slices.Sort(flags)
	return flags
}

// TestCompletionCoversHelp: every command and every flag that each
// command's help lists is in the bash, zsh and fish scripts; bash
// completes them (run in bash), and the experiments of runner list.
func TestCompletionCoversHelp(t *testing.T) {
	scripts := map[string]string{}
	for _, sh := range completionShells {
		out, errs, code := runCLI(t, "completion", sh)
		if code != 0 {
			t.Fatalf("completion %s: exit %d: %s", sh, code, errs)
		}
		scripts[sh] = out
	}
	names := commandNames()
	for _, c := range names {
		flags := helpFlags(t, c)
		if len(flags) < 2 && c != "help" && c != "example-data" && c != "completion" {
			t.Fatalf("help %s lists no flags: the parse is wrong", c)
		}
		zshLine := lineWith(scripts["zsh"], "            "+c+") flags=(")
		for _, f := range flags {
			if !strings.Contains(zshLine, "'"+f+":") {
				t.Errorf("zsh: %s %s missing", c, f)
			}
			if f != "--help" && !strings.Contains(scripts["fish"], "-n 'test (__runner_cmd) = "+c+"' -l "+strings.TrimPrefix(f, "--")+" ") {
				t.Errorf("fish: %s %s missing", c, f)
			}
		}
		if !strings.Contains(scripts["zsh"], "'"+c+":") || !strings.Contains(scripts["fish"], "-a "+c+" -d") {
			t.Errorf("command %s missing from zsh or fish", c)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash: the bash script was checked as text only")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "runner.bash")
	stub := filepath.Join(dir, "runner")
	os.WriteFile(script, []byte(scripts["bash"]), 0o644)
	os.WriteFile(stub, []byte("#!/bin/sh\nprintf 'EXPERIMENT  PIPELINE\\nartificial  artificial\\nartificial-init  artificial\\nmovielens-sweep  movielens\\n'\n"), 0o755)
	complete := func(words ...string) []string {
		t.Helper()
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		prog := "source " + script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + strings.Repeat("x", 0) +
			"$(( ${#COMP_WORDS[@]} - 1 ))\n_runner\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command(bash, "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v: %s", err, out)
		}
		got := strings.Fields(string(out))
		slices.Sort(got)
		return got
	}
	for _, c := range names {
		want := helpFlags(t, c)
		words := []string{stub, c, "--"}
		if c == "run" {
			words = []string{stub, "--"} // the default command
		}
		if got := complete(words...); !slices.Equal(got, want) {
			t.Errorf("bash: runner %s --<TAB>: %v, want %v", c, got, want)
		}
	}
	allCmds := slices.Clone(names)
	slices.Sort(allCmds)
	if got := complete(stub, ""); !slices.Equal(got, allCmds) {
		t.Errorf("bash: runner <TAB>: %v, want %v", got, allCmds)
	}
	if got := complete(stub, "plan", "--experiment", "artificial-"); !slices.Equal(got, []string{"artificial-init"}) {
		t.Errorf("bash: --experiment artificial-<TAB>: %v", got)
	}
	if got := complete(stub, "results", "--format", ""); !slices.Equal(got, []string{"csv", "json", "table"}) {
		t.Errorf("bash: --format <TAB>: %v", got)
	}
	for _, sh := range []string{"zsh", "fish"} {
		if p, err := exec.LookPath(sh); err == nil {
			if out, err := exec.Command(p, "-n", "-c", scripts[sh]).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v: %s", sh, err, out)
			}
		} else {
			t.Logf("no %s here: its script was checked as text only", sh)
		}
	}
	if _, errs, code := runCLI(t, "completion", "zhs"); code != exitUsage || !strings.Contains(errs, `unknown shell "zhs" (did you mean zsh?)`) {
		t.Errorf("completion zhs: exit %d, %q", code, errs)
	}
}

func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
