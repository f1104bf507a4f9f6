package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const claimsConfig = `
[experiments.artificial]
pipeline = "artificial"
[experiments.artificial.settings]
time_steps = 5
steps = 300
k1 = 50
log_every = 10
[experiments.artificial.grid]
seed = [1, 2]
[[experiments.artificial.variants]]
name = "gd"
gauge = "none"
[[experiments.artificial.variants]]
name = "goldstone-linear"
gauge = "goldstone"
rotation = "linear"
guard = false
flip_walls = false
[[experiments.artificial.variants]]
name = "goldstone-so"
gauge = "goldstone"
flip_walls = false
[[experiments.artificial.variants]]
name = "goldstone"
gauge = "goldstone"

[experiments.artificial-init]
pipeline = "artificial"
[experiments.artificial-init.settings]
time_steps = 5
steps = 300
k1 = 50
log_every = 10
[experiments.artificial-init.grid]
init_scale = [0.01, 0.1]
seed = [1, 2]
[[experiments.artificial-init.variants]]
name = "gd"
gauge = "none"
[[experiments.artificial-init.variants]]
name = "goldstone"
gauge = "goldstone"

[experiments.artificial-scaling]
pipeline = "artificial"
[experiments.artificial-scaling.settings]
steps = 300
log_every = 10
[experiments.artificial-scaling.grid]
time_steps = [4, 8]
seed = [1]
[[experiments.artificial-scaling.variants]]
name = "gd"
gauge = "none"
[[experiments.artificial-scaling.variants]]
name = "goldstone"
gauge = "goldstone"
`

// fig2Paper is the claim of the Fig. 2 row of the paper's own algorithm.
const fig2Paper = "Fig. 2 (Sec. 5.1): the paper's model and algorithm (goldstone-linear)"

// claimRowOf returns the table line of a claim.
func claimRowOf(t *testing.T, table, claim string) string {
	t.Helper()
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "| "+claim+" |") {
			return l
		}
	}
	t.Fatalf("no row %q in\n%s", claim, table)
	return ""
}

// TestClaimsEndToEnd: rows come from the latest ended run of each
// experiment as defined in the experiments file; experiments without such
// a run, or absent from the file, say "not measured yet"; a run with --set
// overrides does not count; --readme replaces only the marked block.
func TestClaimsEndToEnd(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(claimsConfig)
	e.mustRun(0, "--experiment", "artificial-scaling", "--set", "steps=200", "--quiet")
	table := e.mustRun(0, "claims")
	if row := claimRowOf(t, table, fig2Paper); !strings.Contains(row, "| not measured yet |") {
		t.Errorf("artificial not run yet: %s", row)
	}
	if row := claimRowOf(t, table, "Fig. 2 mechanism (beyond the paper)"); !strings.Contains(row, "1 ended runs with other settings do not count") {
		t.Errorf("an overridden run counted: %s", row)
	}
	if row := claimRowOf(t, table, "Fig. 3 (Sec. 5.2): the paper's model and algorithm"); !strings.Contains(row, "no experiment movielens-paper in the experiments file") {
		t.Errorf("absent experiment: %s", row)
	}

	e.mustRun(0, "--experiment", "artificial", "--quiet")
	e.mustRun(0, "--experiment", "artificial-scaling", "--quiet")
	e.mustRun(0, "--experiment", "artificial-init", "--quiet")
	table = e.mustRun(0, "claims")
	row := claimRowOf(t, table, fig2Paper)
	for _, want := range []string{"2 seeds; L-L* < 1: gd ", "goldstone-linear ", "L-L* < 0.1: ", "L-L* < 0.01: ", "gd/goldstone-linear ", "run 2 ("} {
		if !strings.Contains(row, want) {
			t.Errorf("artificial row lacks %q: %s", want, row)
		}
	}
	if strings.Contains(row, notMeasured) {
		t.Errorf("artificial measured but: %s", row)
	}
	if row := claimRowOf(t, table, "Fig. 2 (Sec. 5.1), goldstone (beyond the paper)"); !strings.Contains(row, "gd/goldstone ") {
		t.Errorf("goldstone row: %s", row)
	}
	if row := claimRowOf(t, table, "Fig. 2 (Sec. 5.1), procrustes (beyond the paper)"); !strings.Contains(row, "needs variants gd and procrustes") {
		t.Errorf("procrustes row without the variant: %s", row)
	}
	row = claimRowOf(t, table, "Fig. 2 (Sec. 5.1), initialisation scale")
	if !strings.Contains(row, "init_scale 0.01/0.1 x L-L* < 1/0.1/0.01, 2 seeds; goldstone reproduces at ") || !strings.Contains(row, " of 6 settings") {
		t.Errorf("init row: %s", row)
	}
	// The per-setting table follows the claims table: 2 scales x 3 targets.
	if !strings.Contains(table, "`runner --experiment artificial-init`; run 4 (") ||
		strings.Count(table, "\n| 0.01 | L-L* < ") != 3 || strings.Count(table, "\n| 0.1 | L-L* < ") != 3 {
		t.Errorf("no per-setting table for artificial-init:\n%s", table)
	}
	row = claimRowOf(t, table, "Fig. 2 mechanism (beyond the paper)")
	if !strings.Contains(row, "gd steps_to_excess_1: slope") || !strings.Contains(row, "run 3 (") {
		t.Errorf("scaling row: %s", row)
	}

	readme := filepath.Join(e.dir, "README.md")
	os.WriteFile(readme, []byte("# x\n\nbefore\n"+claimsBegin+"\nold table\n"+claimsEnd+"\nafter\n"), 0o644)
	e.mustRun(0, "claims", "--readme", readme)
	b, _ := os.ReadFile(readme)
	if got := string(b); !strings.HasPrefix(got, "# x\n\nbefore\n"+claimsBegin+"\n| claim |") || !strings.HasSuffix(got, claimsEnd+"\nafter\n") || strings.Contains(got, "old table") {
		t.Errorf("README after claims --readme:\n%s", got)
	}
	os.WriteFile(readme, []byte("# no markers\n"), 0o644)
	e.mustRun(2, "claims", "--readme", readme)
	if b, _ := os.ReadFile(readme); string(b) != "# no markers\n" {
		t.Errorf("README without markers was changed: %q", b)
	}

	// Several databases: each row from the first that has a run at the
	// defined settings, named with its database; the overridden run in
	// other.db does not count but is counted.
	e.mustRun(0, "--experiment", "artificial-scaling", "--set", "steps=200", "--quiet", "--db", "other.db")
	table = e.mustRun(0, "claims", "--db", "other.db", "--also-db", "results.db")
	if row := claimRowOf(t, table, fig2Paper); !strings.Contains(row, "run 2 of results.db (") {
		t.Errorf("artificial row from the second database: %s", row)
	}
	if row := claimRowOf(t, table, "Fig. 2 mechanism (beyond the paper)"); !strings.Contains(row, "run 3 of results.db (") {
		t.Errorf("scaling row from the second database: %s", row)
	}
	if _, errs, code := e.run("claims", "--also-db", "missing.db"); code != 2 || !strings.Contains(errs, "--also-db") {
		t.Errorf("a missing --also-db: exit %d %s", code, errs)
	}
}

func TestSpeedupVerdict(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		base, method []float64
		want         string
	}{
		{[]float64{1000, 1200, 900}, []float64{100, 110, 90}, "reproduces (10x faster"},
		{[]float64{1000, 1200, 900}, []float64{300, 310, 290}, "smaller effect than the paper (3.3x"},
		{[]float64{1000, 1000}, []float64{900, 1100}, "no effect (1x)"},
		{[]float64{100, 100, 100}, []float64{600, 600, nan}, "reversed: m is 6x slower"},
		{[]float64{nan, nan, 100}, []float64{100, 100, nan}, "reproduces qualitatively: only m"},
		{[]float64{100, 100, nan}, []float64{nan, nan, 100}, "does not reproduce: m does not reach"},
		{[]float64{nan, inf}, []float64{nan, nan}, "not reproduced: neither"},
		{nil, []float64{1}, notMeasured},
	} {
		_, v := speedupVerdict(c.base, c.method, 10, "m")
		if !strings.HasPrefix(v, c.want) {
			t.Errorf("speedupVerdict(%v, %v) = %q, want prefix %q", c.base, c.method, v, c.want)
		}
	}
}

// TestPlantedClaim: the planted row states the recovery against the
// planted vectors' own gain: not testable when even they stay below the
// bar, met only when every variant clears both bars.
func TestPlantedClaim(t *testing.T) {
	run := func(oracle, ll, cos float64) *claimRun {
		r := &claimRun{}
		for _, v := range []string{"adagrad", "goldstone"} {
			r.trials = append(r.trials, claimTrial{variant: v, sum: map[string]float64{
				"steps_to_gap_1pct": 100, "test_ll": ll, "baseline_test_ll": -0.69,
				"planted_oracle_test_ll": oracle, "planted_mean_cos_rated": cos, "planted_rated_pairs": 9204,
			}})
		}
		return r
	}
	for _, c := range []struct {
		oracle, ll, cos float64
		want            string
	}{
		{-0.6875, -0.70, 0.07, "recovery not testable: the planted vectors themselves gain only 0.0025 nats"},
		{-0.60, -0.69, 0.1, "recovery bar (cos >= 0.8, test_ll >= base + 0.05) not met"},
		{-0.60, -0.62, 0.9, "recovery bar met by every variant"},
	} {
		ours, v := plantedFig3Claim("adagrad", "goldstone")(run(c.oracle, c.ll, c.cos))
		if !strings.Contains(v, c.want) {
			t.Errorf("oracle %v, test_ll %v, cos %v: verdict %q, want %q", c.oracle, c.ll, c.cos, v, c.want)
		}
		if !strings.Contains(ours, "over the 9204 (entity, bin) pairs with >= 10 training ratings") {
			t.Errorf("ours = %q", ours)
		}
	}
}
