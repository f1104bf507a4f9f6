package experiment_test

import (
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/models"
	"goldstone/optim"
	"goldstone/stages/artificial"
	_ "goldstone/stages/pipelines"
	"goldstone/train"
)

func trialSettings(t *testing.T, sets ...string) settings.Values {
	t.Helper()
	c, err := experiment.ParseConfig("t.toml", []byte("[experiments.a]\npipeline = \"artificial\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["a"]
	if err := e.Override(sets); err != nil {
		t.Fatal(err)
	}
	return e.Trials()[0].Settings
}

// Defaults that belong to a library come from it: one place.
func TestDefaultsFromLibraries(t *testing.T) {
	s := settings.MustDecode[artificial.TrainSettings](trialSettings(t, "gauge=goldstone", "optimizer=adam"))
	if s.Loop.InitScale != models.DefaultInitStd {
		t.Errorf("init_scale default %v, want models.DefaultInitStd %v", s.Loop.InitScale, models.DefaultInitStd)
	}
	g, ok := s.Loop.Optim.Gauge.(train.GoldstoneSettings)
	if !ok || g.K2 != optim.DefaultK2 {
		t.Errorf("gauge %#v: want GoldstoneSettings with K2 = optim.DefaultK2 %d", s.Loop.Optim.Gauge, optim.DefaultK2)
	}
	a, ok := s.Loop.Optim.Method.(train.AdamSettings)
	if !ok || a.Beta1 != optim.DefaultAdamBeta1 || a.Beta2 != optim.DefaultAdamBeta2 || a.Eps != optim.DefaultAdamEps {
		t.Errorf("adam settings %#v: want optim's defaults", s.Loop.Optim.Method)
	}
}

// lr = 0 (the default) is the chosen optimizer's default rate, and is
// keyed by that effective value.
func TestDefaultRateIsTheOptimizers(t *testing.T) {
	for _, tc := range []struct {
		optimizer string
		want      float64
	}{{"gd", optim.DefaultGDRate}, {"adagrad", optim.DefaultAdaGradRate}, {"adam", optim.DefaultAdamRate}} {
		s := settings.MustDecode[artificial.TrainSettings](trialSettings(t, "optimizer="+tc.optimizer))
		if got := s.Loop.Optim.Schedule().Rho0; got != tc.want {
			t.Errorf("%s: rate %v, want %v", tc.optimizer, got, tc.want)
		}
		if got := settings.Keys(s)["lr"]; got != tc.want {
			t.Errorf("%s: keyed lr %v, want %v", tc.optimizer, got, tc.want)
		}
		if experiment.TrialID("artificial", trialSettings(t, "optimizer="+tc.optimizer)) != experiment.TrialID("artificial", trialSettings(t, "optimizer="+tc.optimizer, "lr="+settings.FormatValue(tc.want))) {
			t.Errorf("%s: the default lr and lr = %v are different trials", tc.optimizer, tc.want)
		}
	}
}

// The options of the optimizer and symmetry step not chosen, and lr_kappa
// of a constant rate, are not read, so not keyed.
func TestKeysHoldOnlyWhatIsRead(t *testing.T) {
	keys := settings.Keys(settings.MustDecode[artificial.TrainSettings](trialSettings(t, "optimizer=adagrad", "gauge=procrustes")))
	for _, k := range []string{"adagrad_eps", "k1", "reflections", "lr", "lr_s0", "seed", "time_steps", "snapshots"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("key %s missing: %v", k, keys)
		}
	}
	for _, k := range []string{"clip", "adam_beta1", "adam_eps", "k2", "gauge_lr", "rotation", "guard", "lr_kappa"} {
		if _, ok := keys[k]; ok {
			t.Errorf("key %s present though not read: %v", k, keys)
		}
	}
	if keys["optimizer"] != "adagrad" || keys["gauge"] != "procrustes" {
		t.Errorf("choices keyed as %v, %v", keys["optimizer"], keys["gauge"])
	}
	decay := settings.Keys(settings.MustDecode[artificial.TrainSettings](trialSettings(t, "lr_s0=100")))
	if decay["lr_kappa"] != 0.7 {
		t.Errorf("lr_kappa of a decaying rate not keyed: %v", decay)
	}
}

// Every setting has a doc (the settings table of docs/experiments.md is generated from them).
func TestEverySettingHasADoc(t *testing.T) {
	for _, name := range experiment.PipelineNames() {
		for _, sp := range experiment.PipelineSpecs(name) {
			if sp.Doc == "" {
				t.Errorf("pipeline %s: setting %s has no doc", name, sp.Key)
			}
		}
	}
}

type badSettings struct {
	A int `set:"a" default:"x"`
}

type twiceSettings struct {
	A int `set:"a" default:"1"`
	B struct {
		A int `set:"a" default:"2"`
	}
}

// misspeltDefaults means to take Eps's default from its Defaults method,
// but misspells the method's name: it must not silently default to 0.
type misspeltDefaults struct {
	Eps float64 `set:"eps" check:">0" doc:"epsilon"`
}

func (misspeltDefaults) Defualts() any { return misspeltDefaults{Eps: 1e-8} }

// wrongDefaults's Defaults returns another type.
type wrongDefaults struct {
	Eps float64 `set:"eps" check:">0" doc:"epsilon"`
}

func (wrongDefaults) Defaults() any { return misspeltDefaults{Eps: 1e-8} }

func TestMalformedDeclarationsPanic(t *testing.T) {
	for name, v := range map[string]any{
		"bad default":              badSettings{},
		"conflicting defaults":     twiceSettings{},
		"misspelt Defaults":        misspeltDefaults{},
		"Defaults of another type": wrongDefaults{},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: SpecsOf did not panic", name)
				}
			}()
			settings.SpecsOf(v)
		}()
	}
}
