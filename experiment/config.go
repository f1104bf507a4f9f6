package experiment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"goldstone/experiment/settings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Config is a decoded experiments file.
type Config struct {
	Path        string
	Experiments map[string]*Experiment
	// Claims are the [[claims]] tables and ClaimSections the
	// [[claim_sections]] tables, in file order, undecoded: the paper's
	// claims and the experiments that test them, which package
	// report/claims decodes (Table.Key names each, "claims[3]", for
	// KeyError). They are no part of any experiment or its hash.
	Claims, ClaimSections []Table
	lines                 map[string]int // dotted key path -> line
}

// Table is one element of an array of tables the decoder leaves to
// another package: its dotted key path ("claims[3]") and its fields as
// go-toml decodes them (string, int64, float64, bool, []any,
// map[string]any).
type Table struct {
	Key    string
	Fields map[string]any
}

// Experiment is one named experiment: a pipeline, base settings, variants and
// a grid whose cartesian product (times the variants) gives the trials.
type Experiment struct {
	Name        string
	Description string
	Pipeline    string
	Settings    settings.Values    // defaults of the pipeline, then the file's settings, then --set
	Variants    []Variant          // at least one (an unnamed one when the file lists none)
	Grid        []Axis             // sorted by key
	Tolerances  map[string]float64 // absolute tolerance per summary metric for repro; default 0
	Slurm       SlurmConfig        // [experiments.NAME.slurm]; not part of the config hash
	Search      *Search            // [experiments.NAME.search] (search_config.go); nil: the grid alone
}

// Variant is a named bundle of settings (for example an optimizer and its options).
type Variant struct {
	Name     string
	Settings map[string]any
}

// Axis is one grid dimension.
type Axis struct {
	Key    string
	Values []any
}

// Trial is one point of an experiment's sweep.
type Trial struct {
	ID       string          // stable: hash of the resolved settings
	Name     string          // variant and grid values, for people
	Variant  string          // variant name
	Seed     int             // its seed (settings.Seeded, which every pipeline declares)
	Settings settings.Values // fully resolved; read through a settings struct (settings.Decode)
}

type rawFile struct {
	Experiments   map[string]rawExp `toml:"experiments"`
	Claims        []map[string]any  `toml:"claims"`
	ClaimSections []map[string]any  `toml:"claim_sections"`
}

type rawExp struct {
	Extends     string             `toml:"extends"` // another experiment's name: see compose.go
	Description string             `toml:"description"`
	Pipeline    string             `toml:"pipeline"`
	Settings    map[string]any     `toml:"settings"`
	Grid        map[string]any     `toml:"grid"`
	Variants    []map[string]any   `toml:"variants"`
	Tolerances  map[string]float64 `toml:"tolerances"`
	Slurm       SlurmConfig        `toml:"slurm"`
	Search      *rawSearch         `toml:"search"`
}

// ConfigError is a configuration error naming the file, line and key.
type ConfigError struct {
	File string
	Line int
	Key  string
	Err  error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads and strictly decodes an experiments file.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{File: path, Err: err}
	}
	return ParseConfig(path, data)
}

// ParseConfig strictly decodes an experiments file's content. An unknown key,
// a value of the wrong type or an invalid value is an error naming the key
// and its line.
func ParseConfig(path string, data []byte) (*Config, error) {
	f, err := parseFile(path, data)
	if err != nil {
		return nil, err
	}
	return assemble([]*file{f})
}

// parseFile decodes one experiments file strictly, without building its
// experiments (assemble does, once every file's names are known).
func parseFile(path string, data []byte) (*file, error) {
	var raw rawFile
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, tomlError(path, err)
	}
	c := &Config{Path: path, Experiments: map[string]*Experiment{}, lines: keyLines(data)}
	if len(raw.Experiments) == 0 {
		return nil, &ConfigError{File: path, Err: errors.New("no [experiments.NAME] tables")}
	}
	for i, f := range raw.Claims {
		c.Claims = append(c.Claims, Table{Key: fmt.Sprintf("claims[%d]", i), Fields: f})
	}
	for i, f := range raw.ClaimSections {
		c.ClaimSections = append(c.ClaimSections, Table{Key: fmt.Sprintf("claim_sections[%d]", i), Fields: f})
	}
	return &file{cfg: c, raw: raw.Experiments}, nil
}

// KeyError is err as a *ConfigError naming the file and the dotted key
// path (its line, or its nearest parent's): for packages that decode parts
// of the file the decoder leaves to them (Config.Claims).
func (c *Config) KeyError(key string, err error) *ConfigError {
	return &ConfigError{File: c.Path, Line: c.line(key), Key: key, Err: err}
}

func tomlError(path string, err error) error {
	var se *toml.StrictMissingError
	if errors.As(err, &se) && len(se.Errors) > 0 {
		de := se.Errors[0]
		row, _ := de.Position()
		return &ConfigError{File: path, Line: row, Key: strings.Join(de.Key(), "."), Err: errors.New("unknown key")}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		return &ConfigError{File: path, Line: row, Key: strings.Join(de.Key(), "."), Err: errors.New(strings.TrimPrefix(firstLine(de.Error()), "toml: "))}
	}
	return &ConfigError{File: path, Err: err}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (c *Config) errorf(key string, format string, args ...any) error {
	return &ConfigError{File: c.Path, Line: c.line(key), Key: key, Err: fmt.Errorf(format, args...)}
}

// line finds the line of a dotted key, falling back to its nearest parent.
func (c *Config) line(key string) int {
	for k := key; k != ""; {
		if l, ok := c.lines[k]; ok {
			return l
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

func (c *Config) build(name string, r rawExp) (*Experiment, error) {
	p := "experiments." + name
	if err := CheckName(name); err != nil {
		return nil, &ConfigError{File: c.Path, Line: c.line(p), Key: "experiments", Err: err}
	}
	e := &Experiment{Name: name, Description: r.Description, Pipeline: r.Pipeline, Tolerances: map[string]float64{}}
	if r.Pipeline == "" {
		return nil, c.errorf(p+".pipeline", "missing; want one of %s", strings.Join(PipelineNames(), ", "))
	}
	if _, ok := LookupPipeline(r.Pipeline); !ok {
		return nil, c.errorf(p+".pipeline", "unknown pipeline %q; want one of %s", r.Pipeline, strings.Join(PipelineNames(), ", "))
	}
	e.Settings = Defaults(r.Pipeline)
	for _, k := range sortedKeys(r.Settings) {
		v, err := c.setting(e.Pipeline, p+".settings."+k, k, r.Settings[k])
		if err != nil {
			return nil, err
		}
		e.Settings[k] = v
	}
	for i, rv := range r.Variants {
		vp := fmt.Sprintf("%s.variants[%d]", p, i)
		v := Variant{Settings: map[string]any{}}
		nm, ok := rv["name"].(string)
		if !ok || nm == "" {
			return nil, c.errorf(vp, "a variant needs a name = \"...\"")
		}
		v.Name = nm
		for _, k := range sortedKeys(rv) {
			if k == "name" {
				continue
			}
			val, err := c.setting(e.Pipeline, vp+"."+k, k, rv[k])
			if err != nil {
				return nil, err
			}
			v.Settings[k] = val
		}
		for _, o := range e.Variants {
			if o.Name == v.Name {
				return nil, c.errorf(vp+".name", "duplicate variant name %q", v.Name)
			}
		}
		e.Variants = append(e.Variants, v)
	}
	for _, k := range sortedKeys(r.Grid) {
		gp := p + ".grid." + k
		vals, paths, err := c.gridValues(e.Pipeline, gp, k, r.Grid[k])
		if err != nil {
			return nil, err
		}
		ax := Axis{Key: k}
		for i, raw := range vals {
			v, err := c.setting(e.Pipeline, paths[i], k, raw)
			if err != nil {
				return nil, err
			}
			for _, o := range ax.Values {
				if settings.FormatValue(o) == settings.FormatValue(v) {
					return nil, c.errorf(gp, "value %s listed twice", settings.FormatValue(v))
				}
			}
			ax.Values = append(ax.Values, v)
		}
		e.Grid = append(e.Grid, ax)
	}
	for _, k := range sortedKeys(r.Tolerances) {
		t := r.Tolerances[k]
		if !(t >= 0) {
			return nil, c.errorf(p+".tolerances."+k, "must be >= 0, got %v", t)
		}
		e.Tolerances[k] = t
	}
	var err error
	if e.Slurm, err = c.slurmConfig(p+".slurm", r.Slurm); err != nil {
		return nil, err
	}
	if len(e.Variants) == 0 {
		e.Variants = []Variant{{Name: "", Settings: map[string]any{}}}
	}
	if r.Search != nil {
		if e.Search, err = c.searchConfig(p+".search", r.Search, e); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// maxNameLen bounds an experiment name (it is a directory name).
const maxNameLen = 100

// CheckName checks an experiment name: 1 to 100 ASCII letters, digits,
// '.', '_' and '-', starting with a letter or digit. The name is a
// directory of the reports, logs and batch folders, so it can hold no path
// separator, no leading dot ("..", hidden files) and nothing a shell or a
// terminal would read differently.
func CheckName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("invalid experiment name %q: %s (use letters, digits, '.', '_' and '-', starting with a letter or digit)", name, why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > maxNameLen:
		return bad(fmt.Sprintf("longer than %d characters", maxNameLen))
	case !isAlnum(name[0]):
		return bad("it must start with a letter or digit")
	}
	for i := 0; i < len(name); i++ {
		if b := name[i]; !isAlnum(b) && b != '.' && b != '_' && b != '-' {
			return bad(fmt.Sprintf("character %q", rune(b)))
		}
	}
	return nil
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// RunDir is root/<experiment>/run-<run>, the directory of a run's report,
// logs or export under root. An experiment name that CheckName rejects (a
// run recorded by an older version, a hand-edited database) is an error,
// and so is a result outside root: no path built from a name leaves its
// root.
func RunDir(root, experiment string, run int64) (string, error) {
	if err := CheckName(experiment); err != nil {
		return "", err
	}
	return Within(root, experiment, fmt.Sprintf("run-%d", run))
}

// Within joins elems onto root and checks that the result is root or
// below it, lexically (after filepath.Clean): "..", an absolute element or
// a separator in a name cannot lead outside.
func Within(root string, elems ...string) (string, error) {
	p := filepath.Join(append([]string{root}, elems...)...)
	rel, err := filepath.Rel(filepath.Clean(root), p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("path %s leaves its root %s", p, root)
	}
	return p, nil
}

// setting checks one value of a setting key in the context of a pipeline.
func (c *Config) setting(pipeline, path, key string, raw any) (any, error) {
	s, err := lookupSetting(pipeline, key)
	if err != nil {
		return nil, c.errorf(path, "%v", err)
	}
	v, err := s.Normalize(raw)
	if err != nil {
		return nil, c.errorf(path, "%v", err)
	}
	return v, nil
}

// lookupSetting returns the spec of a setting key in a pipeline, or an
// error that says whether the key is unknown (with a suggestion) or belongs
// to other pipelines.
func lookupSetting(pipeline, key string) (*settings.Spec, error) {
	if s, ok := specOf(pipeline, key); ok {
		return s, nil
	}
	if p, ok := LookupPipeline(pipeline); ok {
		if r, ok := p.(Refuser); ok {
			if why := r.Refuses(key); why != "" {
				return nil, fmt.Errorf("pipeline %q refuses it: %s", pipeline, why)
			}
		}
	}
	if others := pipelinesWith(key); len(others) > 0 {
		return nil, fmt.Errorf("setting not used by pipeline %q (only by %s)", pipeline, strings.Join(others, ", "))
	}
	return nil, fmt.Errorf("unknown setting%s", suggest(key))
}

func suggest(key string) string {
	best := Suggest(key, allKeys())
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// Suggest returns the candidate nearest to word, for a "did you mean"
// (setting keys, commands, experiments, flags, metrics): the one at the
// smallest edit distance below 3 (the first of equals), else one that
// word is a prefix of, or that is a prefix of word; "" when none is near.
func Suggest(word string, candidates []string) string {
	best, bestD := "", 3
	for _, k := range candidates {
		if d := editDistance(word, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" || len(word) < 3 {
		return best
	}
	for _, k := range candidates {
		if strings.HasPrefix(k, word) || strings.HasPrefix(word, k) && len(k) >= 3 {
			return k
		}
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Defaults returns the default value of every setting a pipeline accepts.
func Defaults(pipeline string) settings.Values {
	s := settings.Values{}
	for _, sp := range PipelineSpecs(pipeline) {
		s[sp.Key] = sp.Default
	}
	return s
}

// setValue reads a --set value as a TOML value, a bare word as a string,
// and a comma-separated list without brackets (seed=1,2,3: zsh globs the
// brackets of seed=[1,2,3] unless quoted) as an array of such values.
func setValue(raw string) any {
	raw = strings.TrimSpace(raw)
	one := func(text string) any {
		var doc map[string]any
		if err := toml.Unmarshal([]byte("v = "+text), &doc); err != nil {
			return text
		}
		return doc["v"]
	}
	if raw != "" && strings.Contains(raw, ",") && !strings.ContainsAny(raw[:1], `["'{`) {
		var arr []any
		for _, part := range strings.Split(raw, ",") {
			arr = append(arr, one(strings.TrimSpace(part)))
		}
		return arr
	}
	return one(raw)
}

// Override applies command-line --set key=value overrides. The value is read
// by setValue: a TOML value, a bare word as a string, a comma-separated list
// as an array. An array for a setting
// that is not itself a list replaces the grid of that key; any other value
// fixes the key for every trial, removing it from the grid and the variants.
func (e *Experiment) Override(sets []string) error {
	for _, kv := range sets {
		k, raw, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return &ConfigError{File: "--set", Key: kv, Err: errors.New("want key=value")}
		}
		if strings.HasPrefix(k, "search.") {
			if err := e.overrideSearch(k, raw); err != nil {
				return err
			}
			continue
		}
		if strings.HasPrefix(k, "variants.") {
			if err := e.overrideVariant(k, raw); err != nil {
				return err
			}
			continue
		}
		s, err := lookupSetting(e.Pipeline, k)
		if err != nil {
			return &ConfigError{File: "--set", Key: k, Err: err}
		}
		v, err := expandRanges(s, stringSet(s, setValue(raw), raw))
		if err != nil {
			return &ConfigError{File: "--set", Key: k, Err: err}
		}
		if arr, isArr := v.([]any); isArr && s.Kind != settings.FloatList && s.Kind != settings.StringList {
			if len(arr) == 0 {
				return &ConfigError{File: "--set", Key: k, Err: errors.New("empty grid")}
			}
			ax := Axis{Key: k}
			for _, r := range arr {
				nv, err := s.Normalize(r)
				if err != nil {
					return &ConfigError{File: "--set", Key: k, Err: err}
				}
				ax.Values = append(ax.Values, nv)
			}
			e.dropKey(k)
			e.Grid = append(e.Grid, ax)
			slices.SortFunc(e.Grid, func(a, b Axis) int { return strings.Compare(a.Key, b.Key) })
			continue
		}
		nv, err := s.Normalize(v)
		if err != nil {
			return &ConfigError{File: "--set", Key: k, Err: err}
		}
		e.dropKey(k)
		e.Settings[k] = nv
	}
	return e.overridePruning()
}

func (e *Experiment) dropKey(k string) {
	g := e.Grid[:0]
	for _, ax := range e.Grid {
		if ax.Key != k {
			g = append(g, ax)
		}
	}
	e.Grid = g
	for _, v := range e.Variants {
		delete(v.Settings, k)
	}
}

// Size is the number of points of the sweep: variants times the product
// of the grid's sizes (saturating at math.MaxInt), counted without
// enumerating them. Trials may list fewer: points equal in their
// effective settings are one trial.
func (e *Experiment) Size() int {
	n := max(1, len(e.Variants))
	for _, ax := range e.Grid {
		k := len(ax.Values)
		if k > 0 && n > math.MaxInt/k {
			return math.MaxInt
		}
		n *= k
	}
	return n
}

// SizeText spells Size out: "3 variants × lr 10 × seed 5" ("lr 10 × seed
// 5" for an experiment without named variants).
func (e *Experiment) SizeText() string {
	var parts []string
	switch {
	case len(e.Variants) > 1:
		parts = append(parts, fmt.Sprintf("%d variants", len(e.Variants)))
	case len(e.Variants) == 1 && e.Variants[0].Name != "":
		parts = append(parts, "1 variant")
	}
	for _, ax := range e.Grid {
		parts = append(parts, fmt.Sprintf("%s %d", ax.Key, len(ax.Values)))
	}
	if len(parts) == 0 {
		return "no grid"
	}
	return strings.Join(parts, " × ")
}

// Trials enumerates the sweep deterministically: variants in file order, then
// the grid's cartesian product with keys in sorted order (the last key
// varying fastest). A point equal to an earlier one in its effective settings
// is the same trial and is listed once.
func (e *Experiment) Trials() []Trial {
	out, _ := e.TrialsContext(context.Background())
	return out
}

// TrialsContext is Trials that stops, with ctx's error, within a few
// hundred points of ctx being done: a large sweep is enumerated in seconds,
// and Ctrl-C must not wait for it.
func (e *Experiment) TrialsContext(ctx context.Context) ([]Trial, error) {
	var out []Trial
	seen := map[string]bool{}
	n := 0
	for _, v := range e.Variants {
		idx := make([]int, len(e.Grid))
		for {
			if n++; n%256 == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s := e.Settings.Clone()
			for k, val := range v.Settings {
				s[k] = val
			}
			var parts []string
			if v.Name != "" {
				parts = append(parts, v.Name)
			}
			for a, ax := range e.Grid {
				s[ax.Key] = ax.Values[idx[a]]
				parts = append(parts, ax.Key+"="+settings.FormatValue(ax.Values[idx[a]]))
			}
			if id := TrialID(e.Pipeline, s); !seen[id] {
				seen[id] = true
				seed := settings.MustDecode[settings.Seeded](s).Seed
				out = append(out, Trial{ID: id, Name: strings.Join(parts, " "), Variant: v.Name, Seed: seed, Settings: s})
			}
			a := len(idx) - 1
			for ; a >= 0; a-- {
				idx[a]++
				if idx[a] < len(e.Grid[a].Values) {
					break
				}
				idx[a] = 0
			}
			if a < 0 {
				break
			}
		}
	}
	return out, nil
}

// TrialID is the stable id of a trial: a hash of its pipeline and its
// effective settings (see EffectiveSettings), so two grid points that differ
// only in a setting the trial does not use are one trial.
func TrialID(pipeline string, s settings.Values) string {
	eff, err := EffectiveSettings(pipeline, s)
	if err != nil {
		panic(err) // settings were checked by the decoder
	}
	h := sha256.New()
	h.Write([]byte(pipeline))
	h.Write([]byte{0})
	h.Write(settings.Encode(eff))
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// Resolved returns the experiment's full resolved configuration as canonical
// JSON, and its hash: what a run records and what decides whether a run can
// be resumed.
func (e *Experiment) Resolved() (string, string) {
	m := map[string]any{
		"name":       e.Name,
		"pipeline":   e.Pipeline,
		"settings":   map[string]any(e.Settings),
		"tolerances": e.Tolerances,
	}
	if e.Search != nil {
		m["search"] = e.Search.resolved()
	}
	var vs []map[string]any
	for _, v := range e.baseVariants() {
		vs = append(vs, map[string]any{"name": v.Name, "settings": v.Settings})
	}
	m["variants"] = vs
	var gs []map[string]any
	for _, ax := range e.Grid {
		gs = append(gs, map[string]any{"key": ax.Key, "values": ax.Values})
	}
	m["grid"] = gs
	b := settings.Encode(m)
	sum := sha256.Sum256(b)
	return string(b), hex.EncodeToString(sum[:])[:16]
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// keyLines maps every dotted key path of a TOML document to its line, with
// array-of-tables elements indexed as name[i].
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	var table string
	arrays := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			key := joinKey(e.Key())
			line := p.Shape(e.Raw).Start.Line
			if e.Raw.Length == 0 {
				line = lineOfKey(&p, e.Key())
			}
			if e.Kind == unstable.ArrayTable {
				i := arrays[key]
				arrays[key] = i + 1
				key = key + "[" + strconv.Itoa(i) + "]"
			} else {
				key = inLastElement(key, arrays)
			}
			table = key
			lines[key] = line
		case unstable.KeyValue:
			key := joinKey(e.Key())
			if table != "" {
				key = table + "." + key
			}
			lines[key] = lineOfKey(&p, e.Key())
			if v := e.Value(); v != nil && v.Kind == unstable.Array {
				it := v.Children()
				for i := 0; it.Next(); i++ {
					n := it.Node()
					if n.Raw.Length > 0 {
						lines[key+"["+strconv.Itoa(i)+"]"] = p.Shape(n.Raw).Start.Line
					}
				}
			}
		}
	}
	return lines
}

// inLastElement names a sub-table of an array of tables ([claims.labels]
// after [[claims]]) by the element it belongs to, the last one so far
// ("claims[3].labels").
func inLastElement(key string, arrays map[string]int) string {
	best := ""
	for a := range arrays {
		if strings.HasPrefix(key, a+".") && len(a) > len(best) {
			best = a
		}
	}
	if best == "" {
		return key
	}
	return best + "[" + strconv.Itoa(arrays[best]-1) + "]" + key[len(best):]
}

func joinKey(it unstable.Iterator) string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return strings.Join(parts, ".")
}

func lineOfKey(p *unstable.Parser, it unstable.Iterator) int {
	for it.Next() {
		n := it.Node()
		if n.Raw.Length > 0 {
			return p.Shape(n.Raw).Start.Line
		}
	}
	return 0
}

// ExperimentFromResolved rebuilds an experiment from the configuration a run
// recorded (Experiment.Resolved), so that repro re-runs exactly what ran.
func ExperimentFromResolved(js string) (*Experiment, error) {
	var raw struct {
		Name       string             `json:"name"`
		Pipeline   string             `json:"pipeline"`
		Settings   map[string]any     `json:"settings"`
		Tolerances map[string]float64 `json:"tolerances"`
		Variants   []struct {
			Name     string         `json:"name"`
			Settings map[string]any `json:"settings"`
		} `json:"variants"`
		Grid []struct {
			Key    string `json:"key"`
			Values []any  `json:"values"`
		} `json:"grid"`
		Search json.RawMessage `json:"search"`
	}
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if err := CheckName(raw.Name); err != nil {
		return nil, err
	}
	if _, ok := LookupPipeline(raw.Pipeline); !ok {
		return nil, fmt.Errorf("unknown pipeline %q", raw.Pipeline)
	}
	conv := func(key string, v any) (any, error) {
		s, ok := specOf(raw.Pipeline, key)
		if !ok {
			return nil, fmt.Errorf("setting %s: unknown (recorded by another version?)", key)
		}
		v, err := fromJSON(s.Kind, v)
		if err != nil {
			return nil, fmt.Errorf("setting %s: %w", key, err)
		}
		return s.Normalize(v)
	}
	// Settings added since the run was recorded take their defaults.
	e := &Experiment{Name: raw.Name, Pipeline: raw.Pipeline, Settings: Defaults(raw.Pipeline), Tolerances: raw.Tolerances}
	if e.Tolerances == nil {
		e.Tolerances = map[string]float64{}
	}
	for k, v := range raw.Settings {
		nv, err := conv(k, v)
		if err != nil {
			return nil, err
		}
		e.Settings[k] = nv
	}
	for _, v := range raw.Variants {
		nv := Variant{Name: v.Name, Settings: map[string]any{}}
		for k, x := range v.Settings {
			val, err := conv(k, x)
			if err != nil {
				return nil, err
			}
			nv.Settings[k] = val
		}
		e.Variants = append(e.Variants, nv)
	}
	for _, g := range raw.Grid {
		ax := Axis{Key: g.Key}
		for _, x := range g.Values {
			val, err := conv(g.Key, x)
			if err != nil {
				return nil, err
			}
			ax.Values = append(ax.Values, val)
		}
		e.Grid = append(e.Grid, ax)
	}
	if len(raw.Search) > 0 && string(raw.Search) != "null" {
		s, err := searchFromResolved(raw.Search, conv)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		e.Search = s
	}
	return e, nil
}

func fromJSON(k settings.Kind, v any) (any, error) {
	num := func(x any) (any, error) {
		n, ok := x.(json.Number)
		if !ok {
			return x, nil
		}
		if k == settings.Int {
			return n.Int64()
		}
		return n.Float64()
	}
	switch k {
	case settings.Int, settings.Float:
		return num(v)
	case settings.FloatList:
		xs, ok := v.([]any)
		if !ok {
			return v, nil
		}
		out := make([]any, len(xs))
		for i, x := range xs {
			n, ok := x.(json.Number)
			if !ok {
				return nil, fmt.Errorf("want a number, got %v", x)
			}
			f, err := n.Float64()
			if err != nil {
				return nil, err
			}
			out[i] = f
		}
		return out, nil
	}
	return v, nil
}
