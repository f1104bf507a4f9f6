package stages

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

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
// Defaults method (a value of the struct type), which is how defaults that
// belong to a library (optim.DefaultK2, models.DefaultInitStd) stay in one
// place; without either the default is the zero value.
//
// Checks: ">0", ">=0", "[0,1)", "fractions3", "rate" (> 0, or 0 for the
// optimizer's default); oneof lists the allowed strings.
//
// Decode fills such a struct from resolved Settings; Keys returns the
// settings it holds as the map a stage's cache key and a trial's id hash
// (a struct may adjust that map with a PruneKeys(map[string]any) method,
// for example to leave out the decay exponent of a constant schedule).

// keyPruner adjusts the key map of the struct that implements it.
type keyPruner interface {
	PruneKeys(m map[string]any)
}

var choices = struct {
	sync.RWMutex
	names map[string][]string                // choice key -> names in registration order
	types map[string]map[string]reflect.Type // choice key -> name -> struct type
}{names: map[string][]string{}, types: map[string]map[string]reflect.Type{}}

// RegisterChoice registers v's struct type as the settings of value name of
// the choice setting key (for example key "optimizer", name "adam", v
// AdamSettings{}). An interface field tagged set:"key" then accepts name.
func RegisterChoice(key, name string, v any) {
	t := reflect.TypeOf(v)
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("stages: RegisterChoice(%q, %q): %v is not a struct", key, name, t))
	}
	choices.Lock()
	defer choices.Unlock()
	if choices.types[key] == nil {
		choices.types[key] = map[string]reflect.Type{}
	}
	if _, dup := choices.types[key][name]; dup {
		panic(fmt.Sprintf("stages: choice %s = %q registered twice", key, name))
	}
	choices.types[key][name] = t
	choices.names[key] = append(choices.names[key], name)
}

// ChoiceNames returns the names registered for a choice key, in
// registration order.
func ChoiceNames(key string) []string {
	choices.RLock()
	defer choices.RUnlock()
	return slices.Clone(choices.names[key])
}

func choiceType(key, name string) (reflect.Type, bool) {
	choices.RLock()
	defer choices.RUnlock()
	t, ok := choices.types[key][name]
	return t, ok
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
func SpecsOf(v any) []*Spec {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []*Spec
	seen := map[string]*Spec{}
	if err := collectSpecs(t, &out, seen); err != nil {
		panic(fmt.Sprintf("stages: settings of %v: %v", t, err))
	}
	return out
}

func collectSpecs(t reflect.Type, out *[]*Spec, seen map[string]*Spec) error {
	defaults := defaultsOf(t)
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
			if err := collectSpecs(f.Type, out, seen); err != nil {
				return err
			}
			continue
		}
		sp, err := fieldSpec(f, key, defaults)
		if err != nil {
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
			names := ChoiceNames(key)
			if len(names) == 0 {
				return fmt.Errorf("choice %s: nothing registered", key)
			}
			for _, n := range names {
				ct, _ := choiceType(key, n)
				if err := collectSpecs(ct, out, seen); err != nil {
					return fmt.Errorf("%s = %q: %w", key, n, err)
				}
			}
		}
	}
	return nil
}

// defaultsOf returns the value of t's Defaults method, if it has one.
func defaultsOf(t reflect.Type) reflect.Value {
	m, ok := t.MethodByName("Defaults")
	if !ok || m.Type.NumIn() != 1 || m.Type.NumOut() != 1 || m.Type.Out(0) != t {
		return reflect.Value{}
	}
	return m.Func.Call([]reflect.Value{reflect.Zero(t)})[0]
}

func fieldSpec(f reflect.StructField, key string, defaults reflect.Value) (*Spec, error) {
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
		sp.Values = ChoiceNames(key)
		sp.Check = choiceCheck(key)
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
	} else {
		sp.Default = settingValue(reflect.Zero(f.Type))
	}
	return sp, nil
}

func choiceCheck(key string) func(any) error {
	return func(v any) error { return OneOf(ChoiceNames(key)...)(v) }
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
	panic(fmt.Sprintf("stages: no setting value for %v", v.Type()))
}

// Decode fills the struct dst points to from resolved settings.
func Decode(s Settings, dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("stages: Decode needs a pointer to a struct, got %T", dst)
	}
	return decode(s, v.Elem())
}

func decode(s Settings, v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		key, tagged := f.Tag.Lookup("set")
		if key == "-" {
			continue
		}
		fv := v.Field(i)
		if !tagged {
			if err := decode(s, fv); err != nil {
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
			ct, ok := choiceType(key, name)
			if !ok {
				return fmt.Errorf("setting %s: unknown %q (want one of %s)", key, name, strings.Join(ChoiceNames(key), ", "))
			}
			cv := reflect.New(ct).Elem()
			if err := decode(s, cv); err != nil {
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
func MustDecode[T any](s Settings) T {
	var v T
	if err := Decode(s, &v); err != nil {
		panic(err)
	}
	return v
}

// Keys returns the settings a decoded struct holds, by setting name, in the
// Settings representation: exactly what the stage that declared it reads,
// for its cache parameters. The settings of choices not made are absent.
func Keys(v any) map[string]any {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	m := map[string]any{}
	keysOf(rv, m)
	return m
}

func keysOf(v reflect.Value, m map[string]any) {
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
			keysOf(fv, own)
		case fv.Kind() == reflect.Interface:
			if fv.IsNil() {
				continue
			}
			cv := fv.Elem()
			own[key] = choiceName(key, cv.Type())
			keysOf(cv, own)
		default:
			own[key] = settingValue(fv)
		}
	}
	if p, ok := v.Interface().(keyPruner); ok {
		p.PruneKeys(own)
	}
	maps.Copy(m, own)
}

func choiceName(key string, t reflect.Type) string {
	choices.RLock()
	defer choices.RUnlock()
	for n, ct := range choices.types[key] {
		if ct == t {
			return n
		}
	}
	panic(fmt.Sprintf("stages: %v is not registered for choice %s", t, key))
}

// normalizeUnchecked converts a value like normalize but skips the check
// (defaults may be sentinels such as lr = 0).
func (s *Spec) normalizeUnchecked(v any) (any, error) {
	c := *s
	c.Check = nil
	return c.normalize(v)
}

// Shared decodes the settings T of the data stages that every trial of a
// sweep shares, and checks that they are the same in every trial (else
// the data would have to be prepared once per trial). With no trials it
// decodes the experiment's settings.
func Shared[T any](e *Experiment, trials []Trial) (T, error) {
	var first T
	if len(trials) == 0 {
		return first, Decode(e.Settings, &first)
	}
	if err := Decode(trials[0].Settings, &first); err != nil {
		return first, err
	}
	want := Keys(first)
	for _, tr := range trials[1:] {
		var v T
		if err := Decode(tr.Settings, &v); err != nil {
			return first, err
		}
		got := Keys(v)
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if FormatValue(got[k]) != FormatValue(want[k]) {
				return first, fmt.Errorf("experiment %s: setting %s varies across trials; data preparation settings must be the same for the whole sweep", e.Name, k)
			}
		}
	}
	return first, nil
}
