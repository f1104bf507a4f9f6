package main

import (
	"strings"
	"testing"
)

// TestAlgorithmLabel: the paper's literal Goldstone-GD is named as the
// paper's only with every one of its choices; any of ours is named with
// what it adds.
func TestAlgorithmLabel(t *testing.T) {
	paper := map[string]any{"optimizer": "adagrad", "gauge": "goldstone", "rotation": "linear", "guard": false, "flip_walls": false, "keep_fields": true, "gauge_search": "none", "gauge_lr": 0.0}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range paper {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, c := range []struct {
		p    map[string]any
		want string
	}{
		{paper, "AdaGrad + the paper's Goldstone-GD: Z + (G - G^T) Z, gauge fields kept, rho' = 1/(T N <Z^2>)"},
		{with("guard", true), "AdaGrad + Goldstone-GD, ours (beyond the paper): Z + (G - G^T) Z + guard"},
		{with("rotation", "exact"), "AdaGrad + Goldstone-GD, ours (beyond the paper): exp(G - G^T) Z"},
		{with("keep_fields", false), "AdaGrad + Goldstone-GD, ours (beyond the paper): Z + (G - G^T) Z + fields reset every round"},
		{with("gauge_lr", 0.01), "AdaGrad + Goldstone-GD, ours (beyond the paper): Z + (G - G^T) Z + rho' = 0.01"},
		{map[string]any{"optimizer": "adagrad", "gauge": "goldstone", "rotation": "exact", "guard": true, "flip_walls": true, "keep_fields": true, "gauge_search": "rate"},
			"AdaGrad + Goldstone-GD, ours (beyond the paper): exp(G - G^T) Z + guard + wall flips + line search on rho'"},
		{map[string]any{"optimizer": "adagrad", "gauge": "none"}, "AdaGrad"},
		{map[string]any{"optimizer": "gd", "gauge": "procrustes"}, "GD + Procrustes gauge fixing every k1 steps (ours, beyond the paper)"},
	} {
		if got := algorithmLabel(c.p); got != c.want {
			t.Errorf("%v:\n got %q\nwant %q", c.p, got, c.want)
		}
	}
	if fmtLL(-0.52401) != "-0.5240" || fmtLL(-4.408e236) != "-4.408e+236" {
		t.Errorf("fmtLL: %s, %s", fmtLL(-0.52401), fmtLL(-4.408e236))
	}
	if modelLabel(map[string]any{"bias": false}) != "the paper's logistic MF (no biases)" || !strings.Contains(modelLabel(map[string]any{"bias": true}), "beyond the paper") {
		t.Error("model labels")
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
// the accepted share of gauge rounds, the static references, a verdict for
// the paper's algorithm and one for ours; the rounds row tells the variant
// whose rounds were all rejected from the one whose line search applied
// them.
func TestFig3ClaimsEndToEnd(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(fig3Config)
	e.mustRun(0, "--experiment", "movielens-psi", "--quiet")
	e.mustRun(0, "--experiment", "movielens-rounds", "--quiet")
	table := e.mustRun(0, "claims")
	row := claimRowOf(t, table, "Fig. 3 (Sec. 5.2), small real, 20,000 steps: the paper's model and algorithm")
	for _, want := range []string{
		"model: the paper's logistic MF (no biases)",
		"adagrad [AdaGrad]: psi within 10% of the reference from ",
		"goldstone-linear [AdaGrad + the paper's Goldstone-GD: Z + (G - G^T) Z, gauge fields kept, rho' = 1/(T N <Z^2>)]: psi within 10%",
		"within 1% from ",
		"gauge rounds accepted 100%",
		"static references on the same split (test_ll): base rate -0.",
		"user + item biases -0.",
		"static MF (one bin, trained the same way) -0.",
		"| goldstone-linear: ",
	} {
		if !strings.Contains(row, want) {
			t.Errorf("paper row lacks %q:\n%s", want, row)
		}
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
		"goldstone-big-rate [AdaGrad + Goldstone-GD, ours (beyond the paper): exp(G - G^T) Z + guard + rho' = 1000]: 0 of 6 rounds applied",
		"rejected with no prediction (exp(G - G^T) not orthogonal to 1e-9: a huge step)",
		"the rounds start from a gauge gap psi - min_R psi of ",
		"and the loss by ",
		"goldstone-search-rate [AdaGrad + Goldstone-GD, ours (beyond the paper): exp(G - G^T) Z + guard + line search on rho' + rho' = 1000]: 6 of 6 rounds applied",
		"halvings by the line search",
		"most rounds rejected: goldstone-big-rate (0% applied)",
		"every round applied: ", "goldstone-search-rate",
	} {
		if !strings.Contains(row, want) {
			t.Errorf("rounds row lacks %q:\n%s", want, row)
		}
	}
}
