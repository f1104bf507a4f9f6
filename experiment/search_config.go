package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"goldstone/experiment/settings"
	"goldstone/search"
)

// Search is an experiment's [experiments.NAME.search] table: a search over
// a space of settings whose trials the search loop (sweep.Search) runs in
// waves, each wave suggested by the sampler from the results of the
// earlier ones. Every suggested point is run as the experiment's trials
// (its variants times its grid, e.g. seeds) with the point's settings.
type Search struct {
	Sampler   string // search.Names
	Trials    int    // points to suggest (grid: at most the grid's size; 0: all of it)
	Seed      uint64 // the sampler's seed
	Objective string // a summary metric of the trials; never a test metric
	Direction string // "minimize" or "maximize"
	Wave      int    // points suggested at once, run in parallel
	Space     search.Space
	Pruning   *Pruning // nil: every point runs its trials to the end

	// base is the experiment's own variants when the experiment is a wave
	// of its search (Experiment.Wave): its variants are then the points'.
	base []Variant
}

// DefaultTPEWave is the wave of a TPE search without a wave key: points
// suggested at once from the same results. It is a constant, not --jobs,
// so that the suggestions are the same at any --jobs.
const DefaultTPEWave = 4

type rawSearch struct {
	Sampler   string             `toml:"sampler"`
	Trials    int                `toml:"trials"`
	Seed      int64              `toml:"seed"`
	Objective string             `toml:"objective"`
	Direction string             `toml:"direction"`
	Wave      int                `toml:"wave"`
	Space     map[string]rawDist `toml:"space"`
	Pruner    string             `toml:"pruner"`
	MinSteps  int                `toml:"min_steps"`
	Eta       int                `toml:"eta"`
	MaxSteps  int                `toml:"max_steps"`
	Brackets  int                `toml:"brackets"`
}

type rawDist struct {
	Uniform    []float64        `toml:"uniform"`
	LogUniform []float64        `toml:"log_uniform"`
	Int        []int64          `toml:"int"`
	Log        bool             `toml:"log"`
	Choice     []any            `toml:"choice"`
	When       map[string][]any `toml:"when"`
}

// maxSearchTrials bounds a search's trials.
const maxSearchTrials = 100_000

// IsTestMetric reports whether a summary metric is measured on the test
// set (test_*, baseline_test_*): a search may not choose on it.
func IsTestMetric(name string) bool {
	return strings.HasPrefix(name, "test_") || strings.HasPrefix(name, "baseline_test_") || strings.Contains(name, "_test_")
}

// searchConfig checks an experiment's search table (path is its key path,
// "experiments.NAME.search") against the experiment's settings, variants
// and grid.
func (c *Config) searchConfig(path string, r *rawSearch, e *Experiment) (*Search, error) {
	s := &Search{Sampler: r.Sampler, Trials: r.Trials, Seed: uint64(r.Seed), Objective: r.Objective, Direction: r.Direction, Wave: r.Wave}
	sampler, err := search.Lookup(r.Sampler)
	switch {
	case r.Sampler == "":
		return nil, c.errorf(path+".sampler", "missing; want one of %s", strings.Join(search.Names(), ", "))
	case err != nil:
		return nil, c.errorf(path+".sampler", "%v", err)
	case r.Objective == "":
		return nil, c.errorf(path+".objective", "missing: name the summary metric the search chooses on (for example valid_ll or final_loss)")
	case IsTestMetric(r.Objective):
		return nil, c.errorf(path+".objective", "%q is a test metric: choosing on the test set leaks it into the choice; name a validation or training metric (valid_*, final_loss)", r.Objective)
	case r.Direction != "minimize" && r.Direction != "maximize":
		return nil, c.errorf(path+".direction", "%q: want \"minimize\" or \"maximize\"", r.Direction)
	case r.Seed < 0:
		return nil, c.errorf(path+".seed", "must be >= 0, got %d", r.Seed)
	case r.Trials < 0 || r.Trials > maxSearchTrials || r.Trials == 0 && r.Sampler != "grid":
		return nil, c.errorf(path+".trials", "want 1 to %d trials, got %d", maxSearchTrials, r.Trials)
	case r.Wave < 0:
		return nil, c.errorf(path+".wave", "must be >= 0, got %d", r.Wave)
	}
	if s.Space, err = c.searchSpace(path+".space", r.Space, e); err != nil {
		return nil, err
	}
	if r.Pruner != "" || r.MinSteps != 0 || r.Eta != 0 || r.MaxSteps != 0 || r.Brackets != 0 {
		if s.Pruning, err = c.pruningConfig(path, r, e); err != nil {
			return nil, err
		}
	}
	if err := s.Space.Check(); err != nil {
		return nil, c.spaceError(path+".space", err)
	}
	if r.Sampler == "grid" {
		if err := s.fitGrid(); err != nil {
			return nil, c.spaceError(path+".space", err)
		}
	}
	if s.Pruning != nil {
		if why := s.Pruning.Unreached(s.Trials); why != "" {
			return nil, c.errorf(path+".min_steps", "%s", why)
		}
	}
	if s.Wave == 0 {
		s.Wave = s.Trials
		if _, tpe := sampler.(search.TPE); tpe {
			s.Wave = DefaultTPEWave
		}
	}
	return s, nil
}

// spaceError names the parameter of a space's error, when it has one.
func (c *Config) spaceError(path string, err error) error {
	var pe *search.ParamError
	if errors.As(err, &pe) {
		return c.errorf(path+"."+pe.Key, "%v", pe.Err)
	}
	return c.errorf(path, "%v", err)
}

// searchSpace decodes the space's settings: unconditional ones first, each
// group in key order, so that a condition names an earlier parameter.
func (c *Config) searchSpace(path string, raw map[string]rawDist, e *Experiment) (search.Space, error) {
	var sp search.Space
	if len(raw) == 0 {
		return sp, c.errorf(path, "missing: list the searched settings, e.g. lr = { log_uniform = [0.01, 1.0] }")
	}
	for _, conditional := range []bool{false, true} {
		for _, k := range sortedKeys(raw) {
			if d := raw[k]; (len(d.When) > 0) == conditional {
				p, err := c.searchParam(path+"."+k, k, d, e)
				if err != nil {
					return sp, err
				}
				sp.Params = append(sp.Params, p)
			}
		}
	}
	return sp, nil
}

// searchParam decodes one searched setting.
func (c *Config) searchParam(path, key string, d rawDist, e *Experiment) (search.Param, error) {
	p := search.Param{Key: key}
	spec, err := lookupSetting(e.Pipeline, key)
	if err != nil {
		return p, c.errorf(path, "%v", err)
	}
	if err := searchedElsewhere(key, e); err != nil {
		return p, c.errorf(path, "%v", err)
	}
	n := 0
	for _, set := range []bool{d.Uniform != nil, d.LogUniform != nil, d.Int != nil, d.Choice != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return p, c.errorf(path, "want exactly one of uniform, log_uniform, int or choice")
	}
	bad := func(format string, args ...any) (search.Param, error) { return p, c.errorf(path, format, args...) }
	switch {
	case d.Uniform != nil || d.LogUniform != nil:
		p.Dist, p.Log = search.Uniform, d.LogUniform != nil
		r := d.Uniform
		if p.Log {
			r = d.LogUniform
		}
		if spec.Kind != settings.Float {
			return bad("a uniform range needs a float setting; %s is %s (use int or choice)", key, spec.Kind)
		}
		if len(r) != 2 {
			return bad("want a range [low, high], got %d values", len(r))
		}
		p.Lo, p.Hi = r[0], r[1]
	case d.Int != nil:
		p.Dist, p.Log = search.Int, d.Log
		if spec.Kind != settings.Int {
			return bad("an int range needs an integer setting; %s is %s", key, spec.Kind)
		}
		if len(d.Int) != 2 {
			return bad("want a range [low, high], got %d values", len(d.Int))
		}
		p.Lo, p.Hi = float64(d.Int[0]), float64(d.Int[1])
	default:
		p.Dist = search.Choice
		if spec.Kind == settings.FloatList || spec.Kind == settings.StringList {
			return bad("%s is a list setting: it cannot be searched", key)
		}
		for i, raw := range d.Choice {
			v, err := spec.Normalize(raw)
			if err != nil {
				return p, c.errorf(fmt.Sprintf("%s.choice[%d]", path, i), "%v", err)
			}
			p.Choices = append(p.Choices, v)
		}
	}
	if d.Log && p.Dist != search.Int {
		return bad("log = true goes with int; write log_uniform for a float range")
	}
	if err := p.Check(); err != nil {
		return bad("%v", err)
	}
	if p.Dist != search.Choice {
		// The ends must be values the setting accepts (lr > 0, ...).
		for _, x := range []any{p.Lo, p.Hi} {
			if p.Dist == search.Int {
				x = int64(x.(float64))
			}
			if _, err := spec.Normalize(x); err != nil {
				return bad("range end %v: %v", x, err)
			}
		}
	}
	if len(d.When) > 0 {
		if p.When, err = c.searchWhen(path, d.When, e); err != nil {
			return p, err
		}
	}
	return p, nil
}

// searchedElsewhere refuses a searched setting that the grid or a variant
// also sets (the search would silently override it), and the seed.
func searchedElsewhere(key string, e *Experiment) error {
	if key == "seed" {
		return errors.New("the seed is not searched: list seeds in the grid (each point then runs every seed)")
	}
	for _, ax := range e.Grid {
		if ax.Key == key {
			return fmt.Errorf("searched and in the grid: drop it from one")
		}
	}
	for _, v := range e.Variants {
		if _, ok := v.Settings[key]; ok {
			return fmt.Errorf("searched and set by variant %q: drop it from one", v.Name)
		}
	}
	return nil
}

func (c *Config) searchWhen(path string, when map[string][]any, e *Experiment) (*search.Condition, error) {
	if len(when) != 1 {
		return nil, c.errorf(path+".when", "want one setting, e.g. when = { gauge = [\"goldstone\"] }")
	}
	for k, vals := range when {
		spec, err := lookupSetting(e.Pipeline, k)
		if err != nil {
			return nil, c.errorf(path+".when."+k, "%v", err)
		}
		cond := &search.Condition{Key: k}
		for _, raw := range vals {
			v, err := spec.Normalize(raw)
			if err != nil {
				return nil, c.errorf(path+".when."+k, "%v", err)
			}
			cond.Values = append(cond.Values, v)
		}
		return cond, nil
	}
	return nil, nil
}

// Maximize reports whether the objective is maximized.
func (s *Search) Maximize() bool { return s.Direction == "maximize" }

// resolved is the search as the run's resolved configuration records it.
func (s *Search) resolved() map[string]any {
	var params []map[string]any
	for _, p := range s.Space.Params {
		m := map[string]any{"key": p.Key, "dist": p.Dist.String(), "log": p.Log}
		if p.Dist == search.Choice {
			m["choices"] = p.Choices
		} else {
			m["low"], m["high"] = p.Lo, p.Hi
		}
		if p.When != nil {
			m["when"] = map[string]any{p.When.Key: p.When.Values}
		}
		params = append(params, m)
	}
	m := map[string]any{"sampler": s.Sampler, "trials": s.Trials, "seed": s.Seed,
		"objective": s.Objective, "direction": s.Direction, "wave": s.Wave, "space": params}
	if p := s.Pruning; p != nil {
		m["pruner"] = map[string]any{"pruner": p.Pruner, "min_steps": p.MinSteps, "eta": p.Eta, "max_steps": p.MaxSteps, "brackets": p.Brackets}
	}
	return m
}

// baseVariants is the experiment's own variants (those of the experiment
// a wave was made from).
func (e *Experiment) baseVariants() []Variant {
	if e.Search != nil && e.Search.base != nil {
		return e.Search.base
	}
	return e.Variants
}

// PointVariant names the variant of suggestion index of a search run
// with variant v of the experiment: "s12", or "s12/gd".
func PointVariant(index int, v string) string {
	if v == "" {
		return fmt.Sprintf("s%d", index)
	}
	return fmt.Sprintf("s%d/%s", index, v)
}

// ParsePointVariant reads the index of a search point's variant, "s12" or
// "s12/gd" (PointVariant), from its JSON text as the store records it;
// rung reports a pruned search's trial short of its last rung ("s12@100",
// "s12/gd@100": Pruning.RungVariant).
func ParsePointVariant(variantJSON string) (idx int, rung, ok bool) {
	var v string
	if json.Unmarshal([]byte(variantJSON), &v) != nil || !strings.HasPrefix(v, "s") {
		return 0, false, false
	}
	v, _, rung = strings.Cut(v, "@")
	num, _, _ := strings.Cut(v[1:], "/")
	n, err := strconv.Atoi(num)
	return n, rung, err == nil && n >= 0
}

// Wave returns the experiment whose trials are those of points (the
// suggestions of indices first, first+1, ...): each point times the
// experiment's variants, as variants named by PointVariant, times its
// grid. Its resolved configuration is the search's (Resolved): every wave
// belongs to the same run.
func (e *Experiment) Wave(first int, points []search.Point) (*Experiment, error) {
	base := e.baseVariants()
	w := *e
	s := *e.Search
	s.base = base
	w.Search = &s
	w.Variants = nil
	for i, pt := range points {
		for _, v := range base {
			nv := Variant{Name: PointVariant(first+i, v.Name), Settings: map[string]any{}}
			for k, x := range v.Settings {
				nv.Settings[k] = x
			}
			for _, k := range sortedKeys(pt) {
				spec, err := lookupSetting(e.Pipeline, k)
				if err != nil {
					return nil, err
				}
				x, err := spec.Normalize(pt[k])
				if err != nil {
					return nil, fmt.Errorf("search point %d: %s = %v: %w", first+i, k, pt[k], err)
				}
				nv.Settings[k] = x
			}
			w.Variants = append(w.Variants, nv)
		}
	}
	return &w, nil
}

// RerunName is the experiment name of the best point of search name rerun
// with more seeds.
func RerunName(name string) string { return name + "-best" }

// Rerun returns the experiment that runs one point of e's search (its
// searched settings as a run recorded them, JSON texts) with seeds 1..seeds
// in place of the grid's seeds: every variant of e times its grid's other
// axes, no search. Its name is RerunName(e.Name).
func (e *Experiment) Rerun(point map[string]string, seeds int) (*Experiment, error) {
	if e.Search == nil {
		return nil, fmt.Errorf("experiment %s has no search table", e.Name)
	}
	if seeds < 1 {
		return nil, fmt.Errorf("--seeds must be >= 1, got %d", seeds)
	}
	r := *e
	r.Name, r.Search = RerunName(e.Name), nil
	r.Variants = nil
	for _, v := range e.baseVariants() {
		nv := Variant{Name: v.Name, Settings: map[string]any{}}
		for k, x := range v.Settings {
			nv.Settings[k] = x
		}
		for _, k := range sortedKeys(point) {
			x, err := settingFromJSON(e.Pipeline, k, point[k])
			if err != nil {
				return nil, err
			}
			nv.Settings[k] = x
		}
		r.Variants = append(r.Variants, nv)
	}
	r.Grid = nil
	for _, ax := range e.Grid {
		if ax.Key != "seed" {
			r.Grid = append(r.Grid, ax)
		}
	}
	seed := Axis{Key: "seed"}
	for s := 1; s <= seeds; s++ {
		seed.Values = append(seed.Values, int64(s))
	}
	r.Grid = append(r.Grid, seed)
	slices.SortFunc(r.Grid, func(a, b Axis) int { return strings.Compare(a.Key, b.Key) })
	return &r, nil
}

// settingFromJSON reads a setting's value as a run recorded it.
func settingFromJSON(pipeline, key, text string) (any, error) {
	spec, ok := specOf(pipeline, key)
	if !ok {
		return nil, fmt.Errorf("setting %s: unknown to pipeline %s", key, pipeline)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("setting %s: %w", key, err)
	}
	v, err := fromJSON(spec.Kind, v)
	if err != nil {
		return nil, fmt.Errorf("setting %s: %w", key, err)
	}
	return spec.Normalize(v)
}

// searchFromResolved reads a search back from a run's resolved
// configuration (Search.resolved): what repro and report rebuilding of a
// search run start from. conv normalizes a recorded value of a setting
// (ExperimentFromResolved's), so choices and conditions compare equal to
// the values the search suggested.
func searchFromResolved(js json.RawMessage, conv func(key string, v any) (any, error)) (*Search, error) {
	var raw struct {
		Sampler   string      `json:"sampler"`
		Trials    int         `json:"trials"`
		Seed      json.Number `json:"seed"`
		Objective string      `json:"objective"`
		Direction string      `json:"direction"`
		Wave      int         `json:"wave"`
		Space     []struct {
			Key     string           `json:"key"`
			Dist    string           `json:"dist"`
			Log     bool             `json:"log"`
			Choices []any            `json:"choices"`
			Low     json.Number      `json:"low"`
			High    json.Number      `json:"high"`
			When    map[string][]any `json:"when"`
		} `json:"space"`
		Pruner *Pruning `json:"pruner"`
	}
	dec := json.NewDecoder(strings.NewReader(string(js)))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if _, err := search.Lookup(raw.Sampler); err != nil {
		return nil, err
	}
	seed, err := strconv.ParseUint(raw.Seed.String(), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("seed %q: %w", raw.Seed, err)
	}
	s := &Search{Sampler: raw.Sampler, Trials: raw.Trials, Seed: seed, Objective: raw.Objective, Direction: raw.Direction, Wave: raw.Wave}
	if s.Trials < 1 || s.Wave < 1 || (s.Direction != "minimize" && s.Direction != "maximize") {
		return nil, fmt.Errorf("trials %d, wave %d, direction %q: not a recorded search's", s.Trials, s.Wave, s.Direction)
	}
	for _, rp := range raw.Space {
		p := search.Param{Key: rp.Key, Log: rp.Log}
		switch rp.Dist {
		case search.Uniform.String(), search.Int.String():
			p.Dist = search.Uniform
			if rp.Dist == search.Int.String() {
				p.Dist = search.Int
			}
			if p.Lo, err = rp.Low.Float64(); err != nil {
				return nil, fmt.Errorf("%s: low: %w", rp.Key, err)
			}
			if p.Hi, err = rp.High.Float64(); err != nil {
				return nil, fmt.Errorf("%s: high: %w", rp.Key, err)
			}
		case search.Choice.String():
			p.Dist = search.Choice
			for _, c := range rp.Choices {
				v, err := conv(rp.Key, c)
				if err != nil {
					return nil, err
				}
				p.Choices = append(p.Choices, v)
			}
		default:
			return nil, fmt.Errorf("%s: unknown distribution %q", rp.Key, rp.Dist)
		}
		for k, vals := range rp.When {
			p.When = &search.Condition{Key: k}
			for _, c := range vals {
				v, err := conv(k, c)
				if err != nil {
					return nil, err
				}
				p.When.Values = append(p.When.Values, v)
			}
		}
		s.Space.Params = append(s.Space.Params, p)
	}
	if err := s.Space.Check(); err != nil {
		return nil, err
	}
	if p := raw.Pruner; p != nil {
		if !slices.Contains(Pruners, p.Pruner) || p.Pruner == "none" || p.Eta < 2 || p.MinSteps <= 0 || p.MinSteps > p.MaxSteps || p.Brackets < 1 || p.Brackets > len(p.Rungs()) {
			return nil, fmt.Errorf("pruner %+v: not a recorded search's", *p)
		}
		s.Pruning = p
	}
	return s, nil
}

// overrideSearch applies a --set of a search table key (k is
// "search.KEY"): the sampler, its seed or the points to suggest, for the
// same search run again with another seed or sampler. Its wave and
// space stay as the table gives them; the grid sampler runs the first
// trials points of the grid (all of it when trials is at least its size).
func (e *Experiment) overrideSearch(k, raw string) error {
	bad := func(format string, args ...any) error {
		return &ConfigError{File: "--set", Key: k, Err: fmt.Errorf(format, args...)}
	}
	if e.Search == nil {
		return bad("experiment %s has no search table", e.Name)
	}
	s := *e.Search
	raw = strings.TrimSpace(raw)
	switch key := strings.TrimPrefix(k, "search."); key {
	case "seed", "trials":
		n, err := strconv.ParseInt(raw, 10, 64)
		switch {
		case err != nil:
			return bad("want an integer, got %q", raw)
		case key == "seed" && n < 0:
			return bad("must be >= 0, got %d", n)
		case key == "seed":
			s.Seed = uint64(n)
		case n < 1 || n > maxSearchTrials:
			return bad("want 1 to %d trials, got %d", maxSearchTrials, n)
		default:
			s.Trials = int(n)
		}
	case "sampler":
		name := strings.Trim(raw, `"'`)
		if _, err := search.Lookup(name); err != nil {
			return bad("%v", err)
		}
		s.Sampler = name
	default:
		return bad("--set takes search.sampler, search.seed and search.trials (the space, the objective and the pruner are the file's)")
	}
	if s.Sampler == "grid" {
		if err := s.fitGrid(); err != nil {
			return bad("the grid sampler: %v", err)
		}
	}
	e.Search = &s
	return nil
}

// fitGrid bounds the grid sampler's trials by the grid's points (0: all of
// them); the space must be a grid.
func (s *Search) fitGrid() error {
	pts, err := search.GridPoints(&s.Space)
	if err != nil {
		return err
	}
	if s.Trials == 0 || s.Trials > len(pts) {
		s.Trials = len(pts)
	}
	return nil
}
