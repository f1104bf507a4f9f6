package experiment_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/report"
	"goldstone/stages/artificial"
	_ "goldstone/stages/pipelines"
	"goldstone/train"
)

const goodConfig = `
[experiments.small]
description = "a small sweep"
pipeline = "artificial"

[experiments.small.settings]
steps = 200
lr = 0.5
time_steps = 5

[experiments.small.grid]
seed = [1, 2]
lambda = [1.0, 10]

[[experiments.small.variants]]
name = "gd"
gauge = "none"

[[experiments.small.variants]]
name = "goldstone"
gauge = "goldstone"
k1 = 10

[experiments.small.tolerances]
final_excess = 1e-9
`

func TestParseConfigGood(t *testing.T) {
	c, err := experiment.ParseConfig("x.toml", []byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["small"]
	if l := settings.MustDecode[train.LoopSettings](e.Settings); l.Steps != 200 || l.Optim.LR != 0.5 || settings.ChoiceName(l.Optim.Method) != "gd" {
		t.Fatalf("settings not resolved: %v", e.Settings)
	}
	trials := e.Trials()
	if len(trials) != 8 {
		t.Fatalf("got %d trials, want 2 variants x 2 x 2 = 8", len(trials))
	}
	ids := map[string]bool{}
	for _, tr := range trials {
		if ids[tr.ID] {
			t.Fatalf("duplicate trial id %s", tr.ID)
		}
		ids[tr.ID] = true
	}
	if trials[0].Name != "gd lambda=1 seed=1" || trials[1].Name != "gd lambda=1 seed=2" || settings.MustDecode[train.LoopSettings](trials[4].Settings).Optim.Gauge.Every() != 10 {
		t.Fatalf("unexpected order: %q %q", trials[0].Name, trials[1].Name)
	}
	// Stable ids: parsing again gives the same ids in the same order.
	c2, _ := experiment.ParseConfig("x.toml", []byte(goodConfig))
	for i, tr := range c2.Experiments["small"].Trials() {
		if tr.ID != trials[i].ID {
			t.Fatalf("trial %d id changed: %s vs %s", i, tr.ID, trials[i].ID)
		}
	}
	if e.Tolerances["final_excess"] != 1e-9 {
		t.Fatalf("tolerances: %v", e.Tolerances)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name, edit, want string
	}{
		{"unknown top key", "[experiments.small.setings]\nlr = 1", "unknown key"},
		{"unknown setting", "[experiments.small.settings]\nstepz = 1", `experiments.small.settings.stepz: unknown setting (did you mean "steps"?)`},
		{"wrong type", "[experiments.small.settings]\nsteps = \"many\"", "steps: want integer, got string"},
		{"zero steps", "[experiments.small.settings]\nsteps = 0", "steps: must be > 0"},
		{"negative coupling", "[experiments.small.settings]\nlambda = -1.0", "lambda: must be finite and > 0"},
		{"empty grid", "[experiments.small.grid]\nseed = []", "seed: empty grid"},
		{"bad grid value", "[experiments.small.grid]\nlr = [0.1, -2.0]", "grid.lr[1]: must be finite and > 0"},
		{"grid not array", "[experiments.small.grid]\nlr = 0.1", "must be an array"},
		{"bad pipeline", "", "unknown pipeline"},
		{"wrong pipeline key", "[experiments.small.settings]\nvocab = 10", "not used by pipeline"},
		{"bad enum", "[experiments.small.settings]\noptimizer = \"sgd\"", "must be one of gd, adagrad, adam"},
		{"toml syntax", "[experiments.small.settings]\nlr = = 1", "x.toml:4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "[experiments.small]\npipeline = \"artificial\"\n" + tt.edit + "\n"
			if tt.name == "bad pipeline" {
				doc = "[experiments.small]\npipeline = \"nope\"\n"
			}
			_, err := experiment.ParseConfig("x.toml", []byte(doc))
			if err == nil {
				t.Fatalf("no error for %q", doc)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
			var ce *experiment.ConfigError
			if !errors.As(err, &ce) || ce.Line == 0 {
				t.Fatalf("error %q names no line", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

func TestOverride(t *testing.T) {
	c, err := experiment.ParseConfig("x.toml", []byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["small"]
	if err := e.Override([]string{"seed=7", "steps=10", "k1=[5, 6]", "optimizer=adam"}); err != nil {
		t.Fatal(err)
	}
	trials := e.Trials()
	// k1 only matters to the goldstone variant: gd x 2 lambdas (k1 irrelevant,
	// one trial each) + goldstone x 2 lambdas x 2 k1.
	if len(trials) != 2+2*2 {
		t.Fatalf("got %d trials, want 6", len(trials))
	}
	for _, tr := range trials {
		if l := settings.MustDecode[train.LoopSettings](tr.Settings); tr.Seed != 7 || l.Seed != 7 || l.Steps != 10 || settings.ChoiceName(l.Optim.Method) != "adam" {
			t.Fatalf("override not applied: %v", tr.Settings)
		}
	}
	for _, bad := range []string{"steps=0", "nokey=1", "steps", "lambda=-3", "seed=[]"} {
		if err := e.Override([]string{bad}); err == nil {
			t.Errorf("--set %s accepted", bad)
		}
	}
}

func TestEffectiveSettingsDedupeTrials(t *testing.T) {
	c, err := experiment.ParseConfig("x.toml", []byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["small"]
	before := map[string]string{}
	for _, tr := range e.Trials() {
		before[tr.Name] = tr.ID
	}
	// k2 does not matter to the gd variant: its trial ids stay, goldstone's change.
	if err := e.Override([]string{"k2=7"}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range e.Trials() {
		same := before[tr.Name] == tr.ID
		if (tr.Variant == "gd") != same {
			t.Errorf("trial %q: id %s -> %s after changing k2", tr.Name, before[tr.Name], tr.ID)
		}
	}
	s := settings.MustDecode[artificial.TrainSettings](e.Trials()[0].Settings)
	keys := settings.Keys(s)
	if _, ok := keys["k2"]; ok {
		t.Errorf("k2 is a cache parameter of a trial without a gauge step")
	}
	if _, ok := keys["clip"]; !ok {
		t.Errorf("clip is not a cache parameter of a gd trial: %v", keys)
	}
}

func TestExperimentNames(t *testing.T) {
	for _, name := range []string{"small", "movielens-planted-20m", "a.b_c-1", "0x", strings.Repeat("a", 100)} {
		if err := experiment.CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"", "..", "../../escape", ".hidden", "a/b", `a\b`, "-x", "a b", "a\x1b[31m", "é", strings.Repeat("a", 101)} {
		if err := experiment.CheckName(name); err == nil {
			t.Errorf("CheckName(%q) accepted", name)
		}
		cfg := "[experiments." + strconvQuote(name) + "]\npipeline = \"artificial\"\n"
		_, err := experiment.ParseConfig("x.toml", []byte(cfg))
		var ce *experiment.ConfigError
		if name != "" && (!errors.As(err, &ce) || !strings.Contains(err.Error(), "invalid experiment name")) {
			t.Errorf("ParseConfig with experiment %q: %v", name, err)
		}
	}
	for _, tt := range []struct {
		elems []string
		ok    bool
	}{
		{[]string{"a", "run-1"}, true},
		{[]string{"a/../b"}, true},
		{[]string{".."}, false},
		{[]string{"a", "../../x"}, false},
		{[]string{"/etc"}, true}, // Join keeps it under root
	} {
		_, err := experiment.Within("/r/reports", tt.elems...)
		if (err == nil) != tt.ok {
			t.Errorf("Within(/r/reports, %q) = %v, want ok %v", tt.elems, err, tt.ok)
		}
	}
	if _, err := experiment.RunDir("reports", "../x", 1); err == nil {
		t.Error("RunDir accepted ../x")
	}
}

// strconvQuote quotes a TOML basic string.
func strconvQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\x1b", `\u001b`).Replace(s) + `"`
}

func TestMarkdownEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"gd lr=0.1":                      "gd lr=0.1",
		"<script>alert(1)</script>":      "&lt;script&gt;alert(1)&lt;/script&gt;",
		`<img src=x onerror="alert(1)">`: `&lt;img src=x onerror="alert(1)"&gt;`,
		"a|b & c\nd":                     `a\|b &amp; c d`,
		"esc \x1b[31mred":                "esc  [31mred",
	} {
		if got := report.MarkdownText(in); got != want {
			t.Errorf("MarkdownText(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`"adam"`:   "`\"adam\"`",
		"a`b":      "``a`b``",
		"`x`":      "`` `x` ``",
		"<b>x</b>": "`<b>x</b>`",
		"a\nb":     "`a b`",
		"x``y":     "```x``y```",
	} {
		if got := report.MarkdownCode(in); got != want {
			t.Errorf("MarkdownCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSweepSizeAndCancelledEnumeration(t *testing.T) {
	c, err := experiment.ParseConfig("x.toml", []byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["small"]
	if n, text := e.Size(), e.SizeText(); n != 8 || text != "2 variants × lambda 2 × seed 2" {
		t.Errorf("Size, SizeText = %d, %q", n, text)
	}
	var seeds, lrs []string
	for i := range 1000 {
		seeds = append(seeds, strconv.Itoa(i+1))
		lrs = append(lrs, strconv.FormatFloat(float64(i+1)/1000, 'g', -1, 64))
	}
	if err := e.Override([]string{"seed=" + strings.Join(seeds, ","), "lambda=" + strings.Join(lrs, ",")}); err != nil {
		t.Fatal(err)
	}
	if n := e.Size(); n != 2*1000*1000 {
		t.Errorf("Size = %d, want 2000000", n)
	}
	// Enumerating 2,000,000 points would take minutes; a cancelled
	// context stops it within a few hundred.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if trials, err := e.TrialsContext(ctx); !errors.Is(err, context.Canceled) || trials != nil {
		t.Errorf("TrialsContext(cancelled) = %d trials, %v", len(trials), err)
	}
}
