package experiment

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"goldstone/experiment/settings"
	"goldstone/runs"
)

// Pipeline is one kind of experiment: the settings it accepts and how it
// turns an experiment's trials into a pipeline graph. Each pipeline lives
// in its own package below stages/ and registers itself (Register) from an
// init function; stages/pipelines imports them all. Its stages carry their
// own cache versions (pipeline.Stage.Version), one per stage, so that a
// change of one stage (a report's, say) does not invalidate the others;
// the golden test of stages/pipelines names the stage to bump.
type Pipeline interface {
	// Name is the value of `pipeline = "..."` in experiments.toml.
	Name() string
	// Settings returns a pointer to the zero value of the pipeline's
	// settings struct (see Decode): every setting the pipeline accepts,
	// usually the settings structs of its stages as fields. A trial's id
	// hashes its Keys.
	Settings() any
	// Build adds the nodes of the trials to b: shared data stages, one
	// group of nodes per trial (b.AddTrial) and usually a report
	// (b.AddReport). Node ids are relative; Build prefixes them with the
	// experiment's name.
	Build(ctx context.Context, b *Built, e *Experiment, trials []Trial, env Env) error
}

// Registry holds the pipelines. The program's is Registered (Register,
// LookupPipeline, ...); a test may make its own. It resolves lazily:
// Register only records the pipeline, and its settings specs are derived
// (settings.SpecsOf over the choices registered by then) on the first
// read, after every init has run. The first read freezes it: a pipeline
// registered after that panics, so neither the order of the files that
// register pipelines and choices nor a late registration can silently
// change which settings a pipeline accepts.
type Registry struct {
	choices *settings.Choices
	mu      sync.Mutex
	byName  map[string]Pipeline
	specs   map[string][]*settings.Spec // set when frozen
}

func newRegistry(c *settings.Choices) *Registry {
	return &Registry{choices: c, byName: map[string]Pipeline{}}
}

// Registered is the program's registry of pipelines (and the choices of
// settings.Registered).
var Registered = newRegistry(settings.Registered)

// Register makes a pipeline known by its name; call it from an init
// function. It panics on a duplicate name or after the registry was read;
// a malformed settings declaration panics at the first read.
func Register(p Pipeline) { Registered.Register(p) }

// Register adds p to r (see the package function).
func (r *Registry) Register(p Pipeline) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.specs != nil {
		panic(fmt.Sprintf("stages: pipeline %q registered after the registry was read: register pipelines from init functions", p.Name()))
	}
	if _, dup := r.byName[p.Name()]; dup {
		panic(fmt.Sprintf("stages: pipeline %q registered twice", p.Name()))
	}
	r.byName[p.Name()] = p
}

// resolved freezes r on its first call and returns its pipelines and their
// specs. Every pipeline must declare the seed (settings.Seeded).
func (r *Registry) resolved() (map[string]Pipeline, map[string][]*settings.Spec) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.specs == nil {
		seed := r.choices.SpecsOf(settings.Seeded{})[0]
		specs := make(map[string][]*settings.Spec, len(r.byName))
		for name, p := range r.byName {
			ss := r.choices.SpecsOf(p.Settings())
			i := slices.IndexFunc(ss, func(s *settings.Spec) bool { return s.Key == seed.Key })
			if i < 0 || ss[i].Kind != seed.Kind {
				panic(fmt.Sprintf("stages: pipeline %q: its settings do not embed settings.Seeded (every trial has a seed)", name))
			}
			specs[name] = ss
		}
		r.specs = specs
	}
	return r.byName, r.specs
}

// Specs returns the settings a pipeline accepts, in declaration order.
func (r *Registry) Specs(name string) []*settings.Spec {
	_, specs := r.resolved()
	return specs[name]
}

// Lookup returns the pipeline of that name.
func (r *Registry) Lookup(name string) (Pipeline, bool) {
	byName, _ := r.resolved()
	p, ok := byName[name]
	return p, ok
}

// Names returns the pipelines' names, sorted.
func (r *Registry) Names() []string {
	byName, _ := r.resolved()
	return slices.Sorted(maps.Keys(byName))
}

// PipelineSpecs returns the settings a registered pipeline accepts, in
// declaration order.
func PipelineSpecs(name string) []*settings.Spec { return Registered.Specs(name) }

// LookupPipeline returns the registered pipeline of that name.
func LookupPipeline(name string) (Pipeline, bool) { return Registered.Lookup(name) }

// PipelineNames returns the registered pipelines' names, sorted.
func PipelineNames() []string { return Registered.Names() }

// specOf returns the spec of key in pipeline, if the pipeline accepts it.
func specOf(pipeline, key string) (*settings.Spec, bool) {
	for _, s := range PipelineSpecs(pipeline) {
		if s.Key == key {
			return s, true
		}
	}
	return nil, false
}

// pipelinesWith returns the pipelines that accept key, sorted.
func pipelinesWith(key string) []string {
	var out []string
	for _, n := range PipelineNames() {
		if _, ok := specOf(n, key); ok {
			out = append(out, n)
		}
	}
	return out
}

// allKeys returns every setting key of every registered pipeline, sorted.
func allKeys() []string {
	var keys []string
	for _, n := range PipelineNames() {
		for _, s := range PipelineSpecs(n) {
			keys = append(keys, s.Key)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// EffectiveSettings returns the settings a trial of the pipeline reads:
// the Keys of its settings struct decoded from s (the options of the
// optimizer and symmetry step not chosen, for example, are absent).
func EffectiveSettings(pipeline string, s settings.Values) (map[string]any, error) {
	p, ok := LookupPipeline(pipeline)
	if !ok {
		return nil, fmt.Errorf("unknown pipeline %q", pipeline)
	}
	v := p.Settings()
	if err := settings.Decode(s, v); err != nil {
		return nil, err
	}
	return settings.Keys(v), nil
}

// SettingsTable renders every setting of every registered pipeline as a
// Markdown table (key, default, pipelines, meaning), generated from the
// settings declarations; the settings table of docs/experiments.md is this output.
func SettingsTable() string {
	var keys []string
	byKey := map[string]*settings.Spec{}
	users := map[string][]string{}
	names := PipelineNames()
	for _, n := range names {
		for _, sp := range PipelineSpecs(n) {
			if _, ok := byKey[sp.Key]; !ok {
				keys = append(keys, sp.Key)
				byKey[sp.Key] = sp
			}
			users[sp.Key] = append(users[sp.Key], n)
		}
	}
	var b strings.Builder
	b.WriteString("| key | default | pipelines | meaning |\n|---|---|---|---|\n")
	for _, k := range keys {
		sp := byKey[k]
		who := strings.Join(users[k], ", ")
		if len(users[k]) == len(names) {
			who = "all"
		}
		doc := sp.Doc
		if len(sp.Values) > 0 {
			doc += ": `" + strings.Join(sp.Values, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k, settings.FormatValue(sp.Default), who, strings.ReplaceAll(doc, "|", "\\|"))
	}
	return b.String()
}

// Refuser is a pipeline that says why it refuses a setting other
// pipelines take (artificial: early_stopping, which needs held-out data
// it does not have): the reason replaces "only by ..." in the error.
type Refuser interface {
	Refuses(key string) string // "" when it has no reason of its own
}

// Headliner is a pipeline whose reports lead with some of its summary
// metrics: the aggregate tables over seeds of a run's page and summary.md,
// the runs index and `runner compare` show these, in this order.
type Headliner interface {
	Headline() []runs.Headline
}

// Headline returns the headline metrics of a pipeline: those it declares
// (Headliner), else none.
func Headline(pipeline string) []runs.Headline {
	if p, ok := LookupPipeline(pipeline); ok {
		if h, ok := p.(Headliner); ok {
			return h.Headline()
		}
	}
	return nil
}
