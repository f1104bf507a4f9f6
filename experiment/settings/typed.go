package settings

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Typed settings. A stage declares the settings it reads as a struct; the
// struct tags give each field's setting name, default, check and doc:
//
//	Steps int     `set:"steps" default:"1000" check:">0" doc:"number of optimisation steps"`
//	Split []float64 `set:"split" default:"[0.5, 0.2, 0.3]" check:"fractions3"`
//	Format string `set:"corpus_format" default:"text" oneof:"text csv ngram-v2 ngram-v3"`
//
// Field types: int, float64, string, bool, []float64, []string, a nested
// struct (its settings are flattened into the parent's), or an interface
// (a choice: the setting names one of the structs registered for it with
// RegisterChoice, and the field holds that struct, decoded; the options of
// the structs not chosen are not read, so they are in no cache key).
//
// A field without a default tag takes its default from the struct's
// Defaults method (the struct is a Defaulter), which is how defaults that
// belong to a library (optim.DefaultK2, models.DefaultInitStd) stay in one
// place; a field with neither is a declaration error (SpecsOf panics), so a
// misspelt Defaults method cannot silently give zero defaults.
//
// Checks: ">0", ">=0", "[0,1)", "fractions3", "rate" (> 0, or 0 for the
// optimizer's default); oneof lists the allowed strings.
//
// Decode fills such a struct from resolved Settings; Keys returns the
// settings it holds as the map a stage's cache key and a trial's id hash
// (a struct may adjust that map with a PruneKeys(map[string]any) method,
// for example to leave out the decay exponent of a constant schedule).

// Defaulter is a settings struct that gives the defaults of its fields
// without a default tag: Defaults returns a value of the struct's own type
// (declared on a value receiver) holding them. Declare the check next to
// the method: var _ settings.Defaulter = AdamSettings{}.
type Defaulter interface {
	Defaults() any
}

// Enumerator is a settings struct whose string settings take their allowed
// values from a registry (a format registry, for example) instead of a
// oneof tag: Values returns the values setting key allows, in order, or
// nil for a setting it does not enumerate. The registry is read when the
// specs are, after every init has run.
type Enumerator interface {
	Values(key string) []string
}

// keyPruner adjusts the key map of the struct that implements it.
type keyPruner interface {
	PruneKeys(m map[string]any)
}

// kindOf maps a field's Go type to a setting kind.
func kindOf(t reflect.Type) (Kind, bool) {
	switch t.Kind() {
	case reflect.Int:
		return Int, true
	case reflect.Float64:
		return Float, true
	case reflect.String, reflect.Interface:
		return String, true
	case reflect.Bool:
		return Bool, true
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.Float64:
			return FloatList, true
		case reflect.String:
			return StringList, true
		}
	}
	return 0, false
}

func checkOf(tag string) (func(any) error, error) {
	switch tag {
	case "":
		return nil, nil
	case ">0":
		return Positive, nil
	case ">=0":
		return NonNegative, nil
	case "[0,1)":
		return UnitInterval, nil
	case "fractions3":
		return Fractions3, nil
	case "rate":
		return rateCheck, nil
	}
	return nil, fmt.Errorf("unknown check %q", tag)
}

// rateCheck accepts a learning rate > 0, or 0 for the optimizer's default.
func rateCheck(v any) error {
	if x := v.(float64); x == 0 {
		return nil
	}
	if err := Positive(v); err != nil {
		return fmt.Errorf("%v (or 0 for the optimizer's default)", err)
	}
	return nil
}

// SpecsOf returns the settings a struct (or pointer to one) declares,
// including every registered choice's settings, in declaration order.
// It panics on a malformed declaration: that is a programming error.
func SpecsOf(v any) []*Spec { return Registered.SpecsOf(v) }

// SpecsOf is the package's SpecsOf with the choices registered in c.
func (c *Choices) SpecsOf(v any) []*Spec {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []*Spec
	seen := map[string]*Spec{}
	if err := c.collectSpecs(t, &out, seen); err != nil {
		panic(fmt.Sprintf("settings: settings of %v: %v", t, err))
	}
	return out
}

func (c *Choices) collectSpecs(t reflect.Type, out *[]*Spec, seen map[string]*Spec) error {
	defaults, err := defaultsOf(t)
	if err != nil {
		return err
	}
	enum, _ := reflect.Zero(t).Interface().(Enumerator)
	for i := range t.NumField() {
		f := t.Field(i)
		key, tagged := f.Tag.Lookup("set")
		if key == "-" {
			continue
		}
		if !tagged {
			if f.Type.Kind() != reflect.Struct {
				return fmt.Errorf("field %s: no set tag", f.Name)
			}
			if err := c.collectSpecs(f.Type, out, seen); err != nil {
				return err
			}
			continue
		}
		sp, err := c.fieldSpec(f, key, defaults)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if err := enumerate(sp, f, enum); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if old, ok := seen[key]; ok {
			if old.Kind != sp.Kind || FormatValue(old.Default) != FormatValue(sp.Default) {
				return fmt.Errorf("setting %s declared twice with different kinds or defaults", key)
			}
		} else {
			seen[key] = sp
			*out = append(*out, sp)
		}
		if f.Type.Kind() == reflect.Interface {
			names := c.Names(key)
			if len(names) == 0 {
				return fmt.Errorf("choice %s: nothing registered", key)
			}
			for _, n := range names {
				ct, _ := c.typeOf(key, n)
				if err := c.collectSpecs(ct, out, seen); err != nil {
					return fmt.Errorf("%s = %q: %w", key, n, err)
				}
			}
		}
	}
	return nil
}

// enumerate sets the allowed values of a string setting that an Enumerator
// lists; the default must be one of them.
func enumerate(sp *Spec, f reflect.StructField, enum Enumerator) error {
	if enum == nil {
		return nil
	}
	vals := enum.Values(sp.Key)
	if vals == nil {
		return nil
	}
	if sp.Kind != String || f.Type.Kind() != reflect.String {
		return fmt.Errorf("Values(%q) enumerates a %v setting", sp.Key, sp.Kind)
	}
	if f.Tag.Get("oneof") != "" {
		return fmt.Errorf("setting %s has both a oneof tag and Values", sp.Key)
	}
	sp.Values = slices.Clone(vals)
	sp.Check = OneOf(sp.Values...)
	if err := sp.Check(sp.Default); err != nil {
		return fmt.Errorf("default: %w", err)
	}
	return nil
}

// defaultsOf returns the defaults of a Defaulter struct type t (an
// invalid Value when t is not one).
func defaultsOf(t reflect.Type) (reflect.Value, error) {
	d, ok := reflect.Zero(t).Interface().(Defaulter)
	if !ok {
		return reflect.Value{}, nil
	}
	v := reflect.ValueOf(d.Defaults())
	if v.Type() != t {
		return reflect.Value{}, fmt.Errorf("its Defaults method returns a %v, want a %v", v.Type(), t)
	}
	return v, nil
}

func (c *Choices) fieldSpec(f reflect.StructField, key string, defaults reflect.Value) (*Spec, error) {
	kind, ok := kindOf(f.Type)
	if !ok {
		return nil, fmt.Errorf("unsupported type %v", f.Type)
	}
	sp := &Spec{Key: key, Kind: kind, Doc: f.Tag.Get("doc")}
	switch tag := f.Tag.Get("ints"); tag {
	case "":
	case "text":
		if kind != String {
			return nil, fmt.Errorf(`ints:"text" on a %v setting`, kind)
		}
		sp.IntText = true
	default:
		return nil, fmt.Errorf("unknown ints tag %q", tag)
	}
	var err error
	if sp.Check, err = checkOf(f.Tag.Get("check")); err != nil {
		return nil, err
	}
	if vals := f.Tag.Get("oneof"); vals != "" {
		sp.Values = strings.Fields(vals)
		sp.Check = OneOf(sp.Values...)
	}
	if f.Type.Kind() == reflect.Interface {
		sp.Values = c.Names(key)
		sp.Check = c.check(key)
	}
	if def, ok := f.Tag.Lookup("default"); ok {
		var doc map[string]any
		if err := toml.Unmarshal([]byte("v = "+def), &doc); err != nil {
			doc = map[string]any{"v": def} // a bare word is a string
		}
		if sp.Default, err = sp.normalizeUnchecked(doc["v"]); err != nil {
			return nil, fmt.Errorf("default %s: %w", def, err)
		}
	} else if defaults.IsValid() {
		sp.Default = settingValue(defaults.FieldByIndex(f.Index))
	} else if f.Type.Kind() != reflect.Interface {
		return nil, errors.New("no default tag, and the struct has no Defaults method (Defaulter)")
	} else {
		return nil, errors.New("a choice needs a default tag")
	}
	return sp, nil
}

func (c *Choices) check(key string) func(any) error {
	return func(v any) error { return OneOf(c.Names(key)...)(v) }
}

// settingValue converts a field value to the Settings representation.
func settingValue(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Int:
		return v.Int()
	case reflect.Float64:
		return v.Float()
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Float64 {
			return append([]float64{}, v.Interface().([]float64)...)
		}
		return append([]string{}, v.Interface().([]string)...)
	}
	panic(fmt.Sprintf("settings: no setting value for %v", v.Type()))
}

// Decode fills the struct dst points to from resolved settings.
func Decode(s Values, dst any) error { return Registered.Decode(s, dst) }

// Decode is the package's Decode with the choices registered in c.
func (c *Choices) Decode(s Values, dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("settings: Decode needs a pointer to a struct, got %T", dst)
	}
	return c.decode(s, v.Elem())
}

func (c *Choices) decode(s Values, v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		key, tagged := f.Tag.Lookup("set")
		if key == "-" {
			continue
		}
		fv := v.Field(i)
		if !tagged {
			if err := c.decode(s, fv); err != nil {
				return err
			}
			continue
		}
		raw, ok := s[key]
		if !ok {
			return fmt.Errorf("setting %s not resolved", key)
		}
		switch fv.Kind() {
		case reflect.Int:
			fv.SetInt(raw.(int64))
		case reflect.Float64:
			fv.SetFloat(raw.(float64))
		case reflect.String:
			fv.SetString(raw.(string))
		case reflect.Bool:
			fv.SetBool(raw.(bool))
		case reflect.Slice:
			fv.Set(reflect.ValueOf(raw))
		case reflect.Interface:
			name := raw.(string)
			ct, ok := c.typeOf(key, name)
			if !ok {
				return fmt.Errorf("setting %s: unknown %q (want one of %s)", key, name, strings.Join(c.Names(key), ", "))
			}
			cv := reflect.New(ct).Elem()
			if err := c.decode(s, cv); err != nil {
				return err
			}
			if !cv.Type().AssignableTo(fv.Type()) {
				return fmt.Errorf("setting %s = %q: %v does not implement %v", key, name, ct, fv.Type())
			}
			fv.Set(cv)
		}
	}
	return nil
}

// MustDecode is Decode for settings already checked by the config decoder;
// a failure is a programming error.
func MustDecode[T any](s Values) T {
	var v T
	if err := Decode(s, &v); err != nil {
		panic(err)
	}
	return v
}

// Keys returns the settings a decoded struct holds, by setting name, in the
// Settings representation: exactly what the stage that declared it reads,
// for its cache parameters. The settings of choices not made are absent.
func Keys(v any) map[string]any { return Registered.Keys(v) }

// Keys is the package's Keys with the choices registered in c.
func (c *Choices) Keys(v any) map[string]any {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	m := map[string]any{}
	c.keysOf(rv, m)
	return m
}

func (c *Choices) keysOf(v reflect.Value, m map[string]any) {
	own := map[string]any{}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		key, tagged := f.Tag.Lookup("set")
		if key == "-" {
			continue
		}
		fv := v.Field(i)
		switch {
		case !tagged:
			c.keysOf(fv, own)
		case fv.Kind() == reflect.Interface:
			if fv.IsNil() {
				continue
			}
			cv := fv.Elem()
			own[key] = c.nameOf(key, cv.Type())
			c.keysOf(cv, own)
		default:
			own[key] = settingValue(fv)
		}
	}
	if p, ok := v.Interface().(keyPruner); ok {
		p.PruneKeys(own)
	}
	maps.Copy(m, own)
}

// normalizeUnchecked converts a value like Normalize but skips the check
// (defaults may be sentinels such as lr = 0).
func (s *Spec) normalizeUnchecked(v any) (any, error) {
	c := *s
	c.Check = nil
	return c.Normalize(v)
}
