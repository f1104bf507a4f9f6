package claims

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"goldstone/experiment"
	_ "goldstone/stages/pipelines" // registers the pipelines
)

// oneExperiment is an experiments file the decoding tests append claims to.
const oneExperiment = `[experiments.art]
pipeline = "artificial"
[[experiments.art.variants]]
name = "gd"
gauge = "none"
[[experiments.art.variants]]
name = "goldstone"
gauge = "goldstone"
`

// decode parses oneExperiment followed by text and decodes its claims.
func decode(t *testing.T, text string) (*experiment.Config, *Spec, error) {
	t.Helper()
	cfg, err := experiment.ParseConfig("x.toml", []byte(oneExperiment+text))
	if err != nil {
		return nil, nil, err
	}
	spec, err := Decode(cfg)
	return cfg, spec, err
}

const goodClaim = `
[[claims]]
claim = "Fig. 2"
paper = "10x"
data = "artificial"
experiment = "art"
verdict = "speedup"
baseline = "gd"
method = "goldstone"
factor = 10
`

func TestDecode(t *testing.T) {
	_, spec, err := decode(t, goodClaim+`
[[claim_sections]]
title = "per setting"
experiment = "art"
section = "speedup-per-setting"
baseline = "gd"
methods = ["goldstone"]
factor = 10.0
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Claims) != 1 || len(spec.Sections) != 1 {
		t.Fatalf("spec = %+v", spec)
	}
	c := spec.Claims[0]
	if c.Claim != "Fig. 2" || c.Experiment != "art" || c.Verdict != "speedup" || c.Params.Method != "goldstone" || c.Params.Baseline != "gd" || c.Params.Factor != 10 || c.row == nil {
		t.Errorf("claim = %+v", c)
	}
	if s := spec.Sections[0]; s.Title != "per setting" || !slices.Equal(s.Params.Methods, []string{"goldstone"}) || s.render == nil {
		t.Errorf("section = %+v", s)
	}
	// A file without claims decodes to none: runner claims says so.
	if _, spec, err := decode(t, ""); err != nil || len(spec.Claims) != 0 {
		t.Errorf("no claims: %+v, %v", spec, err)
	}
}

// TestDecodeErrors: every mistake in a claim is a *experiment.ConfigError
// naming the file, the line and the key.
func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
	}{
		{"unknown key", strings.Replace(goodClaim, "factor = 10", "factor = 10\nfactr = 3", 1),
			`x.toml:19: claims[0].factr: unknown key (did you mean "factor"?)`},
		{"unknown kind", strings.Replace(goodClaim, `"speedup"`, `"speedups"`, 1),
			`x.toml:15: claims[0].verdict: unknown kind "speedups" (did you mean "speedup"?); want one of alignment, gauge-speedup, heldout-ll, `},
		{"missing parameter", strings.Replace(goodClaim, "factor = 10\n", "", 1),
			`x.toml:10: claims[0].factor: missing: verdict "speedup" takes baseline, method, factor`},
		{"parameter of another kind", strings.Replace(goodClaim, "factor = 10", "factor = 10\npaper_share = 0.08", 1),
			`x.toml:19: claims[0].paper_share: not a parameter of verdict "speedup" (it takes baseline, method, factor)`},
		{"missing field", strings.Replace(goodClaim, `paper = "10x"`+"\n", "", 1),
			`x.toml:10: claims[0].paper: missing`},
		{"wrong type", strings.Replace(goodClaim, `factor = 10`, `factor = "10"`, 1),
			`x.toml:18: claims[0].factor: want a number, got 10`},
		{"not positive", strings.Replace(goodClaim, `factor = 10`, `factor = 0`, 1),
			`x.toml:18: claims[0].factor: want a number > 0, got 0`},
		{"bad experiment name", strings.Replace(goodClaim, `experiment = "art"`, `experiment = "../x"`, 1),
			`x.toml:14: claims[0].experiment: invalid experiment name "../x"`},
		{"labels without a method's", `
[[claims]]
claim = "keep"
paper = "p"
data = "d"
experiment = "art"
verdict = "keep-fields"
methods = ["goldstone", "gd"]
[claims.labels]
goldstone = "ours"
`, `x.toml:17: claims[0].labels: no label for "gd" of methods`},
		{"section kind", `
[[claim_sections]]
title = "t"
experiment = "art"
section = "speedup"
`, `x.toml:13: claim_sections[0].section: unknown kind "speedup"`},
	} {
		_, _, err := decode(t, c.text)
		var ce *experiment.ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v (%T), want prefix %q", c.name, err, err, c.want)
		}
	}
	// A key that no kind takes is an unknown key of the file, too: the
	// decoder of experiments.toml leaves [[claims]] to this package, but a
	// misspelt table name is still caught there.
	if _, err := experiment.ParseConfig("x.toml", []byte(oneExperiment+"\n[[claim]]\nclaim = \"c\"\n")); err == nil || !strings.Contains(err.Error(), "x.toml:10: claim: unknown key") {
		t.Errorf("[[claim]]: %v", err)
	}
}

// TestClaimsDoNotChangeHashes: claims are no part of any experiment, so
// adding them changes no config hash (the runs recorded before still
// count).
func TestClaimsDoNotChangeHashes(t *testing.T) {
	without, err := experiment.ParseConfig("x.toml", []byte(oneExperiment))
	if err != nil {
		t.Fatal(err)
	}
	with, _, err := decode(t, goodClaim)
	if err != nil {
		t.Fatal(err)
	}
	a, ha := without.Experiments["art"].Resolved()
	b, hb := with.Experiments["art"].Resolved()
	if a != b || ha != hb {
		t.Errorf("hash %s without claims, %s with", ha, hb)
	}
}

// TestRepositoryClaims: the claims of the repository's experiments.toml
// decode, and every experiment and variant a row names exists there (a
// misspelt variant would otherwise read "not measured yet" for ever).
func TestRepositoryClaims(t *testing.T) {
	path := filepath.Join("..", "..", "experiments.toml")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	cfg, err := experiment.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Decode(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Claims) < 30 || len(spec.Sections) == 0 {
		t.Fatalf("%d claims, %d sections", len(spec.Claims), len(spec.Sections))
	}
	check := func(key, experiment string, p Params, verdict string) {
		e, ok := cfg.Experiments[experiment]
		if !ok {
			t.Errorf("%s: no experiment %q", key, experiment)
			return
		}
		var have []string
		for _, v := range e.Variants {
			have = append(have, v.Name)
		}
		want := append(slices.Clip(p.Methods), p.Method, p.Baseline)
		if verdict == "keep-fields" {
			for _, m := range p.Methods {
				want = append(want, m+"-reset")
			}
		}
		for _, v := range want {
			if v != "" && !slices.Contains(have, v) {
				t.Errorf("%s: experiment %s has no variant %q (has %s)", key, experiment, v, strings.Join(have, ", "))
			}
		}
	}
	for _, c := range spec.Claims {
		check(c.Key, c.Experiment, c.Params, c.Verdict)
	}
	for _, s := range spec.Sections {
		check(s.Key, s.Experiment, s.Params, s.Kind)
	}
}
