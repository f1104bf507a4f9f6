package experiment

import (
	"encoding/json"
	"fmt"
	"goldstone/search"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// TOML is the resolved experiment as an experiments file (runner show):
// every setting with its value (defaults included; one that only a
// default may have, such as lr = 0, as a comment), the grid, the
// variants, the tolerances and the slurm table. ParseConfig reads it back
// to the same experiment: the same Resolved configuration, description and
// slurm table.
func (e *Experiment) TOML() string {
	var b strings.Builder
	p := "experiments." + tomlKey(e.Name)
	fmt.Fprintf(&b, "[%s]\n", p)
	if e.Description != "" {
		fmt.Fprintf(&b, "description = %s\n", tomlValue(e.Description))
	}
	fmt.Fprintf(&b, "pipeline = %s\n", tomlValue(e.Pipeline))
	fmt.Fprintf(&b, "\n[%s.settings]\n", p)
	all := map[string]any(e.Settings) // every setting, written out: none read for its meaning
	for _, k := range sortedKeys(all) {
		line := fmt.Sprintf("%s = %s", tomlKey(k), tomlValue(all[k]))
		if s, ok := specOf(e.Pipeline, k); ok {
			if _, err := s.Normalize(all[k]); err != nil {
				// A default no file may give (lr = 0: the optimizer's
				// own rate): shown, as a comment.
				line = "# " + line + " (the default)"
			}
		}
		fmt.Fprintln(&b, line)
	}
	if len(e.Grid) > 0 {
		fmt.Fprintf(&b, "\n[%s.grid]\n", p)
		for _, ax := range e.Grid {
			vals := make([]string, len(ax.Values))
			for i, v := range ax.Values {
				vals[i] = tomlValue(v)
			}
			fmt.Fprintf(&b, "%s = [%s]\n", tomlKey(ax.Key), strings.Join(vals, ", "))
		}
	}
	if e.Search != nil {
		e.Search.writeTOML(&b, p)
	}
	for _, v := range e.Variants {
		if v.Name == "" {
			continue // the one unnamed variant of an experiment that lists none
		}
		fmt.Fprintf(&b, "\n[[%s.variants]]\nname = %s\n", p, tomlValue(v.Name))
		for _, k := range sortedKeys(v.Settings) {
			fmt.Fprintf(&b, "%s = %s\n", tomlKey(k), tomlValue(v.Settings[k]))
		}
	}
	if len(e.Tolerances) > 0 {
		fmt.Fprintf(&b, "\n[%s.tolerances]\n", p)
		for _, k := range sortedKeys(e.Tolerances) {
			fmt.Fprintf(&b, "%s = %s\n", tomlKey(k), tomlValue(e.Tolerances[k]))
		}
	}
	if s := e.Slurm; s != (SlurmConfig{}) {
		fmt.Fprintf(&b, "\n[%s.slurm]\n", p)
		for _, kv := range []struct {
			k  string
			v  any
			ok bool
		}{
			{"partition", s.Partition, s.Partition != ""},
			{"account", s.Account, s.Account != ""},
			{"time", s.Time, s.Time != ""},
			{"max_parallel", s.MaxParallel, s.MaxParallel != nil},
			{"extra", s.Extra, s.Extra != ""},
			{"cpus", s.CPUs, s.CPUs != 0},
			{"mem_mb", s.MemMB, s.MemMB != 0},
		} {
			if kv.ok {
				v := kv.v
				if p, isPtr := v.(*int); isPtr {
					v = *p
				}
				fmt.Fprintf(&b, "%s = %s\n", kv.k, tomlValue(v))
			}
		}
	}
	return b.String()
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// tomlKey is k as a TOML key: bare when it can be, else quoted.
func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	return tomlValue(k)
}

// tomlValue is a setting value as TOML: floats keep a point or an exponent
// (so that they read back as floats), strings are basic strings.
func tomlValue(v any) string {
	switch x := v.(type) {
	case string:
		b, _ := json.Marshal(x) // JSON's string escapes are TOML's
		return string(b)
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		switch {
		case math.IsNaN(x):
			return "nan"
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case []float64:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = tomlValue(f)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = tomlValue(f)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = tomlValue(f)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// writeTOML writes the search table of experiment prefix p as
// experiments.toml gives it.
func (s *Search) writeTOML(b *strings.Builder, p string) {
	fmt.Fprintf(b, "\n[%s.search]\n", p)
	fmt.Fprintf(b, "sampler = %s\ntrials = %d\nseed = %d\nobjective = %s\ndirection = %s\nwave = %d\n",
		tomlValue(s.Sampler), s.Trials, s.Seed, tomlValue(s.Objective), tomlValue(s.Direction), s.Wave)
	if q := s.Pruning; q != nil {
		fmt.Fprintf(b, "pruner = %s\nmin_steps = %d\neta = %d\nmax_steps = %d\n", tomlValue(q.Pruner), q.MinSteps, q.Eta, q.MaxSteps)
		if q.Pruner == "hyperband" {
			fmt.Fprintf(b, "brackets = %d\n", q.Brackets)
		}
	}
	for _, q := range s.Space.Params {
		fmt.Fprintf(b, "\n[%s.search.space.%s]\n", p, tomlKey(q.Key))
		switch {
		case q.Dist == search.Choice:
			vals := make([]string, len(q.Choices))
			for i, v := range q.Choices {
				vals[i] = tomlValue(v)
			}
			fmt.Fprintf(b, "choice = [%s]\n", strings.Join(vals, ", "))
		case q.Dist == search.Int:
			fmt.Fprintf(b, "int = [%d, %d]\n", int64(q.Lo), int64(q.Hi))
			if q.Log {
				b.WriteString("log = true\n")
			}
		case q.Log:
			fmt.Fprintf(b, "log_uniform = [%s, %s]\n", tomlValue(q.Lo), tomlValue(q.Hi))
		default:
			fmt.Fprintf(b, "uniform = [%s, %s]\n", tomlValue(q.Lo), tomlValue(q.Hi))
		}
		if q.When != nil {
			vals := make([]string, len(q.When.Values))
			for i, v := range q.When.Values {
				vals[i] = tomlValue(v)
			}
			fmt.Fprintf(b, "when = { %s = [%s] }\n", tomlKey(q.When.Key), strings.Join(vals, ", "))
		}
	}
}
