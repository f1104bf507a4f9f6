package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"goldstone/experiment"
	"goldstone/report/figures"
	"goldstone/report/htmlreport"
	"goldstone/runs"
)

var compareFlags struct {
	metrics multiFlag
	out     string
}

func init() {
	commands = append(commands, &command{
		name:     "compare",
		args:     "RUN_A RUN_B [RUN_C...]",
		nargs:    2,
		variadic: true,
		summary:  "several runs on one page: their series overlaid on the same axes, their headline metrics side by side, and the diff of the first against each other",
		flags: func(fs *flag.FlagSet) {
			fs.Var(&compareFlags.metrics, "metric", "a series metric to overlay (repeatable; default: every series the runs share)")
			fs.StringVar(&compareFlags.out, "out", "", "directory of the page (default: <reports>/compare/run-A-vs-B-...)")
		},
		examples: []string{"runner compare 3 5", "runner compare 3 5 7 --metric psi --metric loss"},
		run:      runCompare,
	})
}

// comparedRun is a run being compared: its record and its trials.
type comparedRun struct {
	info   runs.RunListing
	trials []runs.TrialRow
}

// runCompare writes the compare page of several runs: one overlay figure
// per series metric (every trial of every run on the same axes, one colour
// per run and variant, the run's dash), the headline aggregates of every
// run side by side and the diff of the first run against each other.
func runCompare(ctx context.Context, g *globalOptions, _ *flag.FlagSet, args []string) error {
	var ids []int64
	for _, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return usageErr("compare: run id %q is not a positive integer (see 'runner runs')", a)
		}
		if slices.Contains(ids, id) {
			return usageErr("compare: run %d given twice", id)
		}
		ids = append(ids, id)
	}
	if g.reports == "" && compareFlags.out == "" {
		return usageErr("--reports is empty: say where the page goes (--out DIR)")
	}
	st, err := openResults(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	list, err := st.ListRuns(ctx, runs.RunFilter{})
	if err != nil {
		return err
	}
	var cr []comparedRun
	for _, id := range ids {
		i := slices.IndexFunc(list, func(l runs.RunListing) bool { return l.ID == id })
		if i < 0 {
			return usageErr("compare: %s has no run %d (see 'runner runs')", g.db, id)
		}
		trials, err := st.TrialTable(ctx, id)
		if err != nil {
			return err
		}
		cr = append(cr, comparedRun{info: list[i], trials: trials})
	}
	dir := compareFlags.out
	if dir == "" {
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = strconv.FormatInt(id, 10)
		}
		dir = filepath.Join(g.reports, "compare", "run-"+strings.Join(parts, "-vs-"))
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	metrics, err := compareMetrics(ctx, st, ids)
	if err != nil {
		return err
	}
	page := &htmlreport.ComparePage{}
	for _, r := range cr {
		page.Runs = append(page.Runs, r.info)
	}
	for _, m := range metrics {
		f, err := compareFigure(ctx, st, cr, m, dir)
		if err != nil {
			return err
		}
		if f != nil {
			page.Figures = append(page.Figures, *f)
		}
	}
	var per [][]runs.Aggregate
	var fixed []map[string]string
	var pooled []runs.TrialRow
	for _, r := range cr {
		pooled = append(pooled, r.trials...)
		per = append(per, runs.Aggregates(r.trials, experiment.Headline(pipelineOf(r.info.ConfigJSON))))
		fixed = append(fixed, sharedParams(r.trials))
	}
	page.Aggregates = htmlreport.CompareAggregates(ids, per, fixed)
	htmlreport.MarkPartial(page.Aggregates, page.Runs)
	page.SettingDiffs = htmlreport.SettingDiffs(pooled, experiment.Headline(pipelineOf(cr[0].info.ConfigJSON)))
	for _, id := range ids[1:] {
		d, err := st.Diff(ctx, ids[0], id)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		page.Diffs = append(page.Diffs, htmlreport.NewCompareDiff(d))
	}
	path, err := htmlreport.WriteCompare(dir, page)
	if err != nil {
		return err
	}
	for _, r := range cr {
		fmt.Fprintf(g.stdout, "run %d: %s, %s, %d trials%s\n", r.info.ID, termText(r.info.Experiment), r.info.Status, r.info.Trials, noteText(r.info.Note))
	}
	for _, d := range page.Diffs {
		fmt.Fprintf(g.stdout, "run %d vs run %d: %d settings differ, %d metric values differ\n", d.A.ID, d.B.ID, len(d.Settings), len(d.Changed))
	}
	if err := printSettingDiffs(g.stdout, page.SettingDiffs); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "%d series overlaid\ncompare page: %s\n", len(page.Figures), path)
	return nil
}

func noteText(n string) string {
	if n == "" {
		return ""
	}
	return ": " + termText(n)
}

// pipelineOf is the pipeline named by a run's resolved configuration.
func pipelineOf(config string) string {
	var c struct {
		Pipeline string `json:"pipeline"`
	}
	json.Unmarshal([]byte(config), &c)
	return c.Pipeline
}

// compareMetrics are the series to overlay: --metric, else every series
// all the runs recorded except the sparse event counts.
func compareMetrics(ctx context.Context, st *runs.Store, ids []int64) ([]string, error) {
	var common []string
	for i, id := range ids {
		names, err := st.SeriesNames(ctx, id)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			common = names
			continue
		}
		common = slices.DeleteFunc(common, func(n string) bool { return !slices.Contains(names, n) })
	}
	if len(compareFlags.metrics) == 0 {
		return slices.DeleteFunc(common, func(n string) bool { return n == "gauge_rejected" || n == "gauge_flips" }), nil
	}
	for _, m := range compareFlags.metrics {
		if !slices.Contains(common, m) {
			msg := fmt.Sprintf("compare: no series %q in every run compared (they share: %s)", m, strings.Join(common, ", "))
			if s := experiment.Suggest(m, common); s != "" {
				msg += "; did you mean " + s + "?"
			}
			return nil, usageErr("%s", msg)
		}
	}
	return compareFlags.metrics, nil
}

// compareFigure draws one series metric of every trial of every run on the
// same axes (step + 1 on a log axis; the metric on a log axis when every
// value is positive): colour = run and variant, dash = run. It returns
// nil when no run has a point of it.
func compareFigure(ctx context.Context, st *runs.Store, cr []comparedRun, metric, dir string) (*htmlreport.Figure, error) {
	var series []figures.Series
	positive := true
	points, trials := 0, 0
	for _, r := range cr {
		for _, t := range r.trials {
			if !runs.HasResult(t.Status) { // a diverged trial's series too: up to its divergence
				continue
			}
			pts, err := st.Series(ctx, r.info.ID, t.ID, metric)
			if err != nil {
				return nil, err
			}
			if len(pts) == 0 {
				continue
			}
			trials++
			group := fmt.Sprintf("run %d %s", r.info.ID, runs.TrialVariant(t.Params))
			s := figures.Series{Name: strings.TrimSpace(group), Group: group, Style: fmt.Sprintf("run %d", r.info.ID)}
			for _, p := range pts {
				if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
					continue
				}
				positive = positive && p.Value > 0
				s.X = append(s.X, float64(p.Step+1))
				s.Y = append(s.Y, p.Value)
				points++
			}
			series = append(series, s)
		}
	}
	if points == 0 {
		return nil, nil
	}
	name := "compare-" + metric + ".png"
	path := filepath.Join(dir, name)
	var ids []string
	for _, r := range cr {
		ids = append(ids, strconv.FormatInt(r.info.ID, 10))
	}
	err := figures.Curves(path, figures.CurveSpec{
		Title:  fmt.Sprintf("%s of runs %s", metric, strings.Join(ids, ", ")),
		Panels: []figures.Panel{{Title: metric, XLabel: "step + 1", YLabel: metric, LogX: true, LogY: positive, Series: series}},
	})
	if err != nil {
		return nil, err
	}
	axis := "linear"
	if positive {
		axis = "log"
	}
	caption := fmt.Sprintf("%s against the training step + 1 (log axis; %s %s axis) for every trial of runs %s on the same axes: "+
		"colour = run and variant, dash and marker = run (the seeds and settings of one variant share them). %s Trials: %d.",
		metric, metric, axis, strings.Join(ids, ", "), figures.BandsNote, trials)
	if err := figures.AddCaptions(dir, map[string]string{name: caption}); err != nil {
		return nil, err
	}
	return &htmlreport.Figure{File: name, SVG: filepath.Base(figures.SVGPath(path)), Caption: caption}, nil
}

// sharedParams returns the parameter values (as text) that every trial of
// a run has in common: the settings the run fixes.
func sharedParams(trials []runs.TrialRow) map[string]string {
	f := map[string]string{}
	if len(trials) == 0 {
		return f
	}
	for k, v := range trials[0].Params {
		f[k] = v
	}
	for _, t := range trials[1:] {
		for k, v := range f {
			if t.Params[k] != v {
				delete(f, k)
			}
		}
	}
	for k, v := range f {
		f[k] = htmlreport.ParamValue(v)
	}
	return f
}

// printSettingDiffs writes the differences per setting paired by seed
// (htmlreport.SettingDiffs) as a table: a star and the better value where
// the 95% interval of the difference excludes 0, "tie" where it holds 0.
func printSettingDiffs(w io.Writer, ds []htmlreport.SettingDiff) error {
	if len(ds) == 0 {
		return nil
	}
	fmt.Fprintln(w, "differences per setting, paired by seed (B - A, mean and 95% t interval over seeds):")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tA\tB\tVARIANT\tCONTEXT\tMETRIC\tN\tMEAN\t95% CI\tBETTER")
	for _, d := range ds {
		ci := "-"
		if d.N >= 2 {
			ci = fmt.Sprintf("[%.4g, %.4g]", d.Lo, d.Hi)
		}
		better := "tie"
		if !d.Tie {
			better = "* " + termText(d.Better())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.4g\t%s\t%s\n", termText(d.Setting), termText(d.A), termText(d.B),
			termText(d.Variant), termText(d.Context), termText(d.Metric), d.N, d.Mean, ci, better)
	}
	return tw.Flush()
}
