package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// body is show's output without its comment header.
func body(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "# ") || strings.Contains(l, " = ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestShowComposes: runner show prints the resolved experiment (--set
// per variant, ranges, --variant) as TOML that --config reads back to the
// same experiment; --config files merge, and one experiment in two files
// is refused naming both.
func TestShowComposes(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := runCLI(t, "show", "--config", "../../experiments.toml", "--experiment", "artificial",
		"--set", "variants.goldstone.lr=0.5", "--set", "seed=1..3", "--variant", "goldstone", "--variant", "gd")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errs)
	}
	for _, want := range []string{"# 6 trials (2 variants x seed 3)", "seed = [1, 2, 3]", "name = \"goldstone\"\ngauge = \"goldstone\"\nlr = 0.5\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "procrustes") {
		t.Errorf("show kept a variant --variant left out:\n%s", out)
	}
	shown := filepath.Join(dir, "shown.toml")
	os.WriteFile(shown, []byte(out), 0o644)
	again, errs, code := runCLI(t, "show", "--config", shown, "--experiment", "artificial")
	if code != 0 || body(again) != body(out) {
		t.Fatalf("show of show: exit %d %s\n%s\nvs\n%s", code, errs, again, out)
	}
	mine := filepath.Join(dir, "mine.toml")
	os.WriteFile(mine, []byte("[experiments.mine]\nextends = \"artificial\"\n[experiments.mine.settings]\nsteps = 100\n"), 0o644)
	out, errs, code = runCLI(t, "show", "--config", "../../experiments.toml", "--config", mine, "--experiment", "mine", "--variant", "gd")
	if code != 0 || !strings.Contains(out, "steps = 100\n") || !strings.Contains(out, "seed = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]") {
		t.Fatalf("merged: exit %d %s\n%s", code, errs, out)
	}
	_, errs, code = runCLI(t, "list", "--config", "../../experiments.toml", "--config", shown)
	if code != exitUsage || !strings.Contains(errs, shown+":3: experiments.artificial: already defined in ../../experiments.toml:12") {
		t.Fatalf("conflict: exit %d %q", code, errs)
	}
	_, errs, code = runCLI(t, "plan", "--config", "../../experiments.toml", "--experiment", "artificial", "--variant", "goldstne")
	if code != exitUsage || !strings.Contains(errs, `--variant: goldstne: unknown variant "goldstne" (did you mean "goldstone"?)`) {
		t.Fatalf("unknown variant: exit %d %q", code, errs)
	}
	_, errs, code = runCLI(t, "show", "--config", "../../experiments.toml", "--experiment", "artificial", "--set", "variants.goldstone.lrr=1")
	if code != exitUsage || !strings.Contains(errs, `lrr: unknown setting (did you mean "lr"?)`) || strings.Count(errs, "\n") != 1 {
		t.Fatalf("unknown per-variant setting: exit %d %q", code, errs)
	}
}
