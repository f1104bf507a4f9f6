package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"strconv"
	"text/tabwriter"

	"goldstone/runs"
)

var diffFlags struct {
	format string
	all    bool
}

func init() {
	commands = append(commands, &command{
		name:    "diff",
		args:    "RUN_A RUN_B",
		nargs:   2,
		summary: "the settings that differ between two runs and every summary metric of their trials side by side",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&diffFlags.format, "format", "table", "table, csv or json")
			fs.BoolVar(&diffFlags.all, "all", false, "also list metrics that are equal in both runs (table)")
		},
		run: runDiff,
	})
}

type diffJSON struct {
	A        int64            `json:"run_a"`
	B        int64            `json:"run_b"`
	Settings []settingDiff    `json:"settings"`
	Metrics  []metricDiffJSON `json:"metrics"`
	OnlyA    []string         `json:"only_in_a"`
	OnlyB    []string         `json:"only_in_b"`
}

type settingDiff struct {
	Key string `json:"key"`
	A   any    `json:"a"`
	B   any    `json:"b"`
}

// metricDiffJSON is one metric in two runs: values as every JSON file of
// the project writes them (runs.JSONValue: null for no value, "+Inf" for
// never); a and b are absent when the trial lacks the metric.
type metricDiffJSON struct {
	Trial  string          `json:"trial"`
	Metric string          `json:"metric"`
	A      *runs.JSONValue `json:"a"`
	B      *runs.JSONValue `json:"b"`
	Delta  runs.JSONValue  `json:"delta"`
}

func runDiff(ctx context.Context, g *globalOptions, _ *flag.FlagSet, args []string) error {
	if err := checkFormat(diffFlags.format); err != nil {
		return err
	}
	var ids [2]int64
	for i, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return usageErr("diff: run id %q is not a positive integer (see 'runner runs')", a)
		}
		ids[i] = id
	}
	st, err := openResults(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := st.Diff(ctx, ids[0], ids[1])
	if err != nil {
		return &exitError{exitUsage, err}
	}
	switch diffFlags.format {
	case "json":
		out := diffJSON{A: ids[0], B: ids[1], Settings: []settingDiff{}, Metrics: []metricDiffJSON{}, OnlyA: nonNil(d.OnlyA), OnlyB: nonNil(d.OnlyB)}
		for _, s := range d.Settings {
			out.Settings = append(out.Settings, settingDiff{s.Key, jsonValue(s.A), jsonValue(s.B)})
		}
		for _, m := range d.Metrics {
			j := metricDiffJSON{Trial: m.Trial, Metric: m.Metric, Delta: runs.JSONValue(m.Delta())}
			if m.InA {
				j.A = jsonFloat(m.A)
			}
			if m.InB {
				j.B = jsonFloat(m.B)
			}
			out.Metrics = append(out.Metrics, j)
		}
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "csv":
		w := csv.NewWriter(g.stdout)
		esc := csvText(g.stdout)
		w.Write([]string{"kind", "trial", "name", "a", "b", "delta"})
		for _, s := range d.Settings {
			w.Write([]string{"setting", "", esc(s.Key), esc(s.A), esc(s.B), ""})
		}
		for _, m := range d.Metrics {
			w.Write([]string{"metric", esc(m.Trial), esc(m.Metric), csvFloat(m.A, m.InA), csvFloat(m.B, m.InB), csvFloat(m.Delta(), m.InA && m.InB)})
		}
		for _, t := range d.OnlyA {
			w.Write([]string{"only_a", esc(t), "", "", "", ""})
		}
		for _, t := range d.OnlyB {
			w.Write([]string{"only_b", esc(t), "", "", "", ""})
		}
		w.Flush()
		return w.Error()
	}
	fmt.Fprintf(g.stdout, "run %d (%s, %s) vs run %d (%s, %s)\n", d.A.ID, termText(d.A.Experiment), d.A.Status, d.B.ID, termText(d.B.Experiment), d.B.Status)
	if d.A.GitCommit != d.B.GitCommit || d.A.GitDirty != d.B.GitDirty {
		fmt.Fprintf(g.stdout, "commit: %s -> %s\n", commitText(d.A), commitText(d.B))
	}
	tw := tabwriter.NewWriter(g.stdout, 2, 4, 2, ' ', 0)
	if len(d.Settings) == 0 {
		fmt.Fprintln(g.stdout, "settings: identical")
	} else {
		fmt.Fprintln(tw, "SETTING\tRUN "+strconv.FormatInt(d.A.ID, 10)+"\tRUN "+strconv.FormatInt(d.B.ID, 10))
		for _, s := range d.Settings {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", termText(s.Key), termText(orDash(s.A)), termText(orDash(s.B)))
		}
		tw.Flush()
	}
	fmt.Fprintln(g.stdout)
	fmt.Fprintln(tw, "TRIAL\tMETRIC\tRUN "+strconv.FormatInt(d.A.ID, 10)+"\tRUN "+strconv.FormatInt(d.B.ID, 10)+"\tDELTA")
	equal := 0
	for _, m := range d.Metrics {
		same := m.InA && m.InB && (m.A == m.B || math.IsNaN(m.A) && math.IsNaN(m.B))
		if same && !diffFlags.all {
			equal++
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termText(m.Trial), termText(m.Metric), tableFloat(m.A, m.InA), tableFloat(m.B, m.InB), tableFloat(m.Delta(), m.InA && m.InB && !math.IsNaN(m.Delta())))
	}
	tw.Flush()
	if equal > 0 {
		fmt.Fprintf(g.stdout, "(%d metric values equal in both runs not shown; --all shows them)\n", equal)
	}
	for _, t := range d.OnlyA {
		fmt.Fprintf(g.stdout, "only in run %d: %s\n", d.A.ID, termText(t))
	}
	for _, t := range d.OnlyB {
		fmt.Fprintf(g.stdout, "only in run %d: %s\n", d.B.ID, termText(t))
	}
	return nil
}

func commitText(r runs.RunInfo) string {
	c := termText(r.GitCommit[:min(len(r.GitCommit), 10)])
	if c == "" {
		c = "(none)"
	}
	if r.GitDirty {
		c += "+dirty"
	}
	return c
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// jsonValue decodes a JSON text for re-encoding; "" (absent) is null.
func jsonValue(s string) any {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func jsonFloat(v float64) *runs.JSONValue {
	j := runs.JSONValue(v)
	return &j
}

// csvFloat writes NaN and absent values as an empty field, never as "inf"
// (runs.CSVValue).
func csvFloat(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return runs.CSVValue(v)
}

// tableFloat is a value for people: "never" for a threshold never reached
// (runs.ValueText), "-" when absent or, for a delta, without a size.
func tableFloat(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return runs.ValueText(v, 6)
}
