package stages

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Pipeline is one kind of experiment: the settings it accepts and how it
// turns an experiment's trials into a pipeline graph. Each pipeline lives in
// its own package below stages/ and registers itself (Register) from an init
// function; stages/pipelines imports them all.
type Pipeline interface {
	// Name is the value of `pipeline = "..."` in experiments.toml.
	Name() string
	// Specs lists every setting the pipeline accepts.
	Specs() []*Spec
	// Build adds the nodes of the trials to b: shared data stages, one
	// group of nodes per trial (b.AddTrial) and usually a report
	// (b.AddReport). Node ids are relative; Build prefixes them with the
	// experiment's name.
	Build(ctx context.Context, b *Built, e *Experiment, trials []Trial, env Env) error
}

var registry = struct {
	sync.RWMutex
	byName map[string]Pipeline
}{byName: map[string]Pipeline{}}

// Register makes a pipeline known by its name. It panics on a duplicate name
// or a pipeline that lists a setting twice.
func Register(p Pipeline) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.byName[p.Name()]; dup {
		panic(fmt.Sprintf("stages: pipeline %q registered twice", p.Name()))
	}
	seen := map[string]bool{}
	for _, s := range p.Specs() {
		if seen[s.Key] {
			panic(fmt.Sprintf("stages: pipeline %q lists setting %q twice", p.Name(), s.Key))
		}
		seen[s.Key] = true
	}
	registry.byName[p.Name()] = p
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
	names := make([]string, 0, len(registry.byName))
	for n := range registry.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// specOf returns the spec of key in pipeline, if the pipeline accepts it.
func specOf(pipeline, key string) (*Spec, bool) {
	p, ok := LookupPipeline(pipeline)
	if !ok {
		return nil, false
	}
	for _, s := range p.Specs() {
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
		p, _ := LookupPipeline(n)
		for _, s := range p.Specs() {
			keys = append(keys, s.Key)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// TrainingSpecs are the settings of the shared training loop (Loop and
// BuildOptimizer) that every training pipeline accepts.
func TrainingSpecs() []*Spec {
	return []*Spec{
		// Trial and training loop.
		{Key: "seed", Kind: Int, Default: int64(1), Doc: "seed of the trial: initialisation, data generation, minibatches", Check: NonNegative},
		{Key: "steps", Kind: Int, Default: int64(1000), Doc: "number of optimisation steps", Check: Positive},
		{Key: "log_every", Kind: Int, Default: int64(1), Doc: "record step-wise metrics every this many steps", Check: Positive},
		{Key: "gauge_gap_every", Kind: Int, Default: int64(0), Doc: "record the gauge gap every this many steps (0: with every logged step)", Check: NonNegative},
		{Key: "init_scale", Kind: Float, Default: 0.1, Doc: "standard deviation of the random initial embeddings", Check: Positive},
		// Base optimizer.
		{Key: "optimizer", Kind: String, Default: "gd", Doc: "base optimizer: gd, adagrad or adam", Check: OneOf("gd", "adagrad", "adam")},
		{Key: "lr", Kind: Float, Default: 0.01, Doc: "learning rate rho0", Check: Positive},
		{Key: "lr_s0", Kind: Float, Default: 0.0, Doc: "schedule rho_s = lr (s0/(s+s0))^kappa; 0 keeps the rate constant", Check: NonNegative},
		{Key: "lr_kappa", Kind: Float, Default: 0.7, Doc: "decay exponent kappa of the schedule", Check: NonNegative},
		{Key: "clip", Kind: Float, Default: 0.0, Doc: "GD: clip each gradient entry to [-clip, clip]; 0 disables", Check: NonNegative},
		{Key: "adagrad_eps", Kind: Float, Default: 1e-8, Check: Positive},
		{Key: "adam_beta1", Kind: Float, Default: 0.9, Check: UnitInterval},
		{Key: "adam_beta2", Kind: Float, Default: 0.999, Check: UnitInterval},
		{Key: "adam_eps", Kind: Float, Default: 1e-8, Check: Positive},
		// Symmetry steps.
		{Key: "gauge", Kind: String, Default: "none", Doc: "symmetry step: none, goldstone or procrustes", Check: OneOf("none", "goldstone", "procrustes")},
		{Key: "k1", Kind: Int, Default: int64(50), Doc: "a gauge round after every k1 base steps", Check: Positive},
		{Key: "k2", Kind: Int, Default: int64(10), Doc: "Goldstone-GD: natural-gradient steps per round", Check: Positive},
		{Key: "gauge_lr", Kind: Float, Default: 0.0, Doc: "Goldstone-GD: rho'; 0 uses the paper's automatic 1/(T N <Z^2>)", Check: NonNegative},
		{Key: "rotation", Kind: String, Default: "exact", Doc: "Goldstone-GD: apply exp(Gamma) (exact) or Z + Gamma Z (linear, the paper's)", Check: OneOf("exact", "linear")},
		{Key: "keep_fields", Kind: Bool, Default: true, Doc: "Goldstone-GD: keep the gauge fields between rounds (the paper) instead of resetting them"},
		{Key: "guard", Kind: Bool, Default: true, Doc: "Goldstone-GD: reject a round that raises psi and reset the fields"},
		{Key: "flip_walls", Kind: Bool, Default: true, Doc: "Goldstone-GD on tree couplings: remove reflection domain walls (exp(Gamma) reaches only rotations) before the continuous steps"},
		{Key: "reflections", Kind: Bool, Default: true, Doc: "Procrustes: allow reflections (O(d)); false restricts to SO(d)"},
		// Models.
		{Key: "dim", Kind: Int, Default: int64(3), Doc: "embedding dimension d", Check: Positive},
	}
}

// MFSpecs are the settings of the dynamic matrix factorisation models'
// time prior and local regulariser.
func MFSpecs() []*Spec {
	return []*Spec{
		{Key: "lambda", Kind: Float, Default: 10.0, Doc: "coupling strength of the time prior", Check: Positive},
		{Key: "gamma", Kind: Float, Default: 0.0, Doc: "local L2 regulariser gamma/2 ||Z_t||^2", Check: NonNegative},
	}
}
