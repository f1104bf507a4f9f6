package experiment

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"goldstone/experiment/settings"

	"github.com/pelletier/go-toml/v2"
)

// Configurations that compose: several experiments files merged in order
// (LoadConfigs), one experiment extending another (extends = "NAME"),
// integer ranges in lists ("1..20"), per-variant overrides on the command
// line (--set variants.NAME.KEY=VALUE) and a subset of the variants
// (SelectVariants).

// file is one decoded experiments file whose experiments are not built yet.
type file struct {
	cfg *Config
	raw map[string]rawExp
}

// LoadConfigs reads several experiments files and merges them in order:
// each experiment is defined in one file (the same name in two files is an
// error naming both), and an experiment may extend one of any file. The
// [[claims]] and [[claim_sections]] tables may be in one file only.
func LoadConfigs(paths []string) (*Config, error) {
	if len(paths) == 0 {
		return nil, errors.New("no experiments file")
	}
	var files []*file
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, &ConfigError{File: p, Err: err}
		}
		f, err := parseFile(p, data)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return assemble(files)
}

// assemble checks that no experiment is defined twice, resolves extends
// across the files and builds every experiment, each with its own file's
// positions for errors.
func assemble(files []*file) (*Config, error) {
	owner := map[string]*file{}
	out := files[0].cfg
	for _, f := range files {
		for _, name := range sortedKeys(f.raw) {
			p := "experiments." + name
			if o, ok := owner[name]; ok {
				return nil, f.cfg.errorf(p, "already defined in %s:%d: define an experiment once (rename one, or derive one from the other with extends = %q)",
					o.cfg.Path, o.cfg.line(p), name)
			}
			owner[name] = f
		}
		if len(f.cfg.Claims)+len(f.cfg.ClaimSections) > 0 && f.cfg != out {
			if len(out.Claims)+len(out.ClaimSections) > 0 {
				return nil, &ConfigError{File: f.cfg.Path, Key: "claims", Err: fmt.Errorf("[[claims]] are also in %s: keep them in one file", out.Path)}
			}
			out = f.cfg
		}
	}
	r := &resolver{owner: owner, done: map[string]rawExp{}}
	exps := map[string]*Experiment{}
	for _, f := range files {
		for _, name := range sortedKeys(f.raw) {
			raw, err := r.resolve(name, nil)
			if err != nil {
				return nil, err
			}
			e, err := f.cfg.build(name, raw)
			if err != nil {
				return nil, err
			}
			exps[name] = e
		}
	}
	out.Experiments = exps
	return out, nil
}

// resolver resolves extends: an experiment's raw tables with its parent's
// (resolved first) underneath.
type resolver struct {
	owner map[string]*file
	done  map[string]rawExp
}

func (r *resolver) resolve(name string, stack []string) (rawExp, error) {
	if x, ok := r.done[name]; ok {
		return x, nil
	}
	f := r.owner[name]
	x := f.raw[name]
	if x.Extends == "" {
		r.done[name] = x
		return x, nil
	}
	key := "experiments." + name + ".extends"
	if x.Extends == name || slices.Contains(stack, x.Extends) {
		cycle := []string{name, x.Extends}
		if i := slices.Index(stack, x.Extends); i >= 0 {
			cycle = append(slices.Clone(stack[i:]), name, x.Extends)
		}
		return rawExp{}, f.cfg.errorf(key, "extends cycle: %s", strings.Join(cycle, " -> "))
	}
	if _, ok := r.owner[x.Extends]; !ok {
		names := slices.Sorted(maps.Keys(r.owner))
		hint := ""
		if s := Suggest(x.Extends, names); s != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
		}
		return rawExp{}, f.cfg.errorf(key, "unknown experiment %q%s", x.Extends, hint)
	}
	parent, err := r.resolve(x.Extends, append(stack, name))
	if err != nil {
		return rawExp{}, err
	}
	if x.Pipeline != "" && parent.Pipeline != "" && x.Pipeline != parent.Pipeline {
		return rawExp{}, f.cfg.errorf("experiments."+name+".pipeline", "pipeline %q differs from %q of the experiment it extends (%s)", x.Pipeline, parent.Pipeline, x.Extends)
	}
	m := inherit(parent, x)
	r.done[name] = m
	return m, nil
}

// inherit is child over parent, key by key: settings, grid axes and
// tolerances by key, variants by name (a variant of the same name takes
// the child's keys over the parent's; new ones follow the parent's), the
// slurm table by field, the search table whole (the child's when it has
// one: its keys depend on each other), description and pipeline when the
// child gives them. A key the child fixes in its settings leaves the inherited grid
// and variants, as --set KEY=VALUE does.
func inherit(parent, child rawExp) rawExp {
	m := rawExp{
		Description: cmp.Or(child.Description, parent.Description),
		Pipeline:    cmp.Or(child.Pipeline, parent.Pipeline),
		Settings:    maps.Clone(parent.Settings),
		Grid:        maps.Clone(parent.Grid),
		Tolerances:  maps.Clone(parent.Tolerances),
		Slurm:       parent.Slurm,
		Search:      cmp.Or(child.Search, parent.Search),
	}
	for _, v := range parent.Variants {
		m.Variants = append(m.Variants, maps.Clone(v))
	}
	if m.Settings == nil {
		m.Settings = map[string]any{}
	}
	for k, v := range child.Settings {
		m.Settings[k] = v
		delete(m.Grid, k)
		for _, pv := range m.Variants {
			delete(pv, k)
		}
	}
	if m.Grid == nil {
		m.Grid = map[string]any{}
	}
	maps.Copy(m.Grid, child.Grid)
	if m.Tolerances == nil {
		m.Tolerances = map[string]float64{}
	}
	maps.Copy(m.Tolerances, child.Tolerances)
	for _, cv := range child.Variants {
		i := slices.IndexFunc(m.Variants, func(pv map[string]any) bool {
			n, ok := pv["name"].(string)
			return ok && n == cv["name"]
		})
		if i < 0 {
			m.Variants = append(m.Variants, maps.Clone(cv))
			continue
		}
		maps.Copy(m.Variants[i], cv)
	}
	s, c := &m.Slurm, child.Slurm
	s.Partition, s.Account, s.Time, s.Extra = cmp.Or(c.Partition, s.Partition), cmp.Or(c.Account, s.Account), cmp.Or(c.Time, s.Time), cmp.Or(c.Extra, s.Extra)
	if c.MaxParallel != nil {
		s.MaxParallel = c.MaxParallel
	}
	if c.CPUs != 0 {
		s.CPUs = c.CPUs
	}
	if c.MemMB != 0 {
		s.MemMB = c.MemMB
	}
	return m
}

// maxRange bounds the values one range may expand to.
const maxRange = 100000

// gridValues is a grid entry's values with the key path of each (for
// errors): an array, whose integer setting's elements may be ranges
// ("1..5"), or one range.
func (c *Config) gridValues(pipeline, gp, key string, raw any) ([]any, []string, error) {
	s, err := lookupSetting(pipeline, key)
	if err != nil {
		return nil, nil, c.errorf(gp, "%v", err)
	}
	var vals []any
	var paths []string
	switch x := raw.(type) {
	case string:
		if s.Kind != settings.Int {
			break
		}
		r, err := parseRange(x)
		if err != nil {
			return nil, nil, c.errorf(gp, "%v", err)
		}
		for _, v := range r {
			vals, paths = append(vals, v), append(paths, gp)
		}
		return vals, paths, nil
	case []any:
		if len(x) == 0 {
			return nil, nil, c.errorf(gp, "empty grid")
		}
		for i, el := range x {
			p := fmt.Sprintf("%s[%d]", gp, i)
			if str, ok := el.(string); ok && s.Kind == settings.Int && strings.Contains(str, "..") {
				r, err := parseRange(str)
				if err != nil {
					return nil, nil, c.errorf(p, "%v", err)
				}
				for _, v := range r {
					vals, paths = append(vals, v), append(paths, p)
				}
				continue
			}
			vals, paths = append(vals, el), append(paths, p)
		}
		return vals, paths, nil
	}
	hint := ""
	if s.Kind == settings.Int {
		hint = ` or a range such as "1..20"`
	}
	return nil, nil, c.errorf(gp, "a grid entry must be an array of values%s, got %s", hint, settings.Describe(raw))
}

// expandRanges expands the ranges ("1..20") of a --set value for an
// integer setting: a range alone or as an element of a list. Other values
// are returned as they are.
func expandRanges(s *settings.Spec, v any) (any, error) {
	if s.Kind != settings.Int {
		return v, nil
	}
	switch x := v.(type) {
	case string:
		if !strings.Contains(x, "..") {
			return v, nil
		}
		r, err := parseRange(x)
		if err != nil {
			return nil, err
		}
		return r, nil
	case []any:
		var out []any
		for _, el := range x {
			str, ok := el.(string)
			if !ok || !strings.Contains(str, "..") {
				out = append(out, el)
				continue
			}
			r, err := parseRange(str)
			if err != nil {
				return nil, err
			}
			out = append(out, r...)
		}
		return out, nil
	}
	return v, nil
}

// stringSet is a --set value for a string setting that TOML reads as a
// date or time (--set time_format=2006-01-02): the text as written.
func stringSet(s *settings.Spec, v any, raw string) any {
	switch v.(type) {
	case toml.LocalDate, toml.LocalDateTime, toml.LocalTime, time.Time:
		if s.Kind == settings.String {
			return strings.TrimSpace(raw)
		}
	}
	return v
}

// parseRange reads "FIRST..LAST" (both included, FIRST <= LAST) as
// integers.
func parseRange(text string) ([]any, error) {
	shown := text
	if len(shown) > 40 {
		shown = shown[:40] + "..."
	}
	a, b, ok := strings.Cut(text, "..")
	first, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	last, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return nil, fmt.Errorf("range %q: want FIRST..LAST with two integers, e.g. \"1..20\"", shown)
	case first > last:
		return nil, fmt.Errorf("range %q: FIRST is greater than LAST", shown)
	case last-first >= maxRange || last-first < 0:
		return nil, fmt.Errorf("range %q: more than %d values", shown, maxRange)
	}
	out := make([]any, 0, last-first+1)
	for v := first; ; v++ {
		out = append(out, v)
		if v == last {
			break
		}
	}
	return out, nil
}

// overrideVariant applies --set variants.NAME.KEY=VALUE (also
// variants.NAME.settings.KEY=VALUE): KEY takes VALUE in variant NAME only.
func (e *Experiment) overrideVariant(k, raw string) error {
	bad := func(err error) error { return &ConfigError{File: "--set", Key: k, Err: err} }
	rest := strings.TrimPrefix(k, "variants.")
	vi := -1
	for i, v := range e.Variants {
		if v.Name != "" && strings.HasPrefix(rest, v.Name+".") && (vi < 0 || len(v.Name) > len(e.Variants[vi].Name)) {
			vi = i
		}
	}
	if vi < 0 {
		name, _, ok := strings.Cut(rest, ".")
		if !ok {
			return bad(errors.New("want variants.NAME.KEY=VALUE"))
		}
		return bad(e.unknownVariant(name))
	}
	key := strings.TrimPrefix(strings.TrimPrefix(rest, e.Variants[vi].Name+"."), "settings.")
	if key == "" {
		return bad(errors.New("want variants.NAME.KEY=VALUE"))
	}
	s, err := lookupSetting(e.Pipeline, key)
	if err != nil {
		return bad(fmt.Errorf("%s: %w", key, err))
	}
	v := stringSet(s, setValue(raw), raw)
	if _, isArr := v.([]any); isArr && s.Kind != settings.FloatList && s.Kind != settings.StringList {
		return bad(fmt.Errorf("one value per variant: a grid is for every variant (--set %s=...)", key))
	}
	nv, err := s.Normalize(v)
	if err != nil {
		return bad(err)
	}
	for _, ax := range e.Grid {
		if ax.Key == key {
			return bad(fmt.Errorf("%s is on the grid, which sets it in every variant: fix it for all first (--set %s=VALUE) or leave this out", key, key))
		}
	}
	e.Variants[vi].Settings[key] = nv
	return nil
}

// unknownVariant is the error for a variant name the experiment lacks.
func (e *Experiment) unknownVariant(name string) error {
	var names []string
	for _, v := range e.Variants {
		if v.Name != "" {
			names = append(names, v.Name)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("unknown variant %q: experiment %s has no named variants", name, e.Name)
	}
	hint := ""
	if s := Suggest(name, names); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	}
	return fmt.Errorf("unknown variant %q%s; experiment %s has %s", name, hint, e.Name, strings.Join(names, ", "))
}

// SelectVariants keeps only the named variants (--variant, repeatable), in
// the file's order; none named keeps them all.
func (e *Experiment) SelectVariants(names []string) error {
	if len(names) == 0 {
		return nil
	}
	for _, n := range names {
		if !slices.ContainsFunc(e.Variants, func(v Variant) bool { return v.Name != "" && v.Name == n }) {
			return &ConfigError{File: "--variant", Key: n, Err: e.unknownVariant(n)}
		}
	}
	e.Variants = slices.DeleteFunc(e.Variants, func(v Variant) bool { return !slices.Contains(names, v.Name) })
	return nil
}
