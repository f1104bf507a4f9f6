package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// CanonicalJSON returns v marshalled by encoding/json with object keys
// sorted at every level and no insignificant space, so a struct and a map
// holding the same fields and values give the same bytes. Numbers keep the
// exact text encoding/json produced (the shortest form that round-trips a
// float64), so distinct float64 values never collide. NaN and ±Inf are
// errors, as in encoding/json.
func CanonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return canonicalize(raw)
}

// canonicalize re-encodes a JSON document with sorted keys.
func canonicalize(raw []byte) ([]byte, error) {
	tree, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tree); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return tree, nil
}

// keyDoc is what a node key hashes, as canonical JSON.
type keyDoc struct {
	Stage   string          `json:"stage"`
	Version string          `json:"version"`
	Params  json.RawMessage `json:"params"`
	Outputs []string        `json:"outputs"`
	Inputs  [][2]string     `json:"inputs"`
}

// CacheKey is the cache key of a node: the lower-case hex SHA-256 of what
// the node reads (its stage, version, parameters, declared outputs and
// inputs' content digests; keyDoc). It names the node's cache entry
// (cache/<stage>/<key>) and its checkpoints. Keys read from disk (a
// manifest, a node record, a cache directory's name) go through
// ParseCacheKey.
type CacheKey string

// ParseCacheKey checks that s is a cache key: 64 lower-case hex digits.
func ParseCacheKey(s string) (CacheKey, error) {
	if len(s) != 2*sha256.Size {
		return "", fmt.Errorf("cache key %s: %d characters, want %d hex digits", safeKey(s), len(s), 2*sha256.Size)
	}
	for i := range len(s) {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", fmt.Errorf("cache key %s: character %d is not a lower-case hex digit", safeKey(s), i+1)
		}
	}
	return CacheKey(s), nil
}

// safeKey quotes at most the first 80 bytes of a would-be key for an error.
func safeKey(s string) string {
	if len(s) > 80 {
		return strconv.Quote(s[:80]) + "..."
	}
	return strconv.Quote(s)
}

// UnmarshalText implements encoding.TextUnmarshaler: a key in a JSON file
// (a manifest, a node record) must parse.
func (k *CacheKey) UnmarshalText(b []byte) error {
	v, err := ParseCacheKey(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// String returns the key's hex digits.
func (k CacheKey) String() string { return string(k) }

// Key returns the cache key of stage s run with the given declared outputs
// on inputs with the given content digests (input name -> digest).
func Key(s Stage, inputs map[string]string, outputs []string) (CacheKey, error) {
	params, err := CanonicalJSON(s.Params())
	if err != nil {
		return "", fmt.Errorf("params of stage %s: %w", s.Name(), err)
	}
	return key(s.Name(), s.Version(), params, inputs, outputs), nil
}

func key(stage, version string, params []byte, inputs map[string]string, outputs []string) CacheKey {
	doc := keyDoc{Stage: stage, Version: version, Params: params, Outputs: append([]string{}, outputs...)}
	sort.Strings(doc.Outputs)
	for _, name := range keys(inputs) {
		doc.Inputs = append(doc.Inputs, [2]string{name, inputs[name]})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("pipeline: marshal key document: %v", err)) // params were validated JSON
	}
	sum := sha256.Sum256(b)
	return CacheKey(hex.EncodeToString(sum[:]))
}

// paramsDiff returns the dotted paths at which two canonical JSON documents
// differ, descending into objects on both sides; "" stands for the root.
func paramsDiff(old, cur []byte) []string {
	a, errA := decodeJSON(old)
	b, errB := decodeJSON(cur)
	if errA != nil || errB != nil {
		if bytes.Equal(old, cur) {
			return nil
		}
		return []string{""}
	}
	var out []string
	var walk func(path string, a, b any)
	walk = func(path string, a, b any) {
		ma, okA := a.(map[string]any)
		mb, okB := b.(map[string]any)
		if !okA || !okB {
			if !reflect.DeepEqual(a, b) {
				out = append(out, path)
			}
			return
		}
		union := make(map[string]bool, len(ma)+len(mb))
		for k := range ma {
			union[k] = true
		}
		for k := range mb {
			union[k] = true
		}
		for _, k := range keys(union) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			va, inA := ma[k]
			vb, inB := mb[k]
			if inA != inB {
				out = append(out, p)
				continue
			}
			walk(p, va, vb)
		}
	}
	walk("", a, b)
	return out
}

// changeReasons explains why a node's key differs from the last one recorded
// for its ID; nil if nothing recorded differs.
func changeReasons(last *nodeRecord, stage, version string, params []byte, inputs map[string]string) []string {
	var rs []string
	if last.Stage != stage {
		rs = append(rs, fmt.Sprintf("stage changed: %s -> %s", last.Stage, stage))
	}
	if last.Version != version {
		rs = append(rs, fmt.Sprintf("version changed: %s -> %s", last.Version, version))
	}
	if d := paramsDiff(last.Params, params); len(d) > 0 {
		for i, p := range d {
			if p == "" {
				d[i] = "(all)"
			}
		}
		rs = append(rs, "params changed: "+strings.Join(d, ", "))
	}
	union := make(map[string]bool)
	for k := range last.Inputs {
		union[k] = true
	}
	for k := range inputs {
		union[k] = true
	}
	for _, name := range keys(union) {
		old, inOld := last.Inputs[name]
		cur, inCur := inputs[name]
		switch {
		case !inOld:
			rs = append(rs, fmt.Sprintf("input %s added", name))
		case !inCur:
			rs = append(rs, fmt.Sprintf("input %s removed", name))
		case old != cur:
			rs = append(rs, fmt.Sprintf("input %s changed", name))
		}
	}
	return rs
}
