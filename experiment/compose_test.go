package experiment_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
)

func gridOf(e *experiment.Experiment, key string) string {
	for _, ax := range e.Grid {
		if ax.Key == key {
			return fmt.Sprint(ax.Values)
		}
	}
	return ""
}

// pick is "k=v ..." of the keys of m, in the order given.
func pick(m map[string]any, keys ...string) string {
	var parts []string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			parts = append(parts, k+"="+settings.FormatValue(v))
		}
	}
	return strings.Join(parts, " ")
}

func parseSmall(t *testing.T, extra string) *experiment.Experiment {
	t.Helper()
	c, err := experiment.ParseConfig("x.toml", []byte(goodConfig+extra))
	if err != nil {
		t.Fatal(err)
	}
	return c.Experiments["small"]
}

// TestRanges: "1..5" in a grid (alone or in a list) and in --set is the
// integers from 1 to 5; a bad range names its key and line.
func TestRanges(t *testing.T) {
	doc := "[experiments.r]\npipeline = \"artificial\"\n[experiments.r.grid]\nseed = \"1..4\"\nk1 = [2, \"5..7\", 10]\n"
	c, err := experiment.ParseConfig("x.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["r"]
	if got := gridOf(e, "seed"); got != "[1 2 3 4]" {
		t.Fatalf("seed grid %s", got)
	}
	if got := gridOf(e, "k1"); got != "[2 5 6 7 10]" {
		t.Fatalf("k1 grid %s", got)
	}
	for _, set := range []string{"seed=1..20", "seed=1..3,7", "seed=[\"1..2\", 9]"} {
		e := parseSmall(t, "")
		if err := e.Override([]string{set}); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		want := map[string]string{"seed=1..20": fmt.Sprint([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}),
			"seed=1..3,7": "[1 2 3 7]", "seed=[\"1..2\", 9]": "[1 2 9]"}[set]
		if got := gridOf(e, "seed"); got != want {
			t.Errorf("%s: grid %s, want %s", set, got, want)
		}
	}
	for _, tt := range []struct{ edit, want string }{
		{"seed = \"1..x\"", `x.toml:4: experiments.r.grid.seed: range "1..x": want FIRST..LAST`},
		{"seed = \"9..2\"", `x.toml:4: experiments.r.grid.seed: range "9..2": FIRST is greater than LAST`},
		{"seed = [1,\n \"3..a\"]", `x.toml:5: experiments.r.grid.seed[1]: range "3..a"`},
		{"seed = [1, \"1..3\"]", "value 1 listed twice"},
		{"seed = \"0..100000000\"", "more than 100000 values"},
		{"lr = \"1..3\"", `must be an array of values, got string "1..3"`},
	} {
		_, err := experiment.ParseConfig("x.toml", []byte("[experiments.r]\npipeline = \"artificial\"\n[experiments.r.grid]\n"+tt.edit+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.edit, err, tt.want)
		}
	}
	for _, tt := range []struct{ set, want string }{
		{"seed=1..x", `--set: seed: range "1..x": want FIRST..LAST`},
		{"seed=5..1", "FIRST is greater than LAST"},
	} {
		err := parseSmall(t, "").Override([]string{tt.set})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.set, err, tt.want)
		}
	}
}

// TestOverrideVariant: --set variants.NAME.KEY=VALUE sets KEY in that
// variant alone; an unknown variant or key is one line naming it.
func TestOverrideVariant(t *testing.T) {
	for _, set := range []string{"variants.goldstone.lr=0.25", "variants.goldstone.settings.lr=0.25"} {
		e := parseSmall(t, "")
		if err := e.Override([]string{set}); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		for _, tr := range e.Trials() {
			want := "lr=0.5"
			if tr.Variant == "goldstone" {
				want = "lr=0.25"
			}
			if got := pick(tr.Settings, "lr"); got != want {
				t.Fatalf("%s: trial %s has %s, want %s", set, tr.Name, got, want)
			}
		}
	}
	for _, tt := range []struct{ set, want string }{
		{"variants.goldstne.lr=1", `--set: variants.goldstne.lr: unknown variant "goldstne" (did you mean "goldstone"?); experiment small has gd, goldstone`},
		{"variants.gd.lrr=1", `--set: variants.gd.lrr: lrr: unknown setting (did you mean "lr"?)`},
		{"variants.gd.lr=-1", "must be finite and > 0"},
		{"variants.gd.lr=1,2", "one value per variant"},
		{"variants.gd.seed=3", "seed is on the grid"},
		{"variants.gd=3", "--set: variants.gd: want variants.NAME.KEY=VALUE"},
	} {
		err := parseSmall(t, "").Override([]string{tt.set})
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want %q", tt.set, err, tt.want)
		}
	}
}

// TestSelectVariants: --variant keeps the named variants in file order.
func TestSelectVariants(t *testing.T) {
	e := parseSmall(t, "")
	if err := e.SelectVariants([]string{"goldstone"}); err != nil {
		t.Fatal(err)
	}
	if len(e.Variants) != 1 || e.Variants[0].Name != "goldstone" || len(e.Trials()) != 4 {
		t.Fatalf("variants %v, %d trials", e.Variants, len(e.Trials()))
	}
	err := parseSmall(t, "").SelectVariants([]string{"gdd"})
	var ce *experiment.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `--variant: gdd: unknown variant "gdd" (did you mean "gd"?)`) {
		t.Fatalf("error %v", err)
	}
}

const extendsConfig = `
[experiments.base]
description = "the base"
pipeline = "artificial"
[experiments.base.settings]
steps = 200
lr = 0.5
[experiments.base.grid]
seed = [1, 2]
lambda = [1.0, 10.0]
[[experiments.base.variants]]
name = "gd"
gauge = "none"
[[experiments.base.variants]]
name = "goldstone"
gauge = "goldstone"
k1 = 10
[experiments.base.tolerances]
final_excess = 1e-9

[experiments.child]
extends = "base"
[experiments.child.settings]
steps = 300
lambda = 5.0
[experiments.child.grid]
seed = "1..3"
[[experiments.child.variants]]
name = "goldstone"
k1 = 20
[[experiments.child.variants]]
name = "procrustes"
gauge = "procrustes"

[experiments.grandchild]
extends = "child"
description = "third"
[experiments.grandchild.settings]
lr = 0.25
`

// TestExtends: an experiment inherits settings, grid, variants and
// tolerances, overridden key by key (variants by name), through chains.
func TestExtends(t *testing.T) {
	c, err := experiment.ParseConfig("x.toml", []byte(extendsConfig))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["child"]
	if e.Pipeline != "artificial" || e.Description != "the base" || pick(e.Settings, "steps", "lr", "lambda") != "steps=300 lr=0.5 lambda=5" {
		t.Fatalf("settings %v", e.Settings)
	}
	if gridOf(e, "lambda") != "" || gridOf(e, "seed") != "[1 2 3]" {
		t.Fatalf("grid %v: lambda fixed by the child's settings, seed its own", e.Grid)
	}
	var names []string
	for _, v := range e.Variants {
		names = append(names, fmt.Sprintf("%s %v", v.Name, v.Settings))
	}
	if got := strings.Join(names, "; "); got != "gd map[gauge:none]; goldstone map[gauge:goldstone k1:20]; procrustes map[gauge:procrustes]" {
		t.Fatalf("variants %s", got)
	}
	if e.Tolerances["final_excess"] != 1e-9 {
		t.Fatalf("tolerances %v", e.Tolerances)
	}
	g := c.Experiments["grandchild"]
	if g.Description != "third" || pick(g.Settings, "lr", "steps") != "lr=0.25 steps=300" || len(g.Variants) != 3 {
		t.Fatalf("grandchild %v %v", g.Settings, g.Variants)
	}
	if b := c.Experiments["base"]; pick(b.Settings, "steps") != "steps=200" || len(b.Variants) != 2 || pick(b.Variants[1].Settings, "k1") != "k1=10" {
		t.Fatalf("the base changed: %v %v", b.Settings, b.Variants)
	}
	for _, tt := range []struct{ doc, want string }{
		{"[experiments.a]\nextends = \"b\"\n[experiments.b]\nextends = \"a\"\n", "x.toml:4: experiments.b.extends: extends cycle: a -> b -> a"},
		{"[experiments.a]\nextends = \"a\"\n", "x.toml:2: experiments.a.extends: extends cycle: a -> a"},
		{"[experiments.a]\npipeline = \"artificial\"\n[experiments.b]\n\nextends = \"aa\"\n", `x.toml:5: experiments.b.extends: unknown experiment "aa" (did you mean "a"?)`},
		{"[experiments.a]\npipeline = \"artificial\"\n[experiments.b]\nextends = \"a\"\npipeline = \"dwe\"\n", `x.toml:5: experiments.b.pipeline: pipeline "dwe" differs from "artificial"`},
		{"[experiments.a]\npipeline = \"artificial\"\n[experiments.b]\nextends = \"a\"\n[experiments.b.settings]\nstepz = 1\n", `x.toml:6: experiments.b.settings.stepz: unknown setting`},
	} {
		_, err := experiment.ParseConfig("x.toml", []byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.doc, err, tt.want)
		}
	}
}

// TestLoadConfigs: files merge in order, an experiment may extend one of
// another file, and one defined twice is refused naming both files.
func TestLoadConfigs(t *testing.T) {
	dir := t.TempDir()
	a, b, dup := filepath.Join(dir, "a.toml"), filepath.Join(dir, "b.toml"), filepath.Join(dir, "dup.toml")
	os.WriteFile(a, []byte(goodConfig), 0o644)
	os.WriteFile(b, []byte("[experiments.mine]\nextends = \"small\"\n[experiments.mine.settings]\nsteps = 7\n"), 0o644)
	os.WriteFile(dup, []byte("# again\n[experiments.small]\npipeline = \"artificial\"\n"), 0o644)
	c, err := experiment.LoadConfigs([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Experiments["mine"]; m == nil || pick(m.Settings, "steps") != "steps=7" || len(m.Variants) != 2 || c.Experiments["small"] == nil {
		t.Fatalf("merged: %v", c.Experiments)
	}
	_, err = experiment.LoadConfigs([]string{a, dup})
	want := dup + ":2: experiments.small: already defined in " + a + ":2"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}

// TestShowRoundTrip: the TOML of a resolved experiment (runner show)
// decodes back to the same experiment, for every experiment of
// experiments.toml and for one with overrides, ranges and extends.
func TestShowRoundTrip(t *testing.T) {
	repo, err := experiment.LoadConfig("../experiments.toml")
	if err != nil {
		t.Fatal(err)
	}
	ext, err := experiment.ParseConfig("x.toml", []byte(extendsConfig))
	if err != nil {
		t.Fatal(err)
	}
	over := parseSmall(t, "")
	if err := over.Override([]string{"variants.gd.lr=0.125", "seed=3..5", "init_scale=0.5"}); err != nil {
		t.Fatal(err)
	}
	exps := []*experiment.Experiment{over, ext.Experiments["child"], ext.Experiments["grandchild"]}
	for _, n := range []string{"artificial", "movielens-sweep", "dwe-sotu"} {
		if repo.Experiments[n] == nil {
			t.Fatalf("no experiment %s in experiments.toml", n)
		}
	}
	for _, e := range repo.Experiments {
		exps = append(exps, e)
	}
	for _, e := range exps {
		text := e.TOML()
		c, err := experiment.ParseConfig("show.toml", []byte(text))
		if err != nil {
			t.Fatalf("%s: %v\n%s", e.Name, err, text)
		}
		back := c.Experiments[e.Name]
		js1, h1 := e.Resolved()
		js2, h2 := back.Resolved()
		if h1 != h2 || back.Description != e.Description || fmt.Sprint(back.Slurm) != fmt.Sprint(e.Slurm) {
			t.Fatalf("%s: round trip differs:\n%s\n%s\n%s", e.Name, js1, js2, text)
		}
		if len(back.Trials()) != len(e.Trials()) {
			t.Fatalf("%s: trials differ", e.Name)
		}
	}
	if !strings.Contains(over.TOML(), "# lr = ") && !strings.Contains(repo.Experiments["artificial"].TOML(), "lr = 1.0") {
		t.Fatal("settings missing from the TOML")
	}
}

// TestExtendsSearch: an experiment extending a search inherits its search
// table whole, and one with a search table of its own keeps its own (before,
// extends dropped both, leaving a plain grid).
func TestExtendsSearch(t *testing.T) {
	doc := `[experiments.a]
pipeline = "artificial"
[experiments.a.settings]
steps = 20
[experiments.a.search]
sampler = "random"
trials = 3
objective = "final_loss"
direction = "minimize"
[experiments.a.search.space]
lr = { log_uniform = [0.1, 1.0] }
[experiments.b]
extends = "a"
[experiments.b.settings]
steps = 30
[experiments.c]
extends = "a"
[experiments.c.search]
sampler = "sobol"
trials = 5
objective = "final_loss"
direction = "minimize"
[experiments.c.search.space]
lr = { log_uniform = [0.2, 2.0] }
`
	c, err := experiment.ParseConfig("x.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Experiments["b"].Search; s == nil || s.Sampler != "random" || s.Trials != 3 || s.Space.Params[0].Hi != 1 {
		t.Fatalf("b's search %+v", s)
	}
	if s := c.Experiments["c"].Search; s == nil || s.Sampler != "sobol" || s.Trials != 5 || s.Space.Params[0].Hi != 2 {
		t.Fatalf("c's search %+v", s)
	}
}
