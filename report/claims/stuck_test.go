package claims

import (
	"math"
	"strings"
	"testing"

	"goldstone/train"
)

// TestStuckClaim: of 11 seeds that miss the target at 20,000 steps, 2
// reach it by 200,000 and 9 never do: mostly stuck, with where they end.
func TestStuckClaim(t *testing.T) {
	var per []map[string]float64
	for s := 0; s < 20; s++ {
		v, fin := math.Inf(1), 30+float64(s)
		switch {
		case s < 9:
			v, fin = 5000, 0.001
		case s < 11:
			v, fin = 60000, 0.001
		}
		per = append(per, map[string]float64{train.ExcessMetric(1): v, "final_excess": fin})
	}
	r := synthRun(map[string][]map[string]float64{"gd": per}, nil)
	for i := range r.trials {
		r.trials[i].params["steps"] = 200000.0
	}
	ours, verdict := stuckClaim(r, Params{Method: "gd", Horizon: 20000})
	if !strings.Contains(ours, "gd on 20 seeds, 200000 steps: 9 reach L-L* < 1 within 20000 steps, 2 more by the end, 9 never (final L - L* of those: median 45, range 41-49)") {
		t.Errorf("ours: %s", ours)
	}
	if verdict != "mostly stuck: 2 of the 11 seeds that miss the target at 20000 steps reach it later" {
		t.Errorf("verdict: %s", verdict)
	}
}
