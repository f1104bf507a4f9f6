package settings

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
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

// Spec describes one setting: its type, default and the check its values
// must pass. A pipeline declares the settings it accepts as a struct
// (Pipeline.Settings); SpecsOf derives their specs from its tags.
type Spec struct {
	Key     string
	Kind    Kind
	Default any // int64, float64, string, bool, []float64 or []string
	Doc     string
	Check   func(v any) error
	Values  []string // the allowed strings of a oneof or choice setting, for docs
	// IntText: a string setting that also takes an integer, as its decimal
	// text (a column given by name or by 1-based position). Tag `ints:"text"`.
	IntText bool
}

// Positive checks that a number is > 0 (and finite).
func Positive(v any) error {
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

// NonNegative checks that a number is >= 0 (and finite).
func NonNegative(v any) error {
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

// OneOf checks that a string is one of vals.
func OneOf(vals ...string) func(any) error {
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

// UnitInterval checks that a float is in [0, 1).
func UnitInterval(v any) error {
	x := v.(float64)
	if !(x >= 0 && x < 1) {
		return fmt.Errorf("must be in [0, 1), got %v", x)
	}
	return nil
}

// Fractions3 checks train, validation and test fractions.
func Fractions3(v any) error {
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

// Normalize converts a decoded TOML (or JSON) value to the setting's Go
// type and checks it.
func (s *Spec) Normalize(v any) (any, error) {
	bad := func() (any, error) {
		return nil, fmt.Errorf("want %s, got %s", s.Kind, Describe(v))
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
			var n int64
			switch i := v.(type) {
			case int64:
				n = i
			case int:
				n = int64(i)
			default:
				return bad()
			}
			if !s.IntText {
				return bad()
			}
			x = strconv.FormatInt(n, 10)
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

// Describe names a decoded value's type and value for an error message.
func Describe(v any) string {
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
	case toml.LocalDate, toml.LocalDateTime, toml.LocalTime, time.Time:
		// An unquoted date or time in a TOML file: no Go type name in the message.
		return fmt.Sprintf("an unquoted date or time %v (write it in quotes: \"%v\")", x, x)
	default:
		return fmt.Sprintf("%T", v)
	}
}

// Values is a resolved set of setting values, keyed by setting name: what
// the config decoder produces and Decode reads. Code reads a setting
// through the settings struct that declares it (Decode, MustDecode), never
// by its name; TestNoSettingReadByName (stages) enforces it.
type Values map[string]any

// Clone returns a shallow copy (list values are shared; they are never mutated).
func (s Values) Clone() Values {
	c := make(Values, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}

// Encode is the text trial ids and configuration hashes hash: v encoded
// by encoding/json (object keys sorted, floats in their shortest exact
// form, HTML characters escaped). It is not pipeline.CanonicalJSON, the
// encoding of a stage's cache parameters; the two must not be mixed, as
// changing either changes ids or keys.
func Encode(v map[string]any) []byte {
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
