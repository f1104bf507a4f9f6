package htmlreport

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/runs"
)

// TestSettingDiffs: one run's trials grouped by a setting (dim), paired
// by seed within each value of the other swept setting (lambda); a never
// is skipped, not paired; the interval is Student's t over the pairs.
func TestSettingDiffs(t *testing.T) {
	var trials []runs.TrialRow
	add := func(dim, lambda string, seed int, v float64) {
		trials = append(trials, runs.TrialRow{
			Trial:   runs.Trial{ID: fmt.Sprint(len(trials)), Status: runs.StatusDone, Params: map[string]string{"variant": `"gd"`, "dim": dim, "lambda": lambda, "seed": fmt.Sprint(seed)}},
			Summary: map[string]float64{"ll": v},
		})
	}
	for s := 1; s <= 3; s++ {
		add("5", "1", s, 1)
		add("10", "1", s, 1+float64(0.1*float64(s+9))) // B - A: 1, 1.1, 1.2
		add("5", "10", s, 2)
		add("10", "10", s, 2) // B - A: 0, 0, 0
	}
	trials[len(trials)-1].Summary["ll"] = runs.Never // seed 3, dim 10, lambda 10
	ds := SettingDiffs(trials, []runs.Headline{{Metric: "ll"}})
	byKey := map[string]SettingDiff{}
	for _, d := range ds {
		byKey[d.Setting+" "+d.Context] = d
	}
	d, ok := byKey["dim lambda=1"]
	if !ok || d.A != "5" || d.B != "10" || d.N != 3 || math.Abs(d.Mean-1.1) > 1e-12 || d.Tie || d.Better() != "10" {
		t.Fatalf("dim at lambda=1: %+v (all: %+v)", d, ds)
	}
	half := 4.302652729749462 * 0.1 / math.Sqrt(3) // t(2) * sd 0.1 / sqrt(3)
	if math.Abs(d.Lo-(1.1-half)) > 1e-9 || math.Abs(d.Hi-(1.1+half)) > 1e-9 {
		t.Errorf("dim at lambda=1: interval [%v, %v], want 1.1 ± %v", d.Lo, d.Hi, half)
	}
	d = byKey["dim lambda=10"]
	if d.N != 2 || d.Skipped != 1 || d.Mean != 0 || !d.Tie || d.Better() != "" {
		t.Errorf("dim at lambda=10: %+v", d)
	}
	// lambda at dim=5: B - A is 1 at every seed, a zero-width interval [1, 1] that excludes 0.
	if d = byKey["lambda dim=5"]; d.N != 3 || d.Mean != 1 || d.Lo != 1 || d.Hi != 1 || d.Tie || d.Better() != "10" {
		t.Errorf("lambda at dim=5: %+v", d)
	}
	dir := t.TempDir()
	path, err := WriteCompare(dir, &ComparePage{SettingDiffs: ds})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, filepath.Base(path)))
	if !strings.Contains(string(b), `<table class="setting-diffs`) || !strings.Contains(string(b), "★ 10") || !strings.Contains(string(b), "tie") {
		t.Errorf("compare page lacks the setting differences:\n%s", b)
	}
	var run bytes.Buffer
	if err := pageTmpl.Execute(&run, &pageView{Page: &Page{SettingDiffs: ds}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run.String(), `<table class="setting-diffs`) || !strings.Contains(run.String(), "★ 10") {
		t.Errorf("run page lacks the setting differences:\n%s", run.String())
	}
}
