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
	"context"
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

	"goldstone/internal/atomicfile"
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
	Figures []string
	Summary string // the Markdown summary, "" if none
	Files   []Link
	Outputs []runs.Output
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
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("html report: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || name == "index.html" {
			continue
		}
		ext := strings.ToLower(filepath.Ext(name))
		switch {
		case ext == ".png" || ext == ".svg":
			p.Figures = append(p.Figures, name)
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
	return p, nil
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Write writes the page as dir/index.html. Paths of trial logs and outputs
// outside dir are linked relative to dir.
func Write(dir string, p *Page) (string, error) {
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
	if err := atomicfile.WriteFile(path, b.Bytes()); err != nil {
		return "", fmt.Errorf("html report %s: %w", path, err)
	}
	return path, nil
}

// IndexEntry is one run in reports/index.html; Href is "" when the run has
// no page.
type IndexEntry struct {
	Run  runs.RunListing
	Href string
}

// WriteIndex writes reportsDir/index.html listing every run of the store,
// newest first, linking the runs whose page exists at
// reportsDir/<experiment>/run-<id>/index.html.
func WriteIndex(ctx context.Context, st *runs.Store, reportsDir string) (string, error) {
	list, err := st.ListRuns(ctx, runs.RunFilter{})
	if err != nil {
		return "", err
	}
	var es []IndexEntry
	for i := len(list) - 1; i >= 0; i-- {
		l := list[i]
		e := IndexEntry{Run: l}
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
	if err := atomicfile.WriteFile(path, b.Bytes()); err != nil {
		return "", fmt.Errorf("runs index %s: %w", path, err)
	}
	return path, nil
}

// pageView adds the template helpers that need the page's directory.
type pageView struct {
	*Page
	dir string
}

// Rel links a file path from the page: relative to its directory.
func (v *pageView) Rel(path string) string {
	if path == "" {
		return ""
	}
	if !filepath.IsAbs(path) {
		return filepath.ToSlash(path)
	}
	rel, err := filepath.Rel(v.dir, path)
	if err != nil {
		return "file://" + filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}

// ParamKeys are the parameter columns of the trials table: the variant and
// every key whose value differs between trials (the others are in the
// settings), without "name" (its own column), in order.
func (v *pageView) ParamKeys() []string {
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
	set := map[string]bool{}
	for _, t := range v.Trials {
		for k := range t.Summary {
			set[k] = true
		}
	}
	return sortedKeys(set)
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

// OutputsOf are the outputs recorded for a trial.
func (v *pageView) OutputsOf(trial string) []runs.Output {
	var out []runs.Output
	for _, o := range v.Outputs {
		if o.Trial == trial {
			out = append(out, o)
		}
	}
	return out
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
		return formatFloat(v), nil
	},
	"mv": func(t runs.TrialRow, k string) string { // sort key: "" for NaN and infinities sort last
		v := t.Summary[k]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	},
	"hasMetric": func(t runs.TrialRow, k string) bool { _, ok := t.Summary[k]; return ok },
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
	"runDur": func(l runs.RunListing) string {
		if l.Ended.IsZero() {
			return ""
		}
		return formatDuration(l.Ended.Sub(l.Started))
	},
}

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
