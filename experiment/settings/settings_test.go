package settings

import (
	"strings"
	"testing"
)

type fmtChoice interface{ isFmt() }

type textFmt struct{}

type csvFmt struct {
	Sep string `set:"sep" default:"," doc:"separator"`
}

func (textFmt) isFmt() {}
func (csvFmt) isFmt()  {}

// enumerated takes the values of its layout setting from a list (as a
// format registry gives them), and prunes a key.
type enumerated struct {
	Layout string    `set:"layout" default:"auto" doc:"layout"`
	Rows   int       `set:"rows" default:"3" check:">0" doc:"rows"`
	Rate   float64   `set:"rate" default:"0" check:"rate" doc:"rate"`
	Format fmtChoice `set:"format" default:"text" doc:"format"`
	Skip   int       `set:"-"`
}

var layouts = []string{"auto", "u.data", "ratings.csv"}

func (enumerated) Values(key string) []string {
	if key == "layout" {
		return layouts
	}
	return nil
}

func (e enumerated) PruneKeys(m map[string]any) {
	if e.Rows == 3 {
		delete(m, "rows")
	}
}

func testChoices() *Choices {
	c := NewChoices()
	c.Register("format", "text", textFmt{})
	c.Register("format", "csv", csvFmt{})
	return c
}

func specByKey(t *testing.T, specs []*Spec, key string) *Spec {
	t.Helper()
	for _, sp := range specs {
		if sp.Key == key {
			return sp
		}
	}
	t.Fatalf("no spec %s", key)
	return nil
}

// An Enumerator's values become the setting's allowed values and check;
// a value outside them is refused naming them.
func TestEnumeratorValues(t *testing.T) {
	specs := testChoices().SpecsOf(enumerated{})
	sp := specByKey(t, specs, "layout")
	if strings.Join(sp.Values, " ") != "auto u.data ratings.csv" || sp.Default != "auto" {
		t.Fatalf("layout spec: values %v, default %v", sp.Values, sp.Default)
	}
	if _, err := sp.Normalize("ratings.dat"); err == nil || !strings.Contains(err.Error(), "must be one of auto, u.data, ratings.csv") {
		t.Errorf("layout = ratings.dat: %v", err)
	}
	if v, err := sp.Normalize("u.data"); err != nil || v != "u.data" {
		t.Errorf("layout = u.data: %v, %v", v, err)
	}
	if fs := specByKey(t, specs, "format"); strings.Join(fs.Values, " ") != "text csv" {
		t.Errorf("format values %v", fs.Values)
	}
}

type badEnum struct {
	N int `set:"n" default:"1" doc:"n"`
}

func (badEnum) Values(string) []string { return []string{"a"} }

type enumWithOneof struct {
	S string `set:"s" default:"a" oneof:"a b" doc:"s"`
}

func (enumWithOneof) Values(string) []string { return []string{"a"} }

type enumBadDefault struct {
	S string `set:"s" default:"z" doc:"s"`
}

func (enumBadDefault) Values(string) []string { return []string{"a"} }

// Malformed declarations panic when the specs are read: an Enumerator
// listing an int setting, values besides a oneof tag, a default outside
// the values, a field without a default, an unknown check.
func TestDeclarationErrors(t *testing.T) {
	type noDefault struct {
		N int `set:"n" doc:"n"`
	}
	type badCheck struct {
		N int `set:"n" default:"1" check:"odd" doc:"n"`
	}
	type unregistered struct {
		F fmtChoice `set:"nothing" default:"x" doc:"f"`
	}
	for name, v := range map[string]any{
		"int enumerated": badEnum{}, "oneof and values": enumWithOneof{}, "default not a value": enumBadDefault{},
		"no default": noDefault{}, "unknown check": badCheck{}, "choice with nothing registered": unregistered{},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: SpecsOf did not panic", name)
				}
			}()
			testChoices().SpecsOf(v)
		}()
	}
}

// Decode fills the struct and its choice; Keys holds exactly what was
// read (the unchosen choice's options absent, set:"-" fields absent, the
// struct's PruneKeys applied).
func TestDecodeAndKeys(t *testing.T) {
	c := testChoices()
	var e enumerated
	if err := c.Decode(Values{"layout": "u.data", "rows": int64(3), "rate": 0.5, "format": "csv", "sep": ";"}, &e); err != nil {
		t.Fatal(err)
	}
	if e.Layout != "u.data" || e.Rate != 0.5 || e.Format != (csvFmt{Sep: ";"}) {
		t.Fatalf("decoded %+v", e)
	}
	got := string(Encode(c.Keys(e)))
	if want := `{"format":"csv","layout":"u.data","rate":0.5,"sep":";"}`; got != want {
		t.Errorf("keys %s, want %s", got, want)
	}
	e.Format, e.Rows = textFmt{}, 4
	if got, want := string(Encode(c.Keys(e))), `{"format":"text","layout":"u.data","rate":0.5,"rows":4}`; got != want {
		t.Errorf("keys %s, want %s", got, want)
	}
	if c.NameOf(csvFmt{}) != "csv" {
		t.Errorf("NameOf(csvFmt) = %q", c.NameOf(csvFmt{}))
	}
}

// Decoding errors name the setting: one not resolved, an unknown choice
// (with the names it takes), a non-pointer destination.
func TestDecodeErrors(t *testing.T) {
	c := testChoices()
	var e enumerated
	for _, tc := range []struct {
		vals Values
		want string
	}{
		{Values{"layout": "auto", "rows": int64(3), "rate": 0.0}, "setting format not resolved"},
		{Values{"layout": "auto", "rows": int64(3), "rate": 0.0, "format": "tsv"}, `setting format: unknown "tsv" (want one of text, csv)`},
	} {
		if err := c.Decode(tc.vals, &e); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%v): %v, want %q", tc.vals, err, tc.want)
		}
	}
	if err := c.Decode(Values{}, e); err == nil || !strings.Contains(err.Error(), "needs a pointer to a struct") {
		t.Errorf("Decode(non-pointer): %v", err)
	}
}

// The checks of the check tags: rate takes 0 (the default) or > 0.
func TestChecks(t *testing.T) {
	sp := specByKey(t, testChoices().SpecsOf(enumerated{}), "rate")
	for v, ok := range map[float64]bool{0: true, 0.1: true, -1: false} {
		if _, err := sp.Normalize(v); (err == nil) != ok {
			t.Errorf("rate = %v: %v", v, err)
		}
	}
	rows := specByKey(t, testChoices().SpecsOf(enumerated{}), "rows")
	if _, err := rows.Normalize(int64(0)); err == nil {
		t.Error("rows = 0 accepted by >0")
	}
}

// Registration: a duplicate name, a type registered twice, a non-struct
// and a registration after the first read panic.
func TestRegisterChoicePanics(t *testing.T) {
	for name, fn := range map[string]func(){
		"duplicate name": func() { c := testChoices(); c.Register("format", "csv", enumerated{}) },
		"type twice":     func() { c := testChoices(); c.Register("other", "x", csvFmt{}) },
		"not a struct":   func() { NewChoices().Register("k", "n", 3) },
		"after a read":   func() { c := testChoices(); c.Names("format"); c.Register("format", "tsv", enumerated{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			fn()
		}()
	}
}
