package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/report/claims"

	"github.com/pelletier/go-toml/v2"
)

// repoClaims returns the [[claims]] and [[claim_sections]] of the
// repository's experiments.toml as TOML, for the tests' own experiments
// files: the e2e tests check the rows the repository defines, so a wrong
// row there fails them.
func repoClaims(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "experiments.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out, err := toml.Marshal(map[string]any{"claims": doc["claims"], "claim_sections": doc["claim_sections"]})
	if err != nil {
		t.Fatal(err)
	}
	return "\n" + string(out)
}

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

// TestClaimsEndToEnd: a file without claims or with a bad one is exit 2;
// rows come from the latest ended run of each
// experiment as defined in the experiments file; experiments without such
// a run, or absent from the file, say "not measured yet"; a run with --set
// overrides does not count; --readme replaces only the marked block.
func TestClaimsEndToEnd(t *testing.T) {
	e := newEnv(t)
	// A file without [[claims]] has no table to print: exit 2, saying so.
	if _, errs, code := e.run("claims"); code != 2 || !strings.Contains(errs, "experiments.toml: no [[claims]] tables") {
		t.Errorf("claims without [[claims]]: exit %d %s", code, errs)
	}
	// A bad claim fails every command that reads the file, naming its line.
	e.writeConfig(claimsConfig + strings.Replace(repoClaims(t), "verdict = 'speedup'", "verdict = 'speed-up'", 1))
	if _, errs, code := e.run("list"); code != 2 || !strings.Contains(errs, `.verdict: unknown kind "speed-up" (did you mean "speedup"?)`) {
		t.Errorf("a bad verdict kind: exit %d %s", code, errs)
	}
	e.writeConfig(claimsConfig + repoClaims(t))
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
	if strings.Contains(row, "not measured yet") {
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
	os.WriteFile(readme, []byte("# x\n\nbefore\n"+claims.Begin+"\nold table\n"+claims.End+"\nafter\n"), 0o644)
	e.mustRun(0, "claims", "--readme", readme)
	b, _ := os.ReadFile(readme)
	if got := string(b); !strings.HasPrefix(got, "# x\n\nbefore\n"+claims.Begin+"\n| claim |") || !strings.HasSuffix(got, claims.End+"\nafter\n") || strings.Contains(got, "old table") {
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

const fig3Config = `
[experiments.movielens-psi]
pipeline = "movielens"
[experiments.movielens-psi.settings]
dataset = "planted"
planted_users = 200
planted_items = 80
planted_ratings = 8000
planted_dim = 2
bins = 4
dim = 2
steps = 60
k1 = 10
optimizer = "adagrad"
lr = 0.5
gamma = 1.0
gauge_gap_every = 7
gauge_gap_around = 1
round_loss = true
[[experiments.movielens-psi.variants]]
name = "adagrad"
gauge = "none"
[[experiments.movielens-psi.variants]]
name = "goldstone-linear"
gauge = "goldstone"
rotation = "linear"
guard = false
flip_walls = false
[[experiments.movielens-psi.variants]]
name = "goldstone"
gauge = "goldstone"
[[experiments.movielens-psi.variants]]
name = "goldstone-search"
gauge = "goldstone"
gauge_search = "rate"
[[experiments.movielens-psi.variants]]
name = "procrustes"
gauge = "procrustes"

[experiments.movielens-rounds]
pipeline = "movielens"
[experiments.movielens-rounds.settings]
dataset = "planted"
planted_users = 200
planted_items = 80
planted_ratings = 8000
planted_dim = 2
bins = 4
dim = 2
steps = 60
k1 = 10
optimizer = "adagrad"
lr = 0.5
gamma = 1.0
bias = true
gauge = "goldstone"
gauge_gap_around = 1
round_loss = true
[[experiments.movielens-rounds.variants]]
name = "goldstone"
[[experiments.movielens-rounds.variants]]
name = "goldstone-big-rate"
gauge_lr = 1000.0
flip_walls = false
[[experiments.movielens-rounds.variants]]
name = "goldstone-search-rate"
gauge_lr = 1000.0
flip_walls = false
gauge_search = "rate"
`

// TestFig3ClaimsEndToEnd runs tiny versions of movielens-psi and
// movielens-rounds and checks their claims rows: the model and every
// algorithm named exactly, psi convergence against the run's reference,
// the share of gauge rounds that lowered psi (never "accepted" of the
// unguarded paper's algorithm), the static references, a verdict for
// the paper's algorithm and one for ours; the rounds row tells the variant
// whose rounds were all rejected from the one whose line search applied
// them.
func TestFig3ClaimsEndToEnd(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(fig3Config + repoClaims(t))
	e.mustRun(0, "--experiment", "movielens-psi", "--quiet")
	e.mustRun(0, "--experiment", "movielens-rounds", "--quiet")
	table := e.mustRun(0, "claims")
	row := claimRowOf(t, table, "Fig. 3 (Sec. 5.2), small real, 20,000 steps: the paper's model and algorithm")
	for _, want := range []string{
		"model: the paper's logistic MF (no biases)",
		"adagrad [AdaGrad]: psi within 10% of the reference from ",
		"goldstone-linear [AdaGrad + the paper's Goldstone-GD: Z + (G - G^T) Z, gauge fields kept, rho' = 1/(T N <Z^2>)]: psi within 10%",
		"within 1% from ",
		"gauge rounds that lowered psi ",
		"static references on the same split (test_ll): base rate -0.",
		"user + item biases -0.",
		"static MF (one bin, trained the same way) -0.",
		"| goldstone-linear: ",
	} {
		if !strings.Contains(row, want) {
			t.Errorf("paper row lacks %q:\n%s", want, row)
		}
	}
	if strings.Contains(row, "accepted") {
		t.Errorf("the paper row says the unguarded algorithm's rounds were accepted:\n%s", row)
	}
	row = claimRowOf(t, table, "Fig. 3 (Sec. 5.2), small real, 20,000 steps, our Goldstone-GD and Procrustes (beyond the paper)")
	for _, want := range []string{
		"goldstone-search [AdaGrad + Goldstone-GD, ours (beyond the paper): exp(G - G^T) Z + guard + wall flips + line search on rho']",
		"procrustes [AdaGrad + Procrustes gauge fixing every k1 steps (ours, beyond the paper)]",
		"| goldstone-search: ", "; procrustes: ",
	} {
		if !strings.Contains(row, want) {
			t.Errorf("beyond row lacks %q:\n%s", want, row)
		}
	}
	row = claimRowOf(t, table, "Gauge rounds on MovieLens (beyond the paper)")
	for _, want := range []string{
		"goldstone-big-rate [AdaGrad + Goldstone-GD, ours (beyond the paper): exp(G - G^T) Z + guard + rho' = 1000]: 0 of 6 rounds lowered psi, 0 applied by the guard",
		"rejected with no prediction (exp(G - G^T) not orthogonal to 1e-9: a huge step)",
		"the rounds start from a gauge gap psi - min_R psi of ",
		"and the loss by ",
		"goldstone-search-rate [AdaGrad + Goldstone-GD, ours (beyond the paper): exp(G - G^T) Z + guard + line search on rho' + rho' = 1000]: 6 of 6 rounds lowered psi, 6 applied by the guard",
		"halvings by the line search",
		"most rounds rejected by the guard: goldstone-big-rate (0% applied)",
		"every round lowered psi: ", "goldstone-search-rate",
	} {
		if !strings.Contains(row, want) {
			t.Errorf("rounds row lacks %q:\n%s", want, row)
		}
	}
}
