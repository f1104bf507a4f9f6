package stages

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"goldstone/runs"
)

// Pipeline is one kind of experiment: the settings it accepts and how it
// turns an experiment's trials into a pipeline graph. Each pipeline lives in
// its own package below stages/ and registers itself (Register) from an init
// function; stages/pipelines imports them all.
type Pipeline interface {
	// Name is the value of `pipeline = "..."` in experiments.toml.
	Name() string
	// Version is the cache version of every stage of the pipeline: one
	// constant next to its code, bumped when any stage's outputs change
	// (the golden test of stages/pipelines enforces it).
	Version() string
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

var registry = struct {
	sync.RWMutex
	byName map[string]Pipeline
	specs  map[string][]*Spec
}{byName: map[string]Pipeline{}, specs: map[string][]*Spec{}}

// Register makes a pipeline known by its name. It panics on a duplicate name
// or a malformed settings declaration.
func Register(p Pipeline) {
	specs := SpecsOf(p.Settings())
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.byName[p.Name()]; dup {
		panic(fmt.Sprintf("stages: pipeline %q registered twice", p.Name()))
	}
	registry.byName[p.Name()] = p
	registry.specs[p.Name()] = specs
}

// PipelineSpecs returns the settings a pipeline accepts, in declaration order.
func PipelineSpecs(name string) []*Spec {
	registry.RLock()
	defer registry.RUnlock()
	return registry.specs[name]
}

// LookupPipeline returns the registered pipeline of that name.
func LookupPipeline(name string) (Pipeline, bool) {
	registry.RLock()
	defer registry.RUnlock()
	p, ok := registry.byName[name]
	return p, ok
}

// PipelineNames returns the registered pipelines' names, sorted.
func PipelineNames() []string {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Sorted(maps.Keys(registry.byName))
}

// specOf returns the spec of key in pipeline, if the pipeline accepts it.
func specOf(pipeline, key string) (*Spec, bool) {
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
func EffectiveSettings(pipeline string, s Settings) (map[string]any, error) {
	p, ok := LookupPipeline(pipeline)
	if !ok {
		return nil, fmt.Errorf("unknown pipeline %q", pipeline)
	}
	v := p.Settings()
	if err := Decode(s, v); err != nil {
		return nil, err
	}
	return Keys(v), nil
}

// SettingsTable renders every setting of every registered pipeline as a
// Markdown table (key, default, pipelines, meaning), generated from the
// settings declarations; the README's settings table is this output.
func SettingsTable() string {
	var keys []string
	byKey := map[string]*Spec{}
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
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k, FormatValue(sp.Default), who, strings.ReplaceAll(doc, "|", "\\|"))
	}
	return b.String()
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
