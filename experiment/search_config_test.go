package experiment_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/search"
	_ "goldstone/stages/pipelines"
	"goldstone/train"
)

const searchHead = `[experiments.s]
pipeline = "artificial"

[experiments.s.settings]
steps = 50
time_steps = 5

[experiments.s.grid]
seed = [1, 2]

[experiments.s.search]
`

const goodSearch = searchHead + `sampler = "tpe"
trials = 12
seed = 3
objective = "final_loss"
direction = "minimize"

[experiments.s.search.space]
lr = { log_uniform = [0.01, 1.0] }
lambda = { uniform = [1.0, 20.0] }
dim = { int = [2, 4] }
gauge = { choice = ["none", "goldstone"] }
k1 = { int = [5, 50], log = true, when = { gauge = ["goldstone"] } }
`

func TestSearchTableGood(t *testing.T) {
	c, err := experiment.ParseConfig("x.toml", []byte(goodSearch))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["s"]
	s := e.Search
	if s == nil || s.Sampler != "tpe" || s.Trials != 12 || s.Seed != 3 || s.Wave != experiment.DefaultTPEWave || s.Maximize() {
		t.Fatalf("search %+v", s)
	}
	var keys []string
	for _, p := range s.Space.Params {
		keys = append(keys, p.Key)
	}
	// Unconditional settings first, then the conditional one.
	if got := strings.Join(keys, ","); got != "dim,gauge,lambda,lr,k1" {
		t.Fatalf("params %s", got)
	}
	pts, err := search.Random{}.Suggest(&s.Space, s.Seed, nil, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.Wave(5, pts)
	if err != nil {
		t.Fatal(err)
	}
	trials := w.Trials()
	if len(trials) != 6 { // 3 points x 2 seeds
		t.Fatalf("%d trials in the wave, want 6", len(trials))
	}
	if trials[0].Variant != "s5" || trials[5].Variant != "s7" {
		t.Fatalf("variants %q .. %q", trials[0].Variant, trials[5].Variant)
	}
	baseLR := settings.MustDecode[train.LoopSettings](e.Settings).Optim.LR
	for _, tr := range trials {
		if settings.MustDecode[train.LoopSettings](tr.Settings).Optim.LR == baseLR {
			t.Fatalf("trial %s kept the base lr", tr.Name)
		}
	}
	// Every wave is the same run: the resolved configuration is the
	// search's, not its points'.
	a, ha := e.Resolved()
	b, hb := w.Resolved()
	if a != b || ha != hb {
		t.Fatalf("a wave changes the resolved configuration:\n%s\n%s", a, b)
	}
	if !strings.Contains(a, `"sampler":"tpe"`) {
		t.Fatalf("resolved configuration without the search: %s", a)
	}
	// repro and report rebuild a search run from its record: the same
	// search, whose first wave is the same trials.
	back, err := experiment.ExperimentFromResolved(a)
	if err != nil {
		t.Fatalf("the search does not load back from its record: %v", err)
	}
	if r, _ := back.Resolved(); r != a || back.Search == nil {
		t.Fatalf("the search changed in the round trip:\n%s\n%s", a, r)
	}
	w2, err := back.Wave(5, pts)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range w2.Trials() {
		if tr.ID != trials[i].ID {
			t.Fatalf("trial %d of the wave rebuilt from the record: %s, want %s", i, tr.ID, trials[i].ID)
		}
	}
	// Without a search table the resolved configuration is as before.
	c2, err := experiment.ParseConfig("x.toml", []byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := c2.Experiments["small"].Resolved(); strings.Contains(r, `"search":`) {
		t.Fatalf("a grid's configuration names a search: %s", r)
	}
}

func TestSearchTableErrors(t *testing.T) {
	body := func(sampler, objective, space string) string {
		return searchHead + fmt.Sprintf("sampler = %q\ntrials = 4\nobjective = %q\ndirection = \"minimize\"\n\n[experiments.s.search.space]\n%s\n", sampler, objective, space)
	}
	lr := `lr = { log_uniform = [0.01, 1.0] }`
	tests := []struct {
		name, doc, want string
		line            int
	}{
		{"unknown sampler", body("bayes", "final_loss", lr), `search.sampler: unknown sampler "bayes"; want one of grid, random, sobol, tpe`, 12},
		{"empty range", body("random", "final_loss", `lr = { uniform = [0.5, 0.5] }`), "space.lr: empty uniform range [0.5, 0.5]", 18},
		{"reversed range", body("random", "final_loss", `lambda = { uniform = [5.0, 1.0] }`), "space.lambda: empty uniform range", 18},
		{"log through 0", body("random", "final_loss", `lambda = { log_uniform = [-1.0, 1.0] }`), "log range [-1, 1] reaches 0 or below", 18},
		{"log int through 0", body("random", "final_loss", `k1 = { int = [0, 10], log = true }`), "log range [0, 10] reaches 0 or below", 18},
		{"unknown setting", body("random", "final_loss", `lrr = { uniform = [0.1, 1.0] }`), `space.lrr: unknown setting (did you mean "lr"?)`, 18},
		{"test objective", body("random", "test_ll", lr), `search.objective: "test_ll" is a test metric`, 14},
		{"baseline test objective", body("random", "baseline_test_rmse", lr), "is a test metric", 14},
		{"unknown key", body("random", "final_loss", `lr = { log_uniformm = [0.1, 1.0] }`), "unknown key", 18},
		{"two distributions", body("random", "final_loss", `lr = { uniform = [0.1, 1.0], choice = [0.5] }`), "want exactly one of", 18},
		{"uniform on int", body("random", "final_loss", `dim = { uniform = [1.0, 4.0] }`), "a uniform range needs a float setting", 18},
		{"setting's check", body("random", "final_loss", `lr = { uniform = [-1.0, 1.0] }`), "range end -1", 18},
		{"searched and in grid", body("random", "final_loss", `seed = { int = [1, 3] }`), "the seed is not searched", 18},
		{"bad choice", body("random", "final_loss", `gauge = { choice = ["none", "gold"] }`), "choice[1]", 18},
		{"condition on unknown", body("random", "final_loss", `k1 = { int = [5, 50], when = { gauge = ["goldstone"] } }`), "space.k1: when: names \"gauge\", which is not a parameter", 18},
		{"grid over uniform", body("grid", "final_loss", lr), "space.lr: the grid sampler needs a choice or an int range", 18},
		{"no direction", strings.Replace(body("random", "final_loss", lr), "direction = \"minimize\"\n", "", 1), "search.direction", 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := experiment.ParseConfig("x.toml", []byte(tt.doc))
			if err == nil {
				t.Fatalf("no error for\n%s", tt.doc)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
			var ce *experiment.ConfigError
			if !errors.As(err, &ce) || ce.Line != tt.line {
				t.Fatalf("error %q: line %d, want %d", err, ce.Line, tt.line)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("x.toml:%d: ", tt.line)) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line naming file:line: %q", err)
			}
		})
	}
}

func TestSearchGridSamplerTrials(t *testing.T) {
	doc := searchHead + "sampler = \"grid\"\nobjective = \"final_loss\"\ndirection = \"minimize\"\n\n[experiments.s.search.space]\ngauge = { choice = [\"none\", \"goldstone\"] }\ndim = { int = [2, 3] }\n"
	c, err := experiment.ParseConfig("x.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Experiments["s"].Search; s.Trials != 4 || s.Wave != 4 {
		t.Fatalf("grid search: trials %d wave %d, want 4 and 4", s.Trials, s.Wave)
	}
}

// TestOverrideSearch: --set search.seed, search.trials and search.sampler
// change the search (and so its resolved configuration and hash) and
// nothing else; bad values and other search keys are refused in one line
// naming the key; an experiment without a search table refuses them.
func TestOverrideSearch(t *testing.T) {
	parse := func(doc string) *experiment.Experiment {
		t.Helper()
		c, err := experiment.ParseConfig("x.toml", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return c.Experiments["s"]
	}
	base := parse(goodSearch)
	_, h0 := base.Resolved()
	e := parse(goodSearch)
	if err := e.Override([]string{"search.seed=7", "search.trials=20", "search.sampler=random"}); err != nil {
		t.Fatal(err)
	}
	s := e.Search
	if s.Seed != 7 || s.Trials != 20 || s.Sampler != "random" || s.Wave != base.Search.Wave || len(s.Space.Params) != len(base.Search.Space.Params) ||
		s.Objective != base.Search.Objective {
		t.Fatalf("overridden search %+v", s)
	}
	if base.Search.Seed != 3 || base.Search.Sampler != "tpe" {
		t.Fatalf("the override changed the experiment it was parsed beside: %+v", base.Search)
	}
	if _, h := e.Resolved(); h == h0 {
		t.Fatal("the overridden search has the same configuration hash")
	}
	// The grid sampler runs at most the grid's points.
	g := parse(goodSearch)
	if err := g.Override([]string{"search.sampler=grid"}); err == nil || !strings.Contains(err.Error(), "--set: search.sampler: the grid sampler: ") {
		t.Fatalf("grid over a continuous space: %v", err)
	}
	doc := searchHead + "sampler = \"random\"\ntrials = 9\nobjective = \"final_loss\"\ndirection = \"minimize\"\n\n[experiments.s.search.space]\ngauge = { choice = [\"none\", \"goldstone\"] }\ndim = { int = [2, 3] }\n"
	g = parse(doc)
	if err := g.Override([]string{"search.sampler=grid"}); err != nil || g.Search.Trials != 4 {
		t.Fatalf("grid of 4 points with trials 9: %v, trials %d", err, g.Search.Trials)
	}
	for _, c := range []struct{ set, want string }{
		{"search.seed=-1", "--set: search.seed: must be >= 0, got -1"},
		{"search.seed=x", `--set: search.seed: want an integer, got "x"`},
		{"search.trials=0", "--set: search.trials: want 1 to 100000 trials, got 0"},
		{"search.sampler=bayes", "--set: search.sampler: "},
		{"search.objective=test_ll", "--set: search.objective: --set takes search.sampler, search.seed and search.trials"},
	} {
		err := parse(goodSearch).Override([]string{c.set})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--set %s: %v, want %q...", c.set, err, c.want)
		}
	}
	plain := parse(strings.Replace(searchHead, "\n[experiments.s.search]\n", "", 1))
	if err := plain.Override([]string{"search.seed=2"}); err == nil || err.Error() != "--set: search.seed: experiment s has no search table" {
		t.Fatalf("no search table: %v", err)
	}
}
