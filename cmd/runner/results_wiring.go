package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
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
	"goldstone/report/htmlreport"
	"goldstone/runs"
	"goldstone/sweep"
)

// resultFlags are the run flags that describe a run for later: its note and
// tags.
var resultFlags struct {
	note string
	tags multiFlag
}

func registerResultFlags(fs *flag.FlagSet) {
	fs.StringVar(&resultFlags.note, "note", "", "a note stored with the run (shown by 'runner runs')")
	fs.Var(&resultFlags.tags, "tag", "a tag stored with the run: key=value (repeatable; 'runner runs --tag' filters)")
}

// withResultOptions fills the run options of note, tags and per-trial log
// files (<workdir>/logs/<experiment>/run-<id>/<trial>.log).
func withResultOptions(g *globalOptions, opts sweep.RunOptions) (sweep.RunOptions, error) {
	tags, err := parseTags("tag", resultFlags.tags)
	if err != nil {
		return opts, err
	}
	opts.Note, opts.Tags = resultFlags.note, tags
	opts.LogDir = filepath.Join(g.workdir, "logs")
	return opts, nil
}

// finishReport writes the HTML page of the report Execute (or
// RebuildReport) copied, and ends the run's report state: done, or failed
// with the report's first error (its stage, its copy, its page), which it
// returns. A run without a report to write (interrupted, up to date,
// --reports "") is left as it is. When ctx is done (Ctrl-C, SIGTERM) it
// stops within its loops and returns ctx's error, leaving the report state
// as it was ("writing": not current), so the same command, or 'runner
// report', writes the report again.
func finishReport(ctx context.Context, g *globalOptions, st *runs.Store, e *experiment.Experiment, out *sweep.Outcome) (page string, err error) {
	if out == nil {
		return "", nil
	}
	err = out.ReportErr
	if err == nil && out.ReportPath != "" {
		page, err = writeHTMLReport(ctx, g, st, e, out)
	}
	if err != nil && ctx.Err() != nil {
		return "", ctx.Err()
	}
	wctx := context.WithoutCancel(ctx)
	var serr error
	switch {
	case err != nil:
		serr = st.SetReport(wctx, out.RunID, runs.ReportFailed, oneLine(err.Error()))
	case out.ReportPath != "":
		serr = st.SetReport(wctx, out.RunID, runs.ReportDone, "")
	}
	if serr != nil {
		g.log.Error("report state", "run", out.RunID, "err", serr)
	}
	return page, err
}

// writeHTMLReport writes the run's HTML page into its report directory and
// refreshes <reports>/index.html; it returns the page's path.
func writeHTMLReport(ctx context.Context, g *globalOptions, st *runs.Store, e *experiment.Experiment, out *sweep.Outcome) (string, error) {
	if out == nil || out.ReportPath == "" {
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
	env, err := st.Env(ctx, out.RunID)
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
		st.Artifact(out.RunID, "", abs, sum, kind)
		return nil
	}
	record := func(path, kind string) error { return recordSum(path, kind, "") }
	sweeps, err := sweepPlots(ctx, st, e, out)
	if err != nil {
		return "", err
	}
	views, err := report.SearchViews(ctx, st, e, out.RunID, out.ReportPath) // a search's (none for a grid)
	if err != nil {
		return "", err
	}
	for _, p := range append(sweeps, views...) {
		if err := record(p, strings.TrimPrefix(filepath.Ext(p), ".")); err != nil {
			return "", err
		}
	}
	p, err := htmlreport.Build(ctx, st, out.RunID, out.ReportPath, htmlreport.Options{Defaults: defaults, Env: envList(env), Headline: experiment.Headline(e.Pipeline)})
	if err != nil {
		return "", err
	}
	// The trials' logs and small outputs are copied into the report, so
	// that a copied reports folder has no link into the workdir.
	copied, err := htmlreport.Localize(ctx, out.ReportPath, p, htmlreport.MaxLocalOutput)
	if err != nil {
		return "", err
	}
	for _, c := range copied {
		if err := recordSum(c.Path, strings.TrimPrefix(filepath.Ext(c.Path), "."), c.SHA256); err != nil {
			return "", err
		}
	}
	if md, err := annotateSummary(out.ReportPath, p); err != nil {
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
	page, err := htmlreport.Write(out.ReportPath, p)
	if err != nil {
		return "", err
	}
	if err := record(page, "html"); err != nil {
		return "", err
	}
	if err := st.Flush(ctx); err != nil {
		return "", err
	}
	if _, err := htmlreport.WriteIndex(ctx, st, g.reports, experiment.Headline); err != nil {
		return "", err
	}
	return page, nil
}

// envList orders a run's environment for the page: command, module, input
// digests, build settings, then dependencies.
func envList(env map[string]string) []htmlreport.KV {
	var out []htmlreport.KV
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
		for _, k := range sortedKeysOf(env) {
			if rank(k) == r {
				out = append(out, htmlreport.KV{Key: k, Value: env[k]})
			}
		}
	}
	return out
}

func sortedKeysOf(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// logOutcome logs how a run ended as one event (with --log-format json, a
// JSON object a script can read instead of the text summary on stdout).
func logOutcome(g *globalOptions, e *experiment.Experiment, out *sweep.Outcome, page string, err error) {
	if out == nil {
		return
	}
	attrs := []any{"run", out.RunID, "experiment", e.Name, "trials", out.Trials, "done", out.Done,
		"diverged", out.Diverged, "failed", out.Failed, "interrupted", out.Interrupted, "up_to_date", out.UpToDate, "resumed", out.Resumed,
		"stages_ran", out.Ran, "stages_cached", out.Cached, "report", out.ReportPath, "html_report", page}
	if err != nil {
		attrs = append(attrs, "err", err.Error())
	}
	if out.DataErr != nil {
		attrs = append(attrs, "data_err", out.DataErr.Error())
	}
	g.log.Info("result", attrs...)
}

// sweepPlots draws, for a run whose grid sweeps settings other than the
// seed, one figure per summary metric (timings aside): the metric against
// each swept setting, faceted by variant, seed mean ± sd
// (figures.Sweep), into the run's report directory, and returns their
// paths.
func sweepPlots(ctx context.Context, st *runs.Store, e *experiment.Experiment, out *sweep.Outcome) ([]string, error) {
	var swept []string
	for _, ax := range e.Grid {
		if ax.Key != "seed" && len(ax.Values) > 1 {
			swept = append(swept, ax.Key)
		}
	}
	if len(swept) == 0 {
		return nil, nil
	}
	trials, err := st.TrialTable(ctx, out.RunID)
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
			if v, err := strconv.ParseFloat(paramValue(t.Params[k]), 64); err == nil {
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
	for _, m := range sortedKeys(metrics) {
		if err := ctx.Err(); err != nil {
			return paths, err
		}
		spec := figures.SweepSpec{
			Title:    fmt.Sprintf("%s run %d: %s against the swept settings (mean over seeds)", e.Name, out.RunID, m),
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
			p := figures.SweepPoint{Variant: paramValue(t.Params["variant"]), Settings: map[string]string{}, Value: v}
			for _, k := range swept {
				p.Settings[k] = paramValue(t.Params[k])
			}
			spec.Points = append(spec.Points, p)
		}
		if len(spec.Points) == 0 || spec.Constant() {
			continue // nothing to draw, or a constant (l_star; gauge_rounds of equally long runs)
		}
		spec.LogY = logWorthy(spec.Points)
		path := filepath.Join(out.ReportPath, "sweep-"+m+".png")
		if err := figures.Sweep(path, spec); err != nil {
			return paths, err
		}
		paths = append(paths, path, figures.SVGPath(path))
		caps[filepath.Base(path)] = sweepCaption(m, spec, swept)
	}
	if len(caps) > 0 {
		if err := figures.AddCaptions(out.ReportPath, caps); err != nil {
			return paths, err
		}
		paths = append(paths, filepath.Join(out.ReportPath, figures.CaptionsFile))
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

// paramValue is a parameter's JSON text as plain text: strings unquoted.
func paramValue(text string) string {
	var s string
	if err := json.Unmarshal([]byte(text), &s); err == nil {
		return s
	}
	return text
}

// annotateSummary puts a header on the run's copy of the Markdown summary
// (the cached one cannot name the run): run id, experiment, commit, the
// settings that differ from the defaults, the HTML report and every figure.
func annotateSummary(dir string, p *htmlreport.Page) (string, error) {
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
		report.MarkdownText(p.Run.Experiment), p.Run.ID, p.Run.Status, countText(p.Run.Trials, p.Run.Counts),
		p.Run.Started.UTC().Format("2006-01-02 15:04:05Z"), report.MarkdownText(commit), p.Run.ConfigHash)
	if p.Run.Note != "" {
		fmt.Fprintf(&b, "- note: %s\n", report.MarkdownText(p.Run.Note))
	}
	if len(p.Run.Tags) > 0 {
		fmt.Fprintf(&b, "- tags: %s\n", report.MarkdownText(tagText(p.Run.Tags)))
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
	if agg := htmlreport.AggregatesMarkdown(p.Aggregates); agg != "" {
		b.WriteString("\n## Aggregates over seeds\n\n" + agg)
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
