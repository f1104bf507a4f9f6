package runs

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
)

func nan() float64 { return math.NaN() }

func jsonUnmarshalString(text string, dst *string) error { return json.Unmarshal([]byte(text), dst) }

// decodeJSON decodes text keeping numbers exact (json.Number).
func decodeJSON(text string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

// labelOf returns the "name" or "key" string field of an object.
func labelOf(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	for _, f := range []string{"name", "key"} {
		if s, ok := m[f].(string); ok && s != "" {
			return s, true
		}
	}
	return "", false
}

func flatten(prefix string, v any, out map[string]string) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[prefix] = "{}"
			return
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			flatten(join(k), x[k], out)
		}
	case []any:
		labels := make([]string, len(x))
		keyed := len(x) > 0
		seen := map[string]bool{}
		for i, e := range x {
			l, ok := labelOf(e)
			if !ok || seen[l] {
				keyed = false
				break
			}
			seen[l] = true
			labels[i] = l
		}
		if !keyed {
			out[prefix] = compactJSON(x)
			return
		}
		for i, e := range x {
			m := maps.Clone(e.(map[string]any))
			delete(m, "name")
			if _, ok := m["key"].(string); ok {
				delete(m, "key")
			}
			if len(m) == 0 {
				out[join(labels[i])] = "{}"
				continue
			}
			flatten(join(labels[i]), m, out)
		}
	default:
		out[prefix] = compactJSON(x)
	}
}

// FlattenConfig turns a run's JSON configuration (RunInfo.ConfigJSON) into
// dotted keys -> compact JSON values, as Diff compares them: objects nest
// with dots, arrays of objects with a "name" or "key" field are keyed by it
// (variants.adam.settings.lr, grid.seed.values), other arrays are values.
func FlattenConfig(configJSON string) (map[string]string, error) {
	return flattenConfig(configJSON)
}
