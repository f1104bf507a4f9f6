package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListExperiment: list --experiment X lists X alone, with its variants
// and trial count; an unknown name is a one-line usage error with a
// suggestion.
func TestListExperiment(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "e.toml")
	src := `[experiments.alpha]
pipeline = "artificial"
description = "the first"
[[experiments.alpha.variants]]
name = "gd"
optimizer = "gd"
[[experiments.alpha.variants]]
name = "adam"
optimizer = "adam"
[experiments.alpha.grid]
seed = [1, 2, 3]
[experiments.beta]
pipeline = "artificial"
description = "the second"
`
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "--config", cfg, "list", "--experiment", "alpha")
	if code != 0 {
		t.Fatalf("list --experiment alpha: exit %d\n%s", code, errs)
	}
	if strings.Contains(out, "beta") {
		t.Errorf("list --experiment alpha lists beta:\n%s", out)
	}
	for _, want := range []string{"alpha", "variants: gd, adam", "grid: seed = 1, 2, 3", "trials: 6 (2 variants x seed 3)"} {
		if !strings.Contains(out, want) {
			t.Errorf("list --experiment alpha: no %q in\n%s", want, out)
		}
	}
	out, _, code = runCLI(t, "--config", cfg, "list")
	if code != 0 || !strings.Contains(out, "alpha") || !strings.Contains(out, "beta") || strings.Contains(out, "variants:") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	_, errs, code = runCLI(t, "--config", cfg, "list", "--experiment", "alpah")
	if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, `did you mean alpha`) {
		t.Errorf("list --experiment alpah: exit %d, %q", code, errs)
	}
}
