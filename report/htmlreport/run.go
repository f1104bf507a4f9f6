package htmlreport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"goldstone/experiment"
	"goldstone/internal/atomicfile"
	"goldstone/internal/fault"
	"goldstone/pipeline"
	"goldstone/report"
	"goldstone/report/figures"
	"goldstone/runs"
)

// WriteRun writes the HTML page of run runID of experiment e into its
// report directory dir (where the report stage's output was copied):
// the sweep figures of the settings its grid sweeps, the page with the
// trials' logs and small outputs copied beside it, the run header of its
// Markdown summary; every file is recorded as an artifact of the run. It
// then refreshes the index of all reports under reportsRoot and returns
// the page's path ("" when dir is "").
func WriteRun(ctx context.Context, st *runs.Store, e *experiment.Experiment, runID int64, dir, reportsRoot string) (string, error) {
	if dir == "" {
		return "", nil
	}
	defaults := map[string]string{}
	for k, v := range experiment.Defaults(e.Pipeline) {
		b, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("html report: default of %s: %w", k, err)
		}
		defaults["settings."+k] = string(b)
	}
	env, err := st.Env(ctx, runID)
	if err != nil {
		return "", err
	}
	// Files written here are the run's report files too (gc removes them
	// with the others); recordSum takes a digest already known ("": the
	// file is hashed).
	recordSum := func(path, kind, sum string) error {
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		if sum == "" {
			if sum, err = pipeline.Digest(ctx, abs); err != nil {
				return err
			}
		}
		st.Artifact(runID, "", abs, sum, kind)
		return nil
	}
	record := func(path, kind string) error { return recordSum(path, kind, "") }
	sweeps, err := sweepPlots(ctx, st, e, runID, dir)
	if err != nil {
		return "", err
	}
	views, err := report.SearchViews(ctx, st, e, runID, dir) // a search's (none for a grid)
	if err != nil {
		return "", err
	}
	for _, p := range append(sweeps, views...) {
		if err := record(p, strings.TrimPrefix(filepath.Ext(p), ".")); err != nil {
			return "", err
		}
	}
	p, err := Build(ctx, st, runID, dir, Options{Defaults: defaults, Env: envList(env), Headline: experiment.Headline(e.Pipeline)})
	if err != nil {
		return "", err
	}
	if p.Rungs, err = report.LoadSearchRungs(ctx, st, e, runID); err != nil { // a pruned search's
		return "", err
	}
	if p.Rungs != nil {
		p.RungsObjective, p.RungsMaximize = e.Search.Objective, e.Search.Maximize()
		p.RungsIntro = report.SearchRungsIntro(p.RungsObjective, p.RungsMaximize)
	}
	// The trials' logs and small outputs are copied into the report, so
	// that a copied reports folder has no link into the workdir.
	copied, err := Localize(ctx, dir, p, MaxLocalOutput)
	if err != nil {
		return "", err
	}
	for _, c := range copied {
		if err := recordSum(c.Path, strings.TrimPrefix(filepath.Ext(c.Path), "."), c.SHA256); err != nil {
			return "", err
		}
	}
	if md, err := annotateSummary(dir, p); err != nil {
		return "", err
	} else if md != "" {
		if err := record(md, "md"); err != nil {
			return "", err
		}
	}
	fault.Point("report:page")
	if err := ctx.Err(); err != nil {
		return "", err
	}
	page, err := Write(dir, p)
	if err != nil {
		return "", err
	}
	if err := record(page, "html"); err != nil {
		return "", err
	}
	if err := st.Flush(ctx); err != nil {
		return "", err
	}
	if _, err := WriteIndex(ctx, st, reportsRoot, experiment.Headline); err != nil {
		return "", err
	}
	return page, nil
}

// envList orders a run's environment for the page: command, module, input
// digests, build settings, then dependencies.
func envList(env map[string]string) []KV {
	var out []KV
	rank := func(k string) int {
		switch {
		case k == runs.EnvCommand:
			return 0
		case k == runs.EnvModule:
			return 1
		case len(k) > 6 && k[:6] == "input ":
			return 2
		case len(k) > 6 && k[:6] == runs.EnvBuild:
			return 3
		}
		return 4
	}
	for r := range 5 {
		for _, k := range slices.Sorted(maps.Keys(env)) {
			if rank(k) == r {
				out = append(out, KV{Key: k, Value: env[k]})
			}
		}
	}
	return out
}

// sweepPlots draws, for a run whose grid sweeps settings other than the
// seed, one figure per summary metric (timings aside): the metric against
// each swept setting, faceted by variant, seed mean ± sd
// (figures.Sweep), into the run's report directory, and returns their
// paths.
func sweepPlots(ctx context.Context, st *runs.Store, e *experiment.Experiment, runID int64, dir string) ([]string, error) {
	var swept []string
	for _, ax := range e.Grid {
		if ax.Key != "seed" && len(ax.Values) > 1 {
			swept = append(swept, ax.Key)
		}
	}
	if len(swept) == 0 {
		return nil, nil
	}
	trials, err := st.TrialTable(ctx, runID)
	if err != nil {
		return nil, err
	}
	metrics := map[string]bool{}
	for _, t := range trials {
		for m := range t.Summary {
			if !strings.HasSuffix(m, "_seconds") {
				metrics[m] = true
			}
		}
	}
	logX := map[string]bool{}
	for _, k := range swept {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, t := range trials {
			if v, err := strconv.ParseFloat(ParamValue(t.Params[k]), 64); err == nil {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		logX[k] = lo > 0 && hi/lo >= 10
	}
	var variants []string // one colour per variant in every sweep figure
	for _, v := range e.Variants {
		variants = append(variants, v.Name)
	}
	var paths []string
	caps := map[string]string{}
	for _, m := range slices.Sorted(maps.Keys(metrics)) {
		if err := ctx.Err(); err != nil {
			return paths, err
		}
		spec := figures.SweepSpec{
			Title:    fmt.Sprintf("%s run %d: %s against the swept settings (mean over seeds)", e.Name, runID, m),
			Metric:   m,
			Settings: swept,
			LogX:     logX,
			Variants: variants,
		}
		for _, t := range trials {
			v, ok := t.Summary[m]
			if !ok || !runs.HasResult(t.Status) {
				continue
			}
			p := figures.SweepPoint{Variant: ParamValue(t.Params["variant"]), Settings: map[string]string{}, Value: v}
			for _, k := range swept {
				p.Settings[k] = ParamValue(t.Params[k])
			}
			spec.Points = append(spec.Points, p)
		}
		if len(spec.Points) == 0 || spec.Constant() {
			continue // nothing to draw, or a constant (l_star; gauge_rounds of equally long runs)
		}
		spec.LogY = logWorthy(spec.Points)
		path := filepath.Join(dir, "sweep-"+m+".png")
		if err := figures.Sweep(path, spec); err != nil {
			return paths, err
		}
		paths = append(paths, path, figures.SVGPath(path))
		caps[filepath.Base(path)] = sweepCaption(m, spec, swept)
	}
	if len(caps) > 0 {
		if err := figures.AddCaptions(dir, caps); err != nil {
			return paths, err
		}
		paths = append(paths, filepath.Join(dir, figures.CaptionsFile))
	}
	return paths, nil
}

// logWorthy reports whether a sweep figure's metric goes on a log axis:
// its finite values are all positive and span three decades or more (on
// a linear axis a trial that diverged to 1e100 flattens every other line
// to zero).
func logWorthy(points []figures.SweepPoint) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range points {
		if !math.IsInf(p.Value, 0) && !math.IsNaN(p.Value) {
			lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
		}
	}
	return lo > 0 && hi/lo >= 1e3
}

// sweepCaption says what a sweep figure shows and which trials.
func sweepCaption(metric string, spec figures.SweepSpec, swept []string) string {
	var variants []string
	never, perPoint := 0, map[string]int{}
	for _, p := range spec.Points {
		if !slices.Contains(variants, p.Variant) {
			variants = append(variants, p.Variant)
		}
		if runs.IsNever(p.Value) {
			never++
		}
		key := p.Variant
		for _, s := range swept {
			key += "\x00" + p.Settings[s]
		}
		perPoint[key]++
	}
	most := 0
	for _, n := range perPoint {
		most = max(most, n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s against each swept setting (%s; one panel each), every variant on the same axes: colour = variant", metric, strings.Join(swept, ", "))
	if len(swept) > 1 {
		b.WriteString(", dash and marker = the other swept settings")
	}
	b.WriteString(". ")
	if spec.LogY {
		fmt.Fprintf(&b, "%s on a log axis (its values span three decades or more). ", metric)
	}
	if most <= figures.SeedPoints {
		b.WriteString("The line joins the means over seeds; each seed's value is a hollow dot. ")
	} else {
		b.WriteString("The line joins the means over seeds; the error bars are ± one standard deviation over seeds (not below zero for a metric that is never negative). ")
	}
	if never > 0 {
		fmt.Fprintf(&b, "%d trials never reached the threshold and are left out of the means (the aggregate tables count them). ", never)
	}
	fmt.Fprintf(&b, "Trials: %d (variants %s; up to %d per point).", len(spec.Points), strings.Join(variants, ", "), most)
	return b.String()
}

// ParamValue is a parameter's JSON text as plain text: strings unquoted.
func ParamValue(text string) string {
	var s string
	if err := json.Unmarshal([]byte(text), &s); err == nil {
		return s
	}
	return text
}

// annotateSummary puts a header on the run's copy of the Markdown summary
// (the cached one cannot name the run): run id, experiment, commit, the
// settings that differ from the defaults, the HTML report and every figure.
func annotateSummary(dir string, p *Page) (string, error) {
	name := p.Summary
	if name == "" {
		return "", nil
	}
	path := filepath.Join(dir, name)
	body, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	const mark = "<!-- goldstone run header -->\n"
	if i := bytes.Index(body, []byte(mark+"\n")); i >= 0 {
		if j := bytes.Index(body[i+len(mark):], []byte(mark)); j >= 0 {
			body = body[i+len(mark)+j+len(mark):]
		}
	}
	var b strings.Builder
	b.WriteString(mark + "\n")
	commit := p.Run.GitCommit
	if commit == "" {
		commit = "(not a git checkout)"
	} else if p.Run.GitDirty {
		commit += " (dirty)"
	}
	// Everything recorded by a person (note, tags, setting values) is
	// escaped: the file is rendered as HTML by Markdown viewers.
	fmt.Fprintf(&b, "# %s, run %d\n\n- status: %s, %s\n- started %s\n- commit: %s\n- config hash: %s\n",
		report.MarkdownText(p.Run.Experiment), p.Run.ID, p.Run.Status, CountText(p.Run.Trials, p.Run.Counts),
		p.Run.Started.UTC().Format("2006-01-02 15:04:05Z"), report.MarkdownText(commit), p.Run.ConfigHash)
	if p.Run.Note != "" {
		fmt.Fprintf(&b, "- note: %s\n", report.MarkdownText(p.Run.Note))
	}
	if len(p.Run.Tags) > 0 {
		fmt.Fprintf(&b, "- tags: %s\n", report.MarkdownText(TagText(p.Run.Tags)))
	}
	b.WriteString("- HTML report: [index.html](index.html)\n\nSettings that differ from the defaults:\n\n")
	if len(p.Diff) == 0 {
		b.WriteString("(none)\n")
	}
	for _, s := range p.Diff {
		def := "no default"
		if s.HasDefault {
			def = "default " + report.MarkdownCode(s.Default)
		}
		fmt.Fprintf(&b, "- %s = %s (%s)\n", report.MarkdownCode(s.Key), report.MarkdownCode(s.Value), def)
	}
	if agg := AggregatesMarkdown(p.Aggregates); agg != "" {
		b.WriteString("\n## Aggregates over seeds\n\n" + agg)
	}
	if rungs := report.SearchRungsMarkdown(p.RungsObjective, p.RungsMaximize, p.Rungs); rungs != "" {
		b.WriteString("\n## Search rungs\n\n" + rungs)
	}
	b.WriteString("\nFigures:\n")
	for _, f := range p.Figures {
		fmt.Fprintf(&b, "\n![%s](%s)\n", f.File, f.File)
		if f.Caption != "" || f.SVG != "" {
			line := "*" + f.File + "*"
			if f.SVG != "" {
				line += " ([SVG](" + f.SVG + "))"
			}
			if f.Caption != "" {
				line += ": " + report.MarkdownText(f.Caption)
			}
			b.WriteString("\n" + line + "\n")
		}
	}
	b.WriteString("\n" + mark + "\n")
	b.Write(body)
	if err := atomicfile.WriteFile(path, []byte(b.String())); err != nil {
		return "", err
	}
	return path, nil
}

// TagText is a run's tags as key=value pairs in key order.
func TagText(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}

// CountText is "4/4" when every trial is done, else "2/4 (1 diverged, 1
// failed)".
func CountText(total int, c map[string]int) string {
	done := c[runs.StatusDone] + c[runs.StatusCached] + c[runs.StatusPruned] // pruned: ended with its results
	s := fmt.Sprintf("%d/%d", done, total)
	var extra []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		if k != runs.StatusDone && k != runs.StatusCached && c[k] > 0 {
			extra = append(extra, fmt.Sprintf("%d %s", c[k], k))
		}
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}
