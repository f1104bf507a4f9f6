package artificial

import (
	"context"
	"math"
	"testing"

	"goldstone/stages"
	"goldstone/stages/settings"
	"goldstone/stages/train"
	"goldstone/stages/trialio"
)

func artificialSettings(t *testing.T, sets ...string) TrainSettings {
	t.Helper()
	c, err := stages.ParseConfig("t.toml", []byte("[experiments.a]\npipeline = \"artificial\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["a"]
	if err := e.Override(sets); err != nil {
		t.Fatal(err)
	}
	return settings.MustDecode[TrainSettings](e.Trials()[0].Settings)
}

func TestTrainWritesResults(t *testing.T) {
	s := artificialSettings(t, "steps=300", "gauge=goldstone", "k1=50", "clip=0.01", "lr=1", "lr_s0=100", "snapshots=[0, 300]")
	dir := t.TempDir()
	if err := Train(context.Background(), s, nil, dir, train.StageIO{}); err != nil {
		t.Fatal(err)
	}
	sum, err := trialio.ReadSummary(dir + "/summary.json")
	if err != nil {
		t.Fatal(err)
	}
	ser, err := trialio.ReadSeries(dir + "/series.arrow")
	if err != nil {
		t.Fatal(err)
	}
	_, ex := ser.Of("excess")
	if len(ex) != 300 {
		t.Fatalf("excess has %d points, want 300", len(ex))
	}
	if !(ex[len(ex)-1] < ex[0]) {
		t.Fatalf("excess did not fall: %v -> %v", ex[0], ex[len(ex)-1])
	}
	for _, k := range []string{"final_excess", "final_psi", "l_star", "wall_seconds", "gauge_seconds", "gap_seconds", "steps_to_excess_1", "steps_to_excess_0.1", "steps_to_excess_0.01"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %s", k)
		}
	}
	if math.IsNaN(sum["final_excess"]) || sum["final_excess"] < -1e-9 {
		t.Fatalf("final excess %v", sum["final_excess"])
	}
}
