package stages

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Kind is the type of a setting's value.
type Kind int

const (
	Int Kind = iota
	Float
	String
	Bool
	FloatList
	StringList
)

func (k Kind) String() string {
	return [...]string{"integer", "float", "string", "boolean", "list of floats", "list of strings"}[k]
}

// Spec describes one setting: its type, default, the pipelines that accept
// it and the check its values must pass.
type Spec struct {
	Key       string
	Kind      Kind
	Default   any // int64, float64, string, bool, []float64 or []string
	Doc       string
	Pipelines []string // pipelines that accept the key; empty: all
	Check     func(v any) error
}

func (s *Spec) accepts(pipeline string) bool {
	if len(s.Pipelines) == 0 {
		return true
	}
	for _, p := range s.Pipelines {
		if p == pipeline {
			return true
		}
	}
	return false
}

// Pipelines are the known pipeline names.
var Pipelines = []string{"artificial", "movielens", "dwe"}

func positive(v any) error {
	switch x := v.(type) {
	case int64:
		if x <= 0 {
			return fmt.Errorf("must be > 0, got %d", x)
		}
	case float64:
		if !(x > 0) || math.IsInf(x, 0) {
			return fmt.Errorf("must be finite and > 0, got %v", x)
		}
	}
	return nil
}

func nonNegative(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return fmt.Errorf("must be >= 0, got %d", x)
		}
	case float64:
		if !(x >= 0) || math.IsInf(x, 0) {
			return fmt.Errorf("must be finite and >= 0, got %v", x)
		}
	}
	return nil
}

func oneOf(vals ...string) func(any) error {
	return func(v any) error {
		s := v.(string)
		for _, x := range vals {
			if s == x {
				return nil
			}
		}
		return fmt.Errorf("must be one of %s, got %q", strings.Join(vals, ", "), s)
	}
}

func unitInterval(v any) error {
	x := v.(float64)
	if !(x >= 0 && x < 1) {
		return fmt.Errorf("must be in [0, 1), got %v", x)
	}
	return nil
}

func fractions3(v any) error {
	f := v.([]float64)
	if len(f) != 3 {
		return fmt.Errorf("must list 3 fractions (train, validation, test), got %d", len(f))
	}
	var s float64
	for _, x := range f {
		if !(x >= 0) {
			return fmt.Errorf("fractions must be >= 0, got %v", f)
		}
		s += x
	}
	if f[0] == 0 || math.Abs(s-1) > 1e-9 {
		return fmt.Errorf("fractions must sum to 1 with a positive training share, got %v", f)
	}
	return nil
}

var (
	art     = []string{"artificial"}
	ml      = []string{"movielens"}
	dweOnly = []string{"dwe"}
	mf      = []string{"artificial", "movielens"}
)

// specs is the registry of every setting an experiment may use.
var specs = []*Spec{
	// Trial and training loop.
	{Key: "seed", Kind: Int, Default: int64(1), Doc: "seed of the trial: initialisation, data generation, minibatches", Check: nonNegative},
	{Key: "steps", Kind: Int, Default: int64(1000), Doc: "number of optimisation steps", Check: positive},
	{Key: "log_every", Kind: Int, Default: int64(1), Doc: "record step-wise metrics every this many steps", Check: positive},
	{Key: "gauge_gap_every", Kind: Int, Default: int64(0), Doc: "record the gauge gap every this many steps (0: with every logged step)", Check: nonNegative},
	{Key: "init_scale", Kind: Float, Default: 0.1, Doc: "standard deviation of the random initial embeddings", Check: positive},
	// Base optimizer.
	{Key: "optimizer", Kind: String, Default: "gd", Doc: "base optimizer: gd, adagrad or adam", Check: oneOf("gd", "adagrad", "adam")},
	{Key: "lr", Kind: Float, Default: 0.01, Doc: "learning rate rho0", Check: positive},
	{Key: "lr_s0", Kind: Float, Default: 0.0, Doc: "schedule rho_s = lr (s0/(s+s0))^kappa; 0 keeps the rate constant", Check: nonNegative},
	{Key: "lr_kappa", Kind: Float, Default: 0.7, Doc: "decay exponent kappa of the schedule", Check: nonNegative},
	{Key: "clip", Kind: Float, Default: 0.0, Doc: "GD: clip each gradient entry to [-clip, clip]; 0 disables", Check: nonNegative},
	{Key: "adagrad_eps", Kind: Float, Default: 1e-8, Check: positive},
	{Key: "adam_beta1", Kind: Float, Default: 0.9, Check: unitInterval},
	{Key: "adam_beta2", Kind: Float, Default: 0.999, Check: unitInterval},
	{Key: "adam_eps", Kind: Float, Default: 1e-8, Check: positive},
	// Symmetry steps.
	{Key: "gauge", Kind: String, Default: "none", Doc: "symmetry step: none, goldstone or procrustes", Check: oneOf("none", "goldstone", "procrustes")},
	{Key: "k1", Kind: Int, Default: int64(50), Doc: "a gauge round after every k1 base steps", Check: positive},
	{Key: "k2", Kind: Int, Default: int64(10), Doc: "Goldstone-GD: natural-gradient steps per round", Check: positive},
	{Key: "gauge_lr", Kind: Float, Default: 0.0, Doc: "Goldstone-GD: rho'; 0 uses the paper's automatic 1/(T N <Z^2>)", Check: nonNegative},
	{Key: "rotation", Kind: String, Default: "exact", Doc: "Goldstone-GD: apply exp(Gamma) (exact) or Z + Gamma Z (linear, the paper's)", Check: oneOf("exact", "linear")},
	{Key: "keep_fields", Kind: Bool, Default: true, Doc: "Goldstone-GD: keep the gauge fields between rounds (the paper) instead of resetting them"},
	{Key: "guard", Kind: Bool, Default: true, Doc: "Goldstone-GD: reject a round that raises psi and reset the fields"},
	{Key: "flip_walls", Kind: Bool, Default: true, Doc: "Goldstone-GD on tree couplings: remove reflection domain walls (exp(Gamma) reaches only rotations) before the continuous steps"},
	{Key: "reflections", Kind: Bool, Default: true, Doc: "Procrustes: allow reflections (O(d)); false restricts to SO(d)"},
	// Models.
	{Key: "dim", Kind: Int, Default: int64(3), Doc: "embedding dimension d", Check: positive},
	{Key: "lambda", Kind: Float, Default: 10.0, Doc: "coupling strength of the time prior", Pipelines: mf, Check: positive},
	{Key: "gamma", Kind: Float, Default: 0.0, Doc: "local L2 regulariser gamma/2 ||Z_t||^2", Pipelines: mf, Check: nonNegative},
	{Key: "time_steps", Kind: Int, Default: int64(30), Doc: "number of time steps T", Pipelines: art, Check: positive},
	{Key: "rows", Kind: Int, Default: int64(10), Doc: "rows of X", Pipelines: art, Check: positive},
	{Key: "cols", Kind: Int, Default: int64(10), Doc: "columns of X", Pipelines: art, Check: positive},
	{Key: "rank", Kind: Int, Default: int64(3), Doc: "rank of the planted X", Pipelines: art, Check: positive},
	{Key: "noise_var", Kind: Float, Default: 1e-3, Doc: "variance of the noise added to X", Pipelines: art, Check: nonNegative},
	{Key: "snapshots", Kind: FloatList, Default: []float64{0, 500, 2000, 20000}, Doc: "steps at which embeddings are saved for the trajectory figure", Pipelines: art},
	// MovieLens.
	{Key: "dataset", Kind: String, Default: "ml-latest-small", Doc: "MovieLens release name under the data directory, \"planted\", or a path to a ratings file", Pipelines: ml},
	{Key: "fetch", Kind: Bool, Default: false, Doc: "download the release from GroupLens when it is missing", Pipelines: ml},
	{Key: "bins", Kind: Int, Default: int64(100), Doc: "number of time bins T", Pipelines: []string{"movielens", "dwe"}, Check: positive},
	{Key: "split", Kind: FloatList, Default: []float64{0.5, 0.2, 0.3}, Doc: "train, validation, test fractions", Pipelines: ml, Check: fractions3},
	{Key: "split_seed", Kind: Int, Default: int64(1), Doc: "seed of the random train/validation/test split (MovieLens: ratings; dwe: whole time steps)", Pipelines: []string{"movielens", "dwe"}, Check: nonNegative},
	{Key: "minibatch", Kind: Int, Default: int64(0), Doc: "ratings per minibatch; 0 uses full batches", Pipelines: ml, Check: nonNegative},
	{Key: "valid_every", Kind: Int, Default: int64(50), Doc: "record the validation log-likelihood every this many steps", Pipelines: ml, Check: positive},
	{Key: "planted_users", Kind: Int, Default: int64(138000), Pipelines: ml, Check: positive},
	{Key: "planted_items", Kind: Int, Default: int64(27000), Pipelines: ml, Check: positive},
	{Key: "planted_ratings", Kind: Int, Default: int64(20000000), Pipelines: ml, Check: positive},
	{Key: "planted_dim", Kind: Int, Default: int64(10), Pipelines: ml, Check: positive},
	{Key: "planted_seed", Kind: Int, Default: int64(1), Pipelines: ml, Check: nonNegative},
	// Dynamic word embeddings.
	{Key: "corpus", Kind: String, Default: "sotu", Doc: "corpus under the data directory or a path", Pipelines: dweOnly},
	{Key: "corpus_format", Kind: String, Default: "text", Doc: "text (dated files), csv, ngram-v2 or ngram-v3", Pipelines: dweOnly, Check: oneOf("text", "csv", "ngram-v2", "ngram-v3")},
	{Key: "vocab", Kind: Int, Default: int64(2000), Doc: "vocabulary size V", Pipelines: dweOnly, Check: positive},
	{Key: "bin_years", Kind: Int, Default: int64(0), Doc: "width of a time bin in years (0: use bins)", Pipelines: dweOnly, Check: nonNegative},
	{Key: "heldout", Kind: Int, Default: int64(2), Doc: "number of held-out test time steps (never the first or last)", Pipelines: dweOnly, Check: nonNegative},
	{Key: "window", Kind: Int, Default: int64(4), Doc: "c_max of the word2vec window", Pipelines: dweOnly, Check: positive},
	{Key: "ngram_scheme", Kind: String, Default: "all", Doc: "n-gram pair counting: all (every pair of every n-gram), ends (HistWords: pairs with the first or last token) or centre (pairs with the middle token)", Pipelines: dweOnly, Check: oneOf("all", "ends", "centre")},
	{Key: "from_year", Kind: Int, Default: int64(0), Doc: "keep only years >= this (0: all)", Pipelines: dweOnly, Check: nonNegative},
	{Key: "to_year", Kind: Int, Default: int64(0), Doc: "keep only years <= this (0: all)", Pipelines: dweOnly, Check: nonNegative},
	{Key: "valid_steps", Kind: Int, Default: int64(0), Doc: "number of held-out validation time steps", Pipelines: dweOnly, Check: nonNegative},
	{Key: "batch_contexts", Kind: Int, Default: int64(0), Doc: "contexts per minibatch in the first phase (0: as minibatch_words)", Pipelines: dweOnly, Check: nonNegative},
	{Key: "diffusion", Kind: Float, Default: 1e-3, Doc: "D of the OU prior, per year", Pipelines: dweOnly, Check: positive},
	{Key: "sigma0_sq", Kind: Float, Default: 1.0, Pipelines: dweOnly, Check: positive},
	{Key: "inference", Kind: String, Default: "map", Doc: "map or vi (smoothing)", Pipelines: dweOnly, Check: oneOf("map", "vi")},
	{Key: "minibatch_words", Kind: Int, Default: int64(0), Pipelines: dweOnly, Check: nonNegative},
	{Key: "minibatch_steps", Kind: Int, Default: int64(0), Pipelines: dweOnly, Check: nonNegative},
	{Key: "queries", Kind: StringList, Default: []string{"car", "computer", "dna", "electricity", "tuberculosis"}, Pipelines: dweOnly},
}

var specByKey = func() map[string]*Spec {
	m := make(map[string]*Spec, len(specs))
	for _, s := range specs {
		m[s.Key] = s
	}
	return m
}()

// normalize converts a decoded TOML value to the setting's Go type and checks it.
func (s *Spec) normalize(v any) (any, error) {
	bad := func() (any, error) {
		return nil, fmt.Errorf("want %s, got %s", s.Kind, describe(v))
	}
	var out any
	switch s.Kind {
	case Int:
		switch x := v.(type) {
		case int64:
			out = x
		case int:
			out = int64(x)
		default:
			return bad()
		}
	case Float:
		switch x := v.(type) {
		case float64:
			out = x
		case int64:
			out = float64(x)
		case int:
			out = float64(x)
		default:
			return bad()
		}
	case String:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		out = x
	case Bool:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		out = x
	case FloatList:
		xs, ok := v.([]any)
		if !ok {
			if f, ok := v.([]float64); ok {
				out = append([]float64(nil), f...)
				break
			}
			return bad()
		}
		f := make([]float64, len(xs))
		for i, e := range xs {
			switch x := e.(type) {
			case float64:
				f[i] = x
			case int64:
				f[i] = float64(x)
			default:
				return bad()
			}
		}
		out = f
	case StringList:
		xs, ok := v.([]any)
		if !ok {
			if f, ok := v.([]string); ok {
				out = append([]string(nil), f...)
				break
			}
			return bad()
		}
		f := make([]string, len(xs))
		for i, e := range xs {
			x, ok := e.(string)
			if !ok {
				return bad()
			}
			f[i] = x
		}
		out = f
	}
	if s.Check != nil {
		if err := s.Check(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func describe(v any) string {
	switch x := v.(type) {
	case int64, int:
		return fmt.Sprintf("integer %v", x)
	case float64:
		return fmt.Sprintf("float %v", x)
	case string:
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case []any:
		return "array"
	case map[string]any:
		return "table"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// Settings is a resolved set of setting values, keyed by setting name.
type Settings map[string]any

// Clone returns a shallow copy (list values are shared; they are never mutated).
func (s Settings) Clone() Settings {
	c := make(Settings, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}

func (s Settings) Int(key string) int       { return int(s.mustGet(key).(int64)) }
func (s Settings) Float(key string) float64 { return s.mustGet(key).(float64) }
func (s Settings) String(key string) string { return s.mustGet(key).(string) }
func (s Settings) Bool(key string) bool     { return s.mustGet(key).(bool) }
func (s Settings) Floats(key string) []float64 {
	return s.mustGet(key).([]float64)
}
func (s Settings) Strings(key string) []string { return s.mustGet(key).([]string) }

func (s Settings) mustGet(key string) any {
	v, ok := s[key]
	if !ok {
		panic(fmt.Sprintf("stages: setting %q not resolved", key))
	}
	return v
}

// Subset returns the settings named by keys, for a stage's cache parameters.
func (s Settings) Subset(keys ...string) map[string]any {
	m := make(map[string]any, len(keys))
	for _, k := range keys {
		m[k] = s.mustGet(k)
	}
	return m
}

// irrelevant lists, per value of a choice setting, the settings that choice
// makes irrelevant: they do not enter a trial's id or a stage's cache key,
// so changing one re-runs nothing that does not read it.
var irrelevant = map[string]map[string][]string{
	"gauge": {
		"none":       {"k1", "k2", "gauge_lr", "rotation", "keep_fields", "guard", "flip_walls", "reflections"},
		"procrustes": {"k2", "gauge_lr", "rotation", "keep_fields", "guard", "flip_walls"},
		"goldstone":  {"reflections"},
	},
	"optimizer": {
		"gd":      {"adagrad_eps", "adam_beta1", "adam_beta2", "adam_eps"},
		"adagrad": {"clip", "adam_beta1", "adam_beta2", "adam_eps"},
		"adam":    {"clip", "adagrad_eps"},
	},
}

// Effective returns the settings without those the others make irrelevant
// (the gauge options of a trial without a gauge step, the decay exponent of
// a constant learning rate, the options of the optimizers not chosen).
func (s Settings) Effective() Settings {
	out := s.Clone()
	for key, byValue := range irrelevant {
		v, ok := s[key].(string)
		if !ok {
			continue
		}
		for _, k := range byValue[v] {
			delete(out, k)
		}
	}
	if s0, ok := s["lr_s0"].(float64); ok && s0 == 0 {
		delete(out, "lr_kappa")
	}
	return out
}

// Params returns the effective settings among keys, for a stage's cache
// parameters; keys made irrelevant are left out.
func (s Settings) Params(keys ...string) map[string]any {
	e := s.Effective()
	m := make(map[string]any, len(keys))
	for _, k := range keys {
		if v, ok := e[k]; ok {
			m[k] = v
		}
	}
	return m
}

// CanonicalJSON encodes settings with sorted keys and exact floats.
func CanonicalJSON(v map[string]any) []byte {
	b, err := json.Marshal(v) // maps marshal with sorted keys; floats round-trip exactly
	if err != nil {
		panic(err)
	}
	return b
}

// FormatValue renders a setting value for tables and --set round trips.
func FormatValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
