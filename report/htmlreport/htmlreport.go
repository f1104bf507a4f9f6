// Package htmlreport writes the HTML report of a run and the index of all
// runs: static pages with no server and no network access (styles and the
// table-sorting script are inline), that work opened from the file system.
//
// A run's page (reports/<experiment>/run-<id>/index.html) shows the run id,
// experiment, status, note and tags, its settings with their difference
// from the defaults, the git commit and environment, the trials table
// (sortable by any column, numbers numerically), every figure in the
// report directory, the failed trials with their errors and log files, and
// links to the Markdown summary and the data files. reports/index.html
// lists every run with a link to its page.
//
// Invariants: every link is relative to the page (so a report directory
// can be moved or copied whole); pages are written atomically (temporary
// file and rename); the output depends only on the inputs (no clock).
package htmlreport

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"goldstone/internal/atomicfile"
	"goldstone/internal/fault"
	"goldstone/internal/safetext"
	"goldstone/report"
	"goldstone/report/figures"
	"goldstone/runs"
)

// Page is what a run's page shows.
type Page struct {
	Run  runs.RunListing
	Env  []KV // environment beyond RunInfo (dependency versions, command line, input digests)
	Diff []Setting
	All  []Setting
	// Trials in enumeration order.
	Trials []runs.TrialRow
	// Figures and Files are paths relative to the page's directory.
	Figures []Figure
	Summary string // the Markdown summary, "" if none
	Files   []Link
	Outputs []runs.Output
	// Aggregates are the headline metrics over seeds, per variant and
	// swept setting (runs.Aggregates).
	Aggregates []runs.Aggregate
	// SettingDiffs: per swept setting, each headline metric's difference
	// between its values paired by seed (SettingDiffs).
	SettingDiffs []SettingDiff
	// Local maps a file outside the page's directory (a trial log, a
	// cache output) to its copy inside it (Localize), relative to the
	// page; files outside without a copy are named, not linked.
	Local map[string]string
	// Rungs is a pruned search's rungs table (report.SearchRungs; nil
	// for any other run), RungsIntro what it shows, RungsObjective the
	// search's objective, RungsMaximize its direction.
	Rungs                      []report.SearchRung
	RungsIntro, RungsObjective string
	RungsMaximize              bool
	// SummaryHTML is the Markdown summary rendered (its run header aside,
	// which the page shows itself).
	SummaryHTML template.HTML
}

// Figure is a PNG figure of the report, its vector twin (SVG, "" if
// none) and its caption (figures.CaptionsFile; "" if none).
type Figure struct {
	File, SVG, Caption string
}

// KV is a labelled value.
type KV struct{ Key, Value string }

// Setting is one flattened setting of the run.
type Setting struct {
	Key, Value, Default string
	HasDefault, Changed bool
}

// Link is a file the page links to.
type Link struct {
	Name, Href string
	Bytes      int64
}

// Options adds what the store does not hold.
type Options struct {
	// Defaults are the flattened default settings of the experiment's
	// pipeline (key as in runs.FlattenConfig); nil shows no diff.
	Defaults map[string]string
	// Env is extra environment to show (e.g. module versions).
	Env []KV
	// Headline are the metrics the page's aggregate tables show, in order
	// (experiment.Headline of the run's pipeline); none: no aggregates.
	Headline []runs.Headline
}

// identity are the configuration keys that name the run rather than set
// it: never listed as differences from the defaults.
var identity = map[string]bool{"name": true, "pipeline": true}

// dataExt are the file types linked as data files.
var dataExt = []string{".parquet", ".csv", ".json", ".arrow", ".npy", ".tsv", ".txt", ".log", ".md"}

// Build gathers a run's page from the store and the files in dir (the
// run's report directory): PNG figures, the Markdown summary (summary.md or
// report.md) and data files.
func Build(ctx context.Context, st *runs.Store, runID int64, dir string, opt Options) (*Page, error) {
	list, err := st.ListRuns(ctx, runs.RunFilter{})
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(list, func(l runs.RunListing) bool { return l.ID == runID })
	if i < 0 {
		return nil, fmt.Errorf("html report: run %d: %w", runID, runs.ErrNotFound)
	}
	p := &Page{Run: list[i], Env: opt.Env}
	flat, err := runs.FlattenConfig(p.Run.ConfigJSON)
	if err != nil {
		return nil, fmt.Errorf("html report: run %d config: %w", runID, err)
	}
	for _, k := range sortedKeys(flat) {
		s := Setting{Key: k, Value: flat[k]}
		if opt.Defaults != nil && !identity[k] && s.Value != "{}" {
			s.Default, s.HasDefault = opt.Defaults[k]
			s.Changed = !s.HasDefault || s.Default != s.Value
		}
		p.All = append(p.All, s)
		if s.Changed {
			p.Diff = append(p.Diff, s)
		}
	}
	if p.Trials, err = st.TrialTable(ctx, runID); err != nil {
		return nil, err
	}
	if p.Outputs, err = st.Outputs(ctx, runID); err != nil {
		return nil, err
	}
	p.Aggregates = runs.Aggregates(p.Trials, opt.Headline)
	p.SettingDiffs = SettingDiffs(p.Trials, opt.Headline)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("html report: %w", err)
	}
	caps, err := figures.ReadCaptions(dir)
	if err != nil {
		return nil, fmt.Errorf("html report: %w", err)
	}
	have := map[string]bool{}
	for _, e := range ents {
		have[e.Name()] = true
	}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || name == "index.html" {
			continue
		}
		ext := strings.ToLower(filepath.Ext(name))
		switch {
		case ext == ".png" || ext == ".svg" && !have[strings.TrimSuffix(name, filepath.Ext(name))+".png"]:
			f := Figure{File: name, Caption: caps[name]}
			if svg := figures.SVGPath(name); ext == ".png" && have[svg] {
				f.SVG = svg
			}
			p.Figures = append(p.Figures, f)
		case ext == ".svg":
			// the vector twin of a PNG, linked from its figure
		case name == "summary.md" || (name == "report.md" && p.Summary == ""):
			p.Summary = name
			fallthrough
		case slices.Contains(dataExt, ext):
			info, err := e.Info()
			if err != nil {
				return nil, fmt.Errorf("html report: %w", err)
			}
			p.Files = append(p.Files, Link{Name: name, Href: name, Bytes: info.Size()})
		}
	}
	orderSweepFigures(p.Figures, opt.Headline)
	return p, nil
}

// orderSweepFigures puts the sweep-<metric> figures in the order of the
// headline metrics, then the other metrics' by name; the other figures
// keep their places (before them, by name).
func orderSweepFigures(figs []Figure, headline []runs.Headline) {
	rank := func(f Figure) int {
		m, ok := strings.CutPrefix(strings.TrimSuffix(f.File, filepath.Ext(f.File)), "sweep-")
		if !ok {
			return -1
		}
		for i, h := range headline {
			if h.Metric == m {
				return i
			}
		}
		return len(headline)
	}
	slices.SortStableFunc(figs, func(a, b Figure) int { return cmp.Compare(rank(a), rank(b)) })
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Write writes the page as dir/index.html. Paths of trial logs and outputs
// outside dir are linked relative to dir.
func Write(dir string, p *Page) (string, error) {
	if p.Summary != "" && p.SummaryHTML == "" {
		html, err := renderMarkdown(filepath.Join(dir, p.Summary))
		if err != nil {
			return "", err
		}
		p.SummaryHTML = html
	}
	path := filepath.Join(dir, "index.html")
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	v := pageView{Page: p, dir: abs}
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, &v); err != nil {
		return "", fmt.Errorf("html report %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, visible(b.Bytes())); err != nil {
		return "", fmt.Errorf("html report %s: %w", path, err)
	}
	return path, nil
}

// IndexEntry is one run in reports/index.html; Href is "" when the run has
// no page.
type IndexEntry struct {
	Run  runs.RunListing
	Href string
	// Best is, per headline metric of the run's pipeline, its best cell
	// over seeds (runs.Aggregates).
	Best []IndexBest
}

// IndexBest is a run's best cell of a headline metric.
type IndexBest struct {
	Metric string
	Cell   runs.Cell
	Label  string // the cell's variant and swept settings
}

// HeadlineFunc returns the headline metrics of a pipeline (experiment.Headline).
type HeadlineFunc func(pipeline string) []runs.Headline

// WriteIndex writes reportsDir/index.html listing every run of the store,
// newest first, linking the runs whose page exists at
// reportsDir/<experiment>/run-<id>/index.html, with each run's status,
// note, tags and the best cell of each headline metric (headline may be
// nil), and filters over them.
func WriteIndex(ctx context.Context, st *runs.Store, reportsDir string, headline HeadlineFunc) (string, error) {
	list, err := st.ListRuns(ctx, runs.RunFilter{})
	if err != nil {
		return "", err
	}
	var es []IndexEntry
	for i := len(list) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		l := list[i]
		e := IndexEntry{Run: l}
		if headline != nil {
			if e.Best, err = bestOf(ctx, st, l, headline); err != nil {
				return "", err
			}
		}
		rel := filepath.Join(l.Experiment, fmt.Sprintf("run-%d", l.ID), "index.html")
		if _, err := os.Stat(filepath.Join(reportsDir, rel)); err == nil {
			e.Href = filepath.ToSlash(rel)
		}
		es = append(es, e)
	}
	if err := os.MkdirAll(reportsDir, 0o777); err != nil {
		return "", err
	}
	path := filepath.Join(reportsDir, "index.html")
	var b bytes.Buffer
	if err := indexTmpl.Execute(&b, es); err != nil {
		return "", fmt.Errorf("runs index %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, visible(b.Bytes())); err != nil {
		return "", fmt.Errorf("runs index %s: %w", path, err)
	}
	return path, nil
}

// bestOf returns the best cell of each headline metric of a run.
func bestOf(ctx context.Context, st *runs.Store, l runs.RunListing, headline HeadlineFunc) ([]IndexBest, error) {
	var cfg struct {
		Pipeline string `json:"pipeline"`
	}
	if json.Unmarshal([]byte(l.ConfigJSON), &cfg) != nil || cfg.Pipeline == "" {
		return nil, nil
	}
	heads := headline(cfg.Pipeline)
	if len(heads) == 0 {
		return nil, nil
	}
	trials, err := st.TrialTable(ctx, l.ID)
	if err != nil {
		return nil, err
	}
	var out []IndexBest
	for _, a := range runs.Aggregates(trials, heads) {
		for _, c := range a.Cells {
			if c.Best || len(a.Cells) == 1 {
				label := c.Variant
				for i, s := range a.Settings {
					label += " " + s + "=" + c.Settings[i]
				}
				out = append(out, IndexBest{Metric: a.Metric, Cell: c, Label: strings.TrimSpace(label)})
				break
			}
		}
	}
	return out, nil
}

// pageView adds the template helpers that need the page's directory. The
// template asks for the table's columns once per trial row: they are
// computed on the first call and kept (paramKeys, metricKeys), so a page
// of n trials costs O(n), not O(n²).
type pageView struct {
	*Page
	dir        string
	paramKeys  []string
	metricKeys []string
	outputsOf  map[string][]runs.Output
}

// Rel links a file from the page: its copy inside the page's directory
// (Localize), or the file itself when it is inside; "" (no link) for a
// file outside, so that a copied reports folder has no link that leads
// out of it.
func (v *pageView) Rel(path string) string {
	if path == "" {
		return ""
	}
	if l, ok := v.Local[path]; ok {
		return l
	}
	abs := path
	if !filepath.IsAbs(abs) {
		var err error
		if abs, err = filepath.Abs(path); err != nil {
			return ""
		}
	}
	rel, err := filepath.Rel(v.dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// MaxLocalOutput is the largest cache output Localize copies into a
// report (trained parameters of a large model stay in the cache).
const MaxLocalOutput = 2 << 20

// LocalFile is a file Localize copied into a report, with its content
// digest (hex SHA-256).
type LocalFile struct {
	Path, SHA256 string
}

// Localize copies into dir what the page would link outside it, so that a
// copied reports folder works on its own: each trial's log to
// logs/<trial>.log and each recorded cache output of at most maxOutput
// bytes to outputs/<trial, or shared>/<stage>/<file>. It records the copies
// in p.Local and returns them (the run's report files). A source that no
// longer exists is skipped. The copies are written as one atomicfile.Batch
// (synced together, then renamed into place): a run of thousands of trials
// copies thousands of files, and one fsync after another would take
// minutes. It stops, with ctx's error and nothing renamed, when ctx is
// done.
func Localize(ctx context.Context, dir string, p *Page, maxOutput int64) ([]LocalFile, error) {
	if p.Local == nil {
		p.Local = map[string]string{}
	}
	var (
		batch  atomicfile.Batch
		copied []LocalFile
		local  = map[string]string{}
		dirs   = map[string]bool{}
	)
	defer batch.Abort()
	cp := func(src, rel string, log bool) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := os.ReadFile(src)
		if err != nil {
			if fi, serr := os.Stat(src); serr != nil || fi.IsDir() {
				return nil // gone, or not a file
			}
			return err
		}
		if log {
			b = visible(b)
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if d := filepath.Dir(dst); !dirs[d] {
			if err := os.MkdirAll(d, 0o777); err != nil {
				return err
			}
			dirs[d] = true
		}
		if err := batch.Add(dst, b); err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		local[src] = rel
		copied = append(copied, LocalFile{Path: dst, SHA256: hex.EncodeToString(sum[:])})
		fault.Point("report:copy")
		return nil
	}
	for _, t := range p.Trials {
		if t.LogPath != "" {
			if err := cp(t.LogPath, "logs/"+safeName(t.ID)+".log", true); err != nil {
				return nil, fmt.Errorf("html report: copy the log of %s: %w", t.ID, err)
			}
		}
	}
	for _, o := range p.Outputs {
		if o.Bytes > maxOutput {
			continue
		}
		owner := o.Trial
		if owner == "" {
			owner = "shared"
		}
		rel := "outputs/" + safeName(owner) + "/" + safeName(filepath.Base(filepath.Dir(o.CacheDir))) + "/" + filepath.ToSlash(o.File)
		if strings.Contains(o.File, "..") {
			continue
		}
		if err := cp(o.Path(), rel, false); err != nil {
			return nil, fmt.Errorf("html report: copy %s: %w", o.Path(), err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := batch.Commit(); err != nil {
		return nil, fmt.Errorf("html report: %w", err)
	}
	maps.Copy(p.Local, local)
	return copied, nil
}

// visible writes the control characters (but newline and tab), the
// bidirectional controls and the invalid UTF-8 of a page or a copied log
// as Go escapes (\x1b): text from a data file, a setting, a note or a
// trial's log reaches the reports folder as text, never as an escape
// sequence for the terminal that cats it or the browser that shows it.
// The templates write none of these, and their HTML escaping has already
// made every value safe in its context, where \x1b is as well.
func visible(b []byte) []byte { return safetext.EscapeBytes(b) }

// safeName keeps a path element inside its directory.
func safeName(s string) string {
	s = strings.NewReplacer("/", "_", "\\", "_", "..", "_").Replace(s)
	if s == "" || s == "." {
		return "_"
	}
	return s
}

// ParamKeys are the parameter columns of the trials table: the variant and
// every key whose value differs between trials (the others are in the
// settings), without "name" (its own column), in order.
func (v *pageView) ParamKeys() []string {
	if v.paramKeys == nil {
		v.paramKeys = append([]string{}, v.paramKeysOf()...) // non-nil: computed
	}
	return v.paramKeys
}

func (v *pageView) paramKeysOf() []string {
	first := map[string]string{}
	set := map[string]bool{}
	for i, t := range v.Trials {
		for k, val := range t.Params {
			if k == "name" {
				continue
			}
			if k == "variant" || len(v.Trials) == 1 {
				set[k] = true
			}
			if i == 0 {
				first[k] = val
			} else if f, ok := first[k]; !ok || f != val {
				set[k] = true
			}
		}
		if i > 0 {
			for k := range first {
				if _, ok := t.Params[k]; !ok {
					set[k] = true
				}
			}
		}
	}
	return sortedKeys(set)
}

// MetricKeys are the summary columns of the trials table.
func (v *pageView) MetricKeys() []string {
	if v.metricKeys == nil {
		set := map[string]bool{}
		for _, t := range v.Trials {
			for k := range t.Summary {
				set[k] = true
			}
		}
		v.metricKeys = append([]string{}, sortedKeys(set)...) // non-nil: computed
	}
	return v.metricKeys
}

// Failed are the trials that did not finish.
func (v *pageView) Failed() []runs.TrialRow {
	var out []runs.TrialRow
	for _, t := range v.Trials {
		if t.Status == runs.StatusFailed || t.Status == runs.StatusInterrupted {
			out = append(out, t)
		}
	}
	return out
}

// Diverged are the trials whose training diverged: results, shown in the
// tables with what they never reached, listed with where they diverged.
func (v *pageView) Diverged() []runs.TrialRow {
	var out []runs.TrialRow
	for _, t := range v.Trials {
		if t.Status == runs.StatusDiverged {
			out = append(out, t)
		}
	}
	return out
}

// OutputsOf are the outputs recorded for a trial.
func (v *pageView) OutputsOf(trial string) []runs.Output {
	if v.outputsOf == nil {
		v.outputsOf = map[string][]runs.Output{}
		for _, o := range v.Outputs {
			v.outputsOf[o.Trial] = append(v.outputsOf[o.Trial], o)
		}
	}
	return v.outputsOf[trial]
}

// Shared are the outputs of stages shared by the run's trials.
func (v *pageView) Shared() []runs.Output { return v.OutputsOf("") }

var funcs = template.FuncMap{
	"param": func(t runs.TrialRow, k string) string {
		s := t.Params[k]
		if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
			return u
		}
		return s
	},
	"metric": func(t runs.TrialRow, k string) (string, error) {
		v, ok := t.Summary[k]
		if !ok {
			return "", nil
		}
		return runs.ValueText(v, 6), nil
	},
	"mv": func(t runs.TrialRow, k string) string { // sort key: "" for NaN and infinities sort last
		v := t.Summary[k]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	},
	"hasMetric": func(t runs.TrialRow, k string) bool { _, ok := t.Summary[k]; return ok },
	"never":     neverText,
	"num":       formatFloat,
	"time": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"dur":   formatDuration,
	"short": func(s string) string { return s[:min(len(s), 12)] },
	"size":  formatBytes,
	"counts": func(c map[string]int) string {
		var parts []string
		for _, k := range sortedKeys(c) {
			parts = append(parts, fmt.Sprintf("%d %s", c[k], k))
		}
		return strings.Join(parts, ", ")
	},
	"tags": func(m map[string]string) string {
		var parts []string
		for _, k := range sortedKeys(m) {
			parts = append(parts, k+"="+m[k])
		}
		return strings.Join(parts, " ")
	},
	"stat":      statText,
	"rungValue": report.RungValue,
	"promoted":  report.PromotedText,
	"joinPoints": func(ps []string) string {
		if len(ps) == 0 {
			return "none"
		}
		return strings.Join(ps, ", ")
	},
	"join":   strings.Join,
	"better": betterText,
	"values": func(c runs.Cell) string {
		if len(c.Values) > 5 {
			return ""
		}
		parts := make([]string, len(c.Values))
		for i, v := range c.Values {
			parts[i] = runs.ValueText(v, 4)
		}
		return strings.Join(parts, ", ")
	},
	"ci": func(c runs.Cell) string {
		if math.IsNaN(c.Lo) {
			return ""
		}
		return "[" + statText(c.Lo) + ", " + statText(c.Hi) + "]"
	},
	"experiments": func(es []IndexEntry) []string {
		return distinct(es, func(e IndexEntry) []string { return []string{e.Run.Experiment} })
	},
	"statuses": func(es []IndexEntry) []string {
		return distinct(es, func(e IndexEntry) []string { return []string{e.Run.Status} })
	},
	"tagList": func(es []IndexEntry) []string {
		return distinct(es, func(e IndexEntry) []string {
			var out []string
			for k, v := range e.Run.Tags {
				out = append(out, k+"="+v)
			}
			return out
		})
	},
	"runDur": func(l runs.RunListing) string {
		if l.Ended.IsZero() {
			return ""
		}
		return formatDuration(l.Ended.Sub(l.Started))
	},
}

// distinct returns the distinct values of f over es, sorted.
func distinct(es []IndexEntry, f func(IndexEntry) []string) []string {
	set := map[string]bool{}
	for _, e := range es {
		for _, v := range f(e) {
			set[v] = true
		}
	}
	return sortedKeys(set)
}

// statText is a statistic for a table: 4 significant digits, "" for NaN
// (too few values), never for Never.
func statText(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return runs.ValueText(v, 4)
}

func betterText(h runs.Headline) string {
	if h.Lower {
		return "lower is better"
	}
	return "higher is better"
}

// renderMarkdown renders a report's Markdown summary as HTML (goldmark,
// GitHub tables; raw HTML in it is not passed through), without the run
// header that the runner puts between two header marks (the page shows
// all of it itself).
func renderMarkdown(path string) (template.HTML, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("html report: %w", err)
	}
	const mark = "<!-- goldstone run header -->\n"
	if i := bytes.Index(b, []byte(mark)); i >= 0 {
		if j := bytes.Index(b[i+len(mark):], []byte(mark)); j >= 0 {
			b = append(b[:i:i], b[i+len(mark)+j+len(mark):]...)
		}
	}
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table)).Convert(b, &out); err != nil {
		return "", fmt.Errorf("html report: render %s: %w", path, err)
	}
	return template.HTML(out.String()), nil
}

// AggregatesMarkdown renders the aggregate tables as Markdown (for
// summary.md): one table per headline metric, the best cell in bold.
func AggregatesMarkdown(aggs []runs.Aggregate) string {
	if len(aggs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(aggregatesIntro + "\n")
	for _, a := range aggs {
		fmt.Fprintf(&b, "\n### %s (%s)\n\n| variant |", report.MarkdownText(a.Metric), betterText(a.Headline))
		for _, s := range a.Settings {
			fmt.Fprintf(&b, " %s |", report.MarkdownText(s))
		}
		b.WriteString(" n | never | mean | sd | 95% CI | median |\n|---|")
		b.WriteString(strings.Repeat("---|", len(a.Settings)+6) + "\n")
		for _, c := range a.Cells {
			cells := []string{report.MarkdownText(c.Variant)}
			for _, s := range c.Settings {
				cells = append(cells, report.MarkdownText(s))
			}
			ci := ""
			if !math.IsNaN(c.Lo) {
				ci = "[" + statText(c.Lo) + ", " + statText(c.Hi) + "]"
			}
			cells = append(cells, strconv.Itoa(c.N), neverText(c), statText(c.Mean), statText(c.SD), ci, statText(c.Median))
			if c.Best {
				for i, x := range cells {
					if x != "" {
						cells[i] = "**" + x + "**"
					}
				}
			}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
	}
	return b.String()
}

// aggregatesIntro says what the aggregate tables hold.
const aggregatesIntro = "Each headline metric over the seeds of each variant and swept setting: n trials, " +
	"how many never reached the threshold (never), mean and standard deviation of the values that did " +
	"(with the 95% t-interval of the mean, cut to the metric's range: steps are never negative), and the median counting never as infinitely many steps. " +
	"Best (bold): the fewest nevers, then the best mean; none when the next best ties (means within 1e-9 of their size, or a 95% interval of their difference over the seeds that holds 0)."

func neverText(c runs.Cell) string { return strconv.Itoa(c.Never) }

func formatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func formatDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
