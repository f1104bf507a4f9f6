package pipeline

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// pstage is a Stage with arbitrary params.
type pstage struct {
	name, version string
	params        any
}

func (s pstage) Name() string                   { return s.name }
func (s pstage) Version() string                { return s.version }
func (s pstage) Params() any                    { return s.params }
func (s pstage) Run(context.Context, *IO) error { return nil }

type hyper struct {
	LR     float64 `json:"lr"`
	Steps  int     `json:"steps"`
	Method string  `json:"method"`
	Inner  inner   `json:"inner"`
	Secret string  `json:"-"`
}

type inner struct {
	Z float64 `json:"z"`
	A []int   `json:"a"`
}

var tenth = 0.1 // a variable, so that 0.1+0.2 is float64 arithmetic

func TestCanonicalJSON(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"map order", map[string]any{"b": 1, "a": 2, "c": map[string]any{"y": 1, "x": 2}}, `{"a":2,"b":1,"c":{"x":2,"y":1}}`},
		{"struct sorted", hyper{LR: 0.1, Steps: 3, Method: "adam", Inner: inner{Z: 1, A: []int{3, 1}}, Secret: "s"},
			`{"inner":{"a":[3,1],"z":1},"lr":0.1,"method":"adam","steps":3}`},
		{"float exact", tenth + 2*tenth, `0.30000000000000004`},
		{"tiny float", 5e-324, `5e-324`},
		{"big int", int64(1<<62 + 1), `4611686018427387905`},
		{"no html escape", "<a&b>", `"<a&b>"`},
		{"nil", nil, `null`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CanonicalJSON(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("CanonicalJSON = %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := CanonicalJSON(math.NaN()); err == nil {
		t.Error("CanonicalJSON(NaN): no error")
	}
}

func TestKey(t *testing.T) {
	base := hyper{LR: 0.1, Steps: 3, Method: "adam", Inner: inner{Z: 1, A: []int{3, 1}}}
	asMap := map[string]any{
		"steps": 3, "method": "adam", "lr": 0.1,
		"inner": map[string]any{"z": 1.0, "a": []any{3, 1}},
	}
	ins := map[string]string{"ratings": "d1", "config": "d2"}
	outs := []string{"model", "trace"}
	k := func(t *testing.T, s Stage, ins map[string]string, outs []string) CacheKey {
		t.Helper()
		key, err := Key(s, ins, outs)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	ref := k(t, pstage{"train", "1", base}, ins, outs)
	next := math.Nextafter(0.1, 1)
	tests := []struct {
		name string
		s    Stage
		ins  map[string]string
		outs []string
		same bool
	}{
		{"identical", pstage{"train", "1", base}, ins, outs, true},
		{"struct vs map", pstage{"train", "1", asMap}, ins, outs, true},
		{"json:- field ignored", pstage{"train", "1", func() hyper { h := base; h.Secret = "x"; return h }()}, ins, outs, true},
		{"input map order", pstage{"train", "1", base}, map[string]string{"config": "d2", "ratings": "d1"}, outs, true},
		{"output order", pstage{"train", "1", base}, ins, []string{"trace", "model"}, true},
		{"float next ulp", pstage{"train", "1", func() hyper { h := base; h.LR = next; return h }()}, ins, outs, false},
		{"param change", pstage{"train", "1", func() hyper { h := base; h.Steps = 4; return h }()}, ins, outs, false},
		{"nested param change", pstage{"train", "1", func() hyper { h := base; h.Inner.A = []int{1, 3}; return h }()}, ins, outs, false},
		{"version change", pstage{"train", "2", base}, ins, outs, false},
		{"stage change", pstage{"fit", "1", base}, ins, outs, false},
		{"input digest change", pstage{"train", "1", base}, map[string]string{"ratings": "d3", "config": "d2"}, outs, false},
		{"input renamed", pstage{"train", "1", base}, map[string]string{"ratingz": "d1", "config": "d2"}, outs, false},
		{"input added", pstage{"train", "1", base}, map[string]string{"ratings": "d1", "config": "d2", "x": "d4"}, outs, false},
		{"output added", pstage{"train", "1", base}, ins, []string{"model", "trace", "log"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := k(t, tc.s, tc.ins, tc.outs)
			if (got == ref) != tc.same {
				t.Errorf("key equal to reference = %v, want %v", got == ref, tc.same)
			}
		})
	}
	if _, err := Key(pstage{"train", "1", math.Inf(1)}, ins, outs); err == nil {
		t.Error("Key with +Inf param: no error")
	}
}

func TestParamsDiff(t *testing.T) {
	tests := []struct {
		old, cur string
		want     []string
	}{
		{`{"a":1,"b":2}`, `{"a":1,"b":2}`, nil},
		{`{"a":1,"b":2}`, `{"a":1,"b":3}`, []string{"b"}},
		{`{"a":1,"n":{"x":1,"y":2}}`, `{"a":2,"n":{"x":1,"y":3,"z":0}}`, []string{"a", "n.y", "n.z"}},
		{`{"a":[1,2]}`, `{"a":[2,1]}`, []string{"a"}},
		{`1`, `2`, []string{""}},
		{`{"a":1}`, `null`, []string{""}},
	}
	for _, tc := range tests {
		got := paramsDiff([]byte(tc.old), []byte(tc.cur))
		if len(got) != len(tc.want) {
			t.Errorf("paramsDiff(%s, %s) = %q, want %q", tc.old, tc.cur, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("paramsDiff(%s, %s) = %q, want %q", tc.old, tc.cur, got, tc.want)
				break
			}
		}
	}
}

func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,2.5,{"d":null,"c":true}]}`, `0.1`, `"x"`, `[]`, `{"a":{"a":{}}}`, `1e300`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		c1, err := canonicalize(raw)
		if err != nil {
			t.Fatalf("canonicalize(%q): %v", raw, err)
		}
		c2, err := canonicalize(c1)
		if err != nil {
			t.Fatalf("canonicalize(%q): %v", c1, err)
		}
		if string(c1) != string(c2) {
			t.Fatalf("not idempotent: %s vs %s", c1, c2)
		}
		var w any
		if err := json.Unmarshal(c1, &w); err != nil {
			t.Fatalf("canonical form %s does not parse: %v", c1, err)
		}
		if len(paramsDiff(raw, c1)) != 0 {
			t.Fatalf("canonical form %s differs from %s", c1, raw)
		}
	})
}

// Keys read from disk must be keys: ParseCacheKey takes the hex SHA-256
// that key writes and refuses anything else, naming what is wrong; a
// manifest or node record holding another key does not decode.
func TestParseCacheKey(t *testing.T) {
	k := key("s", "1", []byte("{}"), nil, nil)
	if got, err := ParseCacheKey(k.String()); err != nil || got != k {
		t.Fatalf("ParseCacheKey(%s) = %q, %v", k, got, err)
	}
	for in, want := range map[string]string{
		"":                         "0 characters",
		"deadbeef":                 "8 characters",
		strings.ToUpper(string(k)): "not a lower-case hex digit",
		"../" + string(k)[3:]:      "character 1",
		strings.Repeat("x", 500):   `"xxxx`,
	} {
		if _, err := ParseCacheKey(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCacheKey(%.20q): %v, want %q", in, err, want)
		}
	}
	var m manifest
	if err := json.Unmarshal([]byte(`{"key": "../../etc"}`), &m); err == nil {
		t.Error("a manifest with a malformed key decoded")
	}
	if err := json.Unmarshal([]byte(`{"key": "`+k.String()+`"}`), &m); err != nil || m.Key != k {
		t.Errorf("manifest key %q, %v", m.Key, err)
	}
}
