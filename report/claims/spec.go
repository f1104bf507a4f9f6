package claims

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"goldstone/experiment"
)

// Spec is the decoded claims of an experiments file: the rows of the table
// and the sections that follow it, in file order.
type Spec struct {
	Claims   []Claim
	Sections []Section
}

// Claim is one row: a [[claims]] table.
type Claim struct {
	Key        string // "claims[3]", for errors
	Claim      string // claim: which claim, and of which setting
	Paper      string // paper: the paper's words
	Data       string // data: the data and settings the experiment uses
	Experiment string // experiment: the experiment that tests it
	Verdict    string // verdict: the kind (kinds) that computes the row
	Params     Params // the kind's parameters
	row        rowFunc
}

// Section is a table that follows the claims table: a [[claim_sections]]
// table.
type Section struct {
	Key        string // "claim_sections[0]"
	Title      string // title: the line above the table
	Experiment string // experiment: the run it is computed from
	Kind       string // section: the kind (sectionKinds)
	Params     Params
	render     sectionFunc
}

// Params are the parameters a verdict or section kind takes; each kind
// names the ones it needs, all required, and no others are allowed.
type Params struct {
	Method     string            // method: the variant the row judges
	Baseline   string            // baseline: the variant it is compared with
	Methods    []string          // methods: the variants the row judges, in order
	Factor     float64           // factor: the paper's speed-up (half of it reproduces)
	Lambda     float64           // lambda: the lambda the slopes are read at (else the middle one swept)
	PaperShare float64           // paper_share: the paper's share of training time
	PaperGain  float64           // paper_gain: the paper's difference of held-out log-likelihood
	Labels     map[string]string // labels: what each of methods is, by variant name
	Horizon    float64           // horizon: the shorter run length a longer run is read at (stuck or slow)
}

// params decodes each parameter key from its TOML value into Params.
var params = map[string]func(p *Params, v any) error{
	"method":      func(p *Params, v any) error { return asString(v, &p.Method) },
	"baseline":    func(p *Params, v any) error { return asString(v, &p.Baseline) },
	"methods":     func(p *Params, v any) error { return asStrings(v, &p.Methods) },
	"factor":      func(p *Params, v any) error { return asPositive(v, &p.Factor) },
	"lambda":      func(p *Params, v any) error { return asPositive(v, &p.Lambda) },
	"paper_share": func(p *Params, v any) error { return asPositive(v, &p.PaperShare) },
	"paper_gain":  func(p *Params, v any) error { return asPositive(v, &p.PaperGain) },
	"labels":      func(p *Params, v any) error { return asLabels(v, &p.Labels) },
	"horizon":     func(p *Params, v any) error { return asPositive(v, &p.Horizon) },
}

func asString(v any, dst *string) error {
	s, ok := v.(string)
	if !ok || s == "" {
		return fmt.Errorf("want a non-empty string, got %v", v)
	}
	*dst = s
	return nil
}

func asStrings(v any, dst *[]string) error {
	xs, ok := v.([]any)
	if !ok || len(xs) == 0 {
		return fmt.Errorf("want a non-empty array of strings, got %v", v)
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		if err := asString(x, &out[i]); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	*dst = out
	return nil
}

func asPositive(v any, dst *float64) error {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int64:
		f = float64(x)
	default:
		return fmt.Errorf("want a number, got %v", v)
	}
	if !(f > 0) {
		return fmt.Errorf("want a number > 0, got %v", v)
	}
	*dst = f
	return nil
}

func asLabels(v any, dst *map[string]string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("want a table of strings, got %v", v)
	}
	out := map[string]string{}
	for k, x := range m {
		var s string
		if err := asString(x, &s); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		out[k] = s
	}
	*dst = out
	return nil
}

// Decode decodes the claims of cfg (its [[claims]] and [[claim_sections]]
// tables) strictly: a missing or unknown key, an unknown kind, a missing
// parameter or one the kind does not take is a *experiment.ConfigError naming
// the file, the line and the key. A file without claims gives an empty
// Spec.
func Decode(cfg *experiment.Config) (*Spec, error) {
	s := &Spec{}
	for _, t := range cfg.Claims {
		c := Claim{Key: t.Key}
		kind, err := decodeEntry(cfg, t, "verdict", kindNames(), map[string]*string{
			"claim": &c.Claim, "paper": &c.Paper, "data": &c.Data, "experiment": &c.Experiment, "verdict": &c.Verdict,
		}, &c.Params)
		if err != nil {
			return nil, err
		}
		c.row = kinds[kind].row
		s.Claims = append(s.Claims, c)
	}
	for _, t := range cfg.ClaimSections {
		c := Section{Key: t.Key}
		kind, err := decodeEntry(cfg, t, "section", sectionKindNames(), map[string]*string{
			"title": &c.Title, "experiment": &c.Experiment, "section": &c.Kind,
		}, &c.Params)
		if err != nil {
			return nil, err
		}
		c.render = sectionKinds[kind].render
		s.Sections = append(s.Sections, c)
	}
	return s, nil
}

// decodeEntry decodes one table: its text fields, all required, into
// fields; the kind named by kindKey (one of names); and the parameters
// that kind takes (takes), all required, into p. It returns the kind.
func decodeEntry(cfg *experiment.Config, t experiment.Table, kindKey string, names []string, fields map[string]*string, p *Params) (string, error) {
	errAt := func(key string, format string, args ...any) error {
		return cfg.KeyError(t.Key+"."+key, fmt.Errorf(format, args...))
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		v, ok := t.Fields[k]
		if !ok {
			return "", errAt(k, "missing")
		}
		if err := asString(v, fields[k]); err != nil {
			return "", errAt(k, "%v", err)
		}
	}
	kind := *fields[kindKey]
	if !slices.Contains(names, kind) {
		return "", errAt(kindKey, "unknown kind %q%s; want one of %s", kind, didYouMean(kind, names), strings.Join(names, ", "))
	}
	takes := takesOf(kindKey, kind)
	for _, k := range slices.Sorted(maps.Keys(t.Fields)) {
		if _, ok := fields[k]; ok {
			continue
		}
		set, known := params[k]
		switch {
		case !known:
			return "", errAt(k, "unknown key%s", didYouMean(k, append(slices.Sorted(maps.Keys(fields)), slices.Sorted(maps.Keys(params))...)))
		case !slices.Contains(takes, k):
			return "", errAt(k, "not a parameter of %s %q (it takes %s)", kindKey, kind, listOrNone(takes))
		}
		if err := set(p, t.Fields[k]); err != nil {
			return "", errAt(k, "%v", err)
		}
	}
	for _, k := range takes {
		if _, ok := t.Fields[k]; !ok {
			return "", errAt(k, "missing: %s %q takes %s", kindKey, kind, listOrNone(takes))
		}
	}
	if err := experiment.CheckName(*fields["experiment"]); err != nil {
		return "", errAt("experiment", "%v", err)
	}
	if p.Labels != nil {
		for _, m := range p.Methods {
			if p.Labels[m] == "" {
				return "", errAt("labels", "no label for %q of methods", m)
			}
		}
	}
	return kind, nil
}

func takesOf(kindKey, kind string) []string {
	if kindKey == "section" {
		return sectionKinds[kind].params
	}
	return kinds[kind].params
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "no parameters"
	}
	return strings.Join(xs, ", ")
}

func didYouMean(word string, candidates []string) string {
	if s := experiment.Suggest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// ErrNoClaims says that an experiments file has no [[claims]].
var ErrNoClaims = errors.New("no [[claims]] tables: the claims table has no rows")
