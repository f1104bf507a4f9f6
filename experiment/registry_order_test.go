package experiment

import (
	"context"
	"testing"

	"goldstone/experiment/settings"
)

// orderPipeline's settings have a choice (key "model") whose options come
// from the structs registered for it: the trap of issue 18 was a registry
// that read them when the pipeline registered, so a choice registered by a
// file initialised later had its settings silently rejected.
type orderPipeline struct{}

type orderModel interface{ isModel() }

type orderLinear struct {
	Slope float64 `set:"slope" default:"1" doc:"slope"`
}

type orderQuadratic struct {
	Curvature float64 `set:"curvature" default:"0.5" check:">=0" doc:"curvature"`
}

func (orderLinear) isModel()    {}
func (orderQuadratic) isModel() {}

type orderSettings struct {
	settings.Seeded
	Model orderModel `set:"model" default:"linear" doc:"the model"`
}

func (orderPipeline) Name() string                                                   { return "order" }
func (orderPipeline) Settings() any                                                  { return &orderSettings{} }
func (orderPipeline) Build(context.Context, *Built, *Experiment, []Trial, Env) error { return nil }

// TestRegistrationOrder registers a pipeline and the choices its settings
// use in both orders, into fresh registries: the specs, the defaults and a
// decoded choice's keys are the same.
func TestRegistrationOrder(t *testing.T) {
	type result struct {
		specs string
		keys  map[string]any
	}
	run := func(choicesFirst bool) result {
		c := settings.NewChoices()
		r := newRegistry(c)
		choices := func() {
			c.Register("model", "linear", orderLinear{})
			c.Register("model", "quadratic", orderQuadratic{})
		}
		if choicesFirst {
			choices()
			r.Register(orderPipeline{})
		} else {
			r.Register(orderPipeline{})
			choices()
		}
		var specs string
		for _, sp := range r.Specs("order") {
			specs += sp.Key + "=" + settings.FormatValue(sp.Default) + " " + sp.Kind.String() + " " + settings.FormatValue(sp.Values) + "; "
		}
		var s orderSettings
		if err := c.Decode(settings.Values{"seed": int64(3), "model": "quadratic", "slope": 1.0, "curvature": 2.0}, &s); err != nil {
			t.Fatalf("choices first %v: %v", choicesFirst, err)
		}
		return result{specs, c.Keys(s)}
	}
	a, b := run(false), run(true)
	if a.specs != b.specs {
		t.Errorf("specs depend on the registration order:\npipeline first: %s\nchoices first:  %s", a.specs, b.specs)
	}
	const want = `seed=1 integer null; model=linear string ["linear","quadratic"]; slope=1 float null; curvature=0.5 float null; `
	if a.specs != want {
		t.Errorf("specs %s, want %s", a.specs, want)
	}
	if settings.FormatValue(a.keys) != settings.FormatValue(b.keys) || a.keys["curvature"] != 2.0 || a.keys["model"] != "quadratic" {
		t.Errorf("keys %v and %v", a.keys, b.keys)
	}
}

// TestRegistrationAfterReadPanics: a registry that has been read refuses a
// later registration (it would change what was already resolved), loudly.
func TestRegistrationAfterReadPanics(t *testing.T) {
	c := settings.NewChoices()
	c.Register("model", "linear", orderLinear{})
	r := newRegistry(c)
	r.Register(orderPipeline{})
	r.Names()
	for name, register := range map[string]func(){
		"pipeline": func() { r.Register(seedless{}) },
		"choice":   func() { c.Register("model", "quadratic", orderQuadratic{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s registered after a read: no panic", name)
				}
			}()
			register()
		}()
	}
}

// seedless declares no seed: the registry refuses it when it resolves.
type seedless struct{ orderPipeline }

type seedlessSettings struct {
	Steps int `set:"steps" default:"1" doc:"steps"`
}

func (seedless) Name() string  { return "seedless" }
func (seedless) Settings() any { return &seedlessSettings{} }

func TestPipelineWithoutSeedPanics(t *testing.T) {
	r := newRegistry(settings.NewChoices())
	r.Register(seedless{})
	defer func() {
		if recover() == nil {
			t.Error("a pipeline without settings.Seeded resolved")
		}
	}()
	r.Names()
}
