package movielens

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/formats/ratings"

	"goldstone/pipeline"
)

// TestActivityStage: the report's activity table shows the experiment's
// ratings next to the reference release's, and says so when the reference
// is missing.
func TestActivityStage(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	gen := filepath.Join(dir, "gen.csv")
	cfg := smallPlanted()
	cfg.ActiveBinsMean = 2
	if _, err := GenerateFile(ctx, gen, "", cfg); err != nil {
		t.Fatal(err)
	}
	pq := filepath.Join(dir, "ratings.parquet")
	if _, err := ratings.Ingest(ctx, gen, pq, ratings.IngestOptions{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref.csv")
	if err := os.WriteFile(ref, []byte("userId,movieId,rating,timestamp\n1,7,4.0,0\n1,8,3.0,10\n2,7,5.0,100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(in map[string]string) string {
		out := filepath.Join(t.TempDir(), "activity.md")
		s := &ActivityStage{Bins: cfg.Bins, Reference: "ref"}
		if err := s.Run(ctx, pipeline.NewIO(in, map[string]string{"activity.md": out}, 1, nil)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	md := run(map[string]string{"ratings": pq, "reference": ref})
	for _, want := range []string{
		"| statistic | this experiment's ratings | ref (reference) |",
		"| ratings | 60000 | 3 |",
		"| active bins per user: mean / median / p90 / max |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("activity.md lacks %q:\n%s", want, md)
		}
	}
	if md := run(map[string]string{"ratings": pq}); !strings.Contains(md, "ref was not found") || strings.Contains(md, "(reference)") {
		t.Errorf("without the reference:\n%s", md)
	}
}

// TestCalibrationMarkdown: the calibration section shows each setting next
// to its derived value and marks the ones that differ.
func TestCalibrationMarkdown(t *testing.T) {
	c := &Calibration{Planted: PlantedSettings{Dim: 30, ActiveBins: ActiveBinsSmall, Drift: PriorDrift(10, 1), Scale: 0.5}, Lambda: 10, Gamma: 1}
	md := c.Markdown()
	for _, want := range []string{
		"| `planted_active_bins` | 2.55 | 2.55 |",
		"| `planted_drift` | 0.6836 | 0.6836 | PriorDrift(lambda = 10, gamma = 1)",
		"| `planted_scale` | 0.5 (differs: not calibrated) | 0.1606 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("calibration section lacks %q:\n%s", want, md)
		}
	}
	if strings.Count(md, "differs") != 1 {
		t.Errorf("want exactly the scale marked as differing:\n%s", md)
	}
}
