package artificial

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/report"
)

func scalingResult(variant string, T int, lambda float64, seed int, excess1, gap float64) report.ScalingPoint {
	return report.ScalingPoint{Variant: variant, Lambda: lambda, T: T,
		Summary: map[string]float64{"steps_to_excess_1": excess1, "steps_to_gap_1pct": gap}}
}

func TestScaling(t *testing.T) {
	nan := math.NaN()
	var all []report.ScalingPoint
	// gd: steps = 10 T^2 on seeds 1, 2; seed 3 never; T = 300 never on 2 of 3.
	for _, T := range []int{10, 30, 100} {
		v := 10 * float64(T*T)
		all = append(all, scalingResult("gd", T, 10, 1, v, nan), scalingResult("gd", T, 10, 2, v, nan), scalingResult("gd", T, 10, 3, nan, nan))
	}
	all = append(all, scalingResult("gd", 300, 10, 1, 5e6, nan), scalingResult("gd", 300, 10, 2, nan, nan), scalingResult("gd", 300, 10, 3, nan, nan))
	// goldstone: flat in T.
	for _, T := range []int{10, 30, 100, 300} {
		for s := 1; s <= 3; s++ {
			all = append(all, scalingResult("goldstone", T, 10, s, 500+float64(s), 300))
		}
	}
	cells, fits := report.Scaling(all)
	if len(cells) != 2*2*4 || len(fits) != 2*2 {
		t.Fatalf("%d cells, %d fits", len(cells), len(fits))
	}
	c := cells[1] // steps_to_excess_1, gd, lambda 10, T 30
	if c.Variant != "gd" || c.T != 30 || c.Median != 9000 || c.Reached != 2 || c.Seeds != 3 {
		t.Fatalf("cell %+v", c)
	}
	if c := cells[3]; c.T != 300 || !math.IsInf(c.Median, 1) || c.Reached != 1 {
		t.Fatalf("censored cell %+v", c)
	}
	byKey := map[string]report.ScalingFit{}
	for _, f := range fits {
		byKey[f.Metric+"/"+f.Variant] = f
	}
	if f := byKey["steps_to_excess_1/gd"]; math.Abs(f.Slope-2) > 1e-12 || f.Points != 3 || f.Censored != 1 {
		t.Errorf("gd slope %+v, want 2 over 3 points, 1 censored", f)
	}
	if f := byKey["steps_to_excess_1/goldstone"]; math.Abs(f.Slope) > 1e-12 || f.Points != 4 {
		t.Errorf("goldstone slope %+v, want 0", f)
	}
	if f := byKey["steps_to_gap_1pct/gd"]; !math.IsNaN(f.Slope) || f.Points != 0 || f.Censored != 4 {
		t.Errorf("never-reached fit %+v", f)
	}

	dir := t.TempDir()
	md, err := scalingReport(dir, all)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "scaling.png")); err != nil || fi.Size() == 0 {
		t.Fatalf("scaling.png: %v", err)
	}
	for _, want := range []string{"| steps_to_excess_1 | gd | 10 | 300 | never | 1/3 |", "| steps_to_excess_1 | gd | 10 | 2.00 | 3 | 1 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	// One chain length: no scaling section.
	if md, err := scalingReport(t.TempDir(), all[:3]); err != nil || md != "" {
		t.Errorf("single T: %q, %v", md, err)
	}
}
