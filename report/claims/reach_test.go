package claims

import (
	"math"
	"strings"
	"testing"

	"goldstone/train"
)

// TestReachClaim builds the issue 27 picture: goldstone (flips) reaches
// L - L* < 1 on 20/20 seeds, GD on 9/20, goldstone-so (no flips) on 9/20;
// where both reach, goldstone is 2x faster on every seed. The row must
// give reach with Fisher's test, the conditional speed-up (not the
// censored bound) as the verdict, and name the flips as the mechanism.
func TestReachClaim(t *testing.T) {
	inf := math.Inf(1)
	sums := map[string][]map[string]float64{}
	for s := 0; s < 20; s++ {
		gd := inf
		if s < 9 {
			gd = 1000 + 10*float64(s)
		}
		mk := func(v float64) map[string]float64 {
			m := map[string]float64{}
			for _, thr := range train.ExcessThresholds {
				m[train.ExcessMetric(thr)] = v
			}
			return m
		}
		sums["gd"] = append(sums["gd"], mk(gd))
		sums["goldstone"] = append(sums["goldstone"], mk(math.Min(gd/2, 400+float64(s))))
		sums["goldstone-so"] = append(sums["goldstone-so"], mk(gd/2))
	}
	r := synthRun(sums, nil)
	for i := range r.trials {
		r.trials[i].params["steps"] = 20000.0
		switch r.trials[i].variant {
		case "goldstone":
			r.trials[i].params["gauge"] = "goldstone"
		case "goldstone-so":
			r.trials[i].params["gauge"], r.trials[i].params["flip_walls"] = "goldstone", false
		default:
			r.trials[i].params["gauge"] = "none"
		}
	}
	ours, verdict := reachClaim(r, Params{Baseline: "gd", Methods: []string{"goldstone", "goldstone-so"}, Factor: 10})
	t.Logf("ours: %s\nverdict: %s", ours, verdict)
	for _, want := range []string{
		"reach goldstone 20/20, gd 9/20 (Fisher p = 0.00015)",
		"reach goldstone-so 9/20, gd 9/20 (Fisher p = 1)",
		"where both reach 2x [2x, 2x] on the 9 seeds both reach",
		"censored bound",
	} {
		if !strings.Contains(ours, want) {
			t.Errorf("ours lacks %q", want)
		}
	}
	for _, want := range []string{
		"goldstone: reaches on more seeds (20 vs 9 of 20, p = 0.00015); where both reach: smaller effect (2.57x [2.52x, 2.63x] on the 9 seeds both reach)",
		"goldstone-so: no difference of reach shown",
		"mechanism: the reflection flips (with them goldstone reach more often; without them goldstone-so do not)",
	} {
		if !strings.Contains(verdict, want) {
			t.Errorf("verdict lacks %q", want)
		}
	}
}
