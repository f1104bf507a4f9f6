package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"goldstone/runs"
)

var resultsFlags struct {
	format  string
	run     int64
	columns string
	sort    string
}

func init() {
	commands = append(commands, &command{
		name:    "results",
		summary: "one row per trial of the latest run: id, status, settings, summary metrics",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&resultsFlags.format, "format", "table", "table, csv or json")
			fs.Int64Var(&resultsFlags.run, "run", 0, "run id (default: the latest run of the experiment)")
			fs.StringVar(&resultsFlags.columns, "columns", "", "the columns to show, comma-separated, in order: trial, seq, name, status, error, any setting or summary metric (default: trial, status, the settings that vary, every metric)")
			fs.StringVar(&resultsFlags.sort, "sort", "", "sort the rows by a column, ascending, or COLUMN:desc; numbers as numbers, a missing or NaN value last (default: enumeration order)")
		},
		run: runResults,
	})
}

// resultRow is one trial in `runner results`.
type resultRow struct {
	Seq    int64  `json:"seq"` // enumeration order, from 1
	Trial  string `json:"trial"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Pruned: where a pruned search stopped the trial's point (status
	// pruned): the rung's steps and its index.
	PrunedAtStep *int                       `json:"pruned_at_step,omitempty"`
	Rung         *int                       `json:"rung,omitempty"`
	Params       map[string]any             `json:"params"`
	Metrics      map[string]*runs.JSONValue `json:"metrics"`       // null: no value (NaN); "+Inf": never reached (runs.Never)
	Log          string                     `json:"log,omitempty"` // the trial's log file
	Outputs      []outputJSON               `json:"outputs"`       // the files its stages wrote in the cache
}

type outputJSON struct {
	Stage  string `json:"stage"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

func runResults(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	if g.experiment == "" && resultsFlags.run == 0 {
		return usageErr("missing --experiment NAME or --run ID")
	}
	switch resultsFlags.format {
	case "table", "csv", "json":
	default:
		return usageErr("--format must be table, csv or json, got %q", resultsFlags.format)
	}
	st, err := runs.OpenReadOnly(ctx, g.db)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("open results database: %w", err)}
	}
	defer st.Close()
	ri, err := chosenRun(ctx, st, g, resultsFlags.run)
	if err != nil {
		return err
	}
	rows, paramKeys, metricKeys, err := resultRows(ctx, st, ri.ID)
	if err != nil {
		return err
	}
	if err := sortResults(rows, paramKeys, metricKeys, resultsFlags.sort); err != nil {
		return err
	}
	if resultsFlags.columns != "" {
		cols, err := resultColumns(resultsFlags.columns, paramKeys, metricKeys)
		if err != nil {
			return err
		}
		return writeResultColumns(g.stdout, resultsFlags.format, ri, rows, cols, paramKeys)
	}
	switch resultsFlags.format {
	case "json":
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "csv":
		return writeResultsCSV(g.stdout, rows, paramKeys, metricKeys)
	default:
		return writeResultsTable(g.stdout, ri, rows, paramKeys, metricKeys)
	}
}

// resultRows reads the trials of run runID in enumeration order, with their
// settings, summary metrics and output files, and the sets of setting and
// metric keys any of them has.
func resultRows(ctx context.Context, st *runs.Store, runID int64) (rows []resultRow, paramKeys, metricKeys map[string]bool, err error) {
	trials, err := st.TrialTable(ctx, runID) // enumeration order
	if err != nil {
		return nil, nil, nil, err
	}
	outs, err := st.Outputs(ctx, runID)
	if err != nil {
		return nil, nil, nil, err
	}
	pruned, err := st.PrunedTrials(ctx, runID)
	if err != nil {
		return nil, nil, nil, err
	}
	outputsOf := map[string][]outputJSON{}
	for _, o := range outs {
		outputsOf[o.Trial] = append(outputsOf[o.Trial], outputJSON{Stage: o.Stage, Path: o.Path(), SHA256: o.SHA256, Bytes: o.Bytes})
	}
	rows = make([]resultRow, 0, len(trials))
	paramKeys, metricKeys = map[string]bool{}, map[string]bool{}
	for _, t := range trials {
		r := resultRow{Seq: t.Seq, Trial: t.ID, Name: t.Name, Status: t.Status, Error: t.Error, Params: map[string]any{}, Metrics: map[string]*runs.JSONValue{},
			Log: t.LogPath, Outputs: outputsOf[t.ID]}
		if r.Outputs == nil {
			r.Outputs = []outputJSON{}
		}
		if p, ok := pruned[t.ID]; ok {
			r.PrunedAtStep, r.Rung = &p.Step, &p.Rung
		}
		for k, v := range t.Params {
			var x any
			if json.Unmarshal([]byte(v), &x) != nil {
				x = v
			}
			r.Params[k] = x
			paramKeys[k] = true
		}
		for k, v := range t.Summary {
			j := runs.JSONValue(v)
			r.Metrics[k] = &j
			metricKeys[k] = true
		}
		rows = append(rows, r)
	}
	return rows, paramKeys, metricKeys, nil
}

// writeResultsCSV writes rows as CSV: trial, status, every setting, every
// metric.
func writeResultsCSV(out io.Writer, rows []resultRow, paramKeys, metricKeys map[string]bool) error {
	w := csv.NewWriter(out)
	esc := csvText(out)
	pk, mk := varyingKeys(rows, paramKeys, true), sortedKeys(metricKeys)
	pr := anyPruned(rows)
	head := []string{"trial", "status"}
	if pr {
		head = append(head, "pruned_at_step", "rung")
	}
	head = append(head, pk...)
	for i := range head {
		head[i] = esc(head[i])
	}
	w.Write(append(head, mk...))
	for _, r := range rows {
		rec := []string{esc(r.Trial), r.Status}
		if pr {
			rec = append(rec, r.prunedText()...)
		}
		for _, k := range pk {
			rec = append(rec, esc(paramText(r.Params[k])))
		}
		for _, k := range mk {
			rec = append(rec, csvMetric(r.Metrics, k))
		}
		w.Write(rec)
	}
	w.Flush()
	return w.Error()
}

// writeResultsTable writes rows as a table for people, under a line naming
// the run: trial, status, the settings that vary, every metric; then each
// failed trial's error on a line of its own.
func writeResultsTable(out io.Writer, ri *runs.RunInfo, rows []resultRow, paramKeys, metricKeys map[string]bool) error {
	fmt.Fprintf(out, "run %d of %s (%s, started %s)\n", ri.ID, termText(ri.Experiment), ri.Status, ri.Started.Format("2006-01-02 15:04:05"))
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	pk, mk := varyingKeys(rows, paramKeys, false), sortedKeys(metricKeys)
	pr := anyPruned(rows)
	head := []string{"TRIAL", "STATUS"}
	if pr {
		head = append(head, "PRUNED_AT_STEP", "RUNG")
	}
	head = append(append(head, pk...), mk...)
	for i, h := range head {
		if i > 0 {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprint(tw, termText(h))
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s", termText(r.Trial), r.Status)
		if pr {
			fmt.Fprintf(tw, "\t%s", strings.Join(r.prunedText(), "\t"))
		}
		for _, k := range pk {
			fmt.Fprintf(tw, "\t%s", termText(paramText(r.Params[k])))
		}
		for _, k := range mk {
			fmt.Fprintf(tw, "\t%s", metricText(r.Metrics, k))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(out, "%s: %s\n", termText(r.Trial), oneLine(r.Error))
		}
	}
	return nil
}

// anyPruned reports whether a pruned search stopped some trial's point.
func anyPruned(rows []resultRow) bool {
	return slices.ContainsFunc(rows, func(r resultRow) bool { return r.PrunedAtStep != nil })
}

// prunedText is the pruned_at_step and rung columns of a row ("" for a
// trial not pruned).
func (r resultRow) prunedText() []string {
	if r.PrunedAtStep == nil {
		return []string{"", ""}
	}
	return []string{fmt.Sprint(*r.PrunedAtStep), fmt.Sprint(*r.Rung)}
}

// varyingKeys lists the setting keys to show: all of them (csv), or only
// those that differ between trials (table), sorted.
func varyingKeys(rows []resultRow, keys map[string]bool, all bool) []string {
	var out []string
	for _, k := range sortedKeys(keys) {
		if all || len(rows) < 2 {
			out = append(out, k)
			continue
		}
		first := paramText(rows[0].Params[k])
		for _, r := range rows[1:] {
			if paramText(r.Params[k]) != first {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

func paramText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// metricText is a metric for people (runs.ValueText: "never" for a
// threshold never reached), "" when the trial has none.
func metricText(m map[string]*runs.JSONValue, k string) string {
	v, ok := m[k]
	if !ok {
		return ""
	}
	return runs.ValueText(float64(*v), 6)
}

// csvMetric writes a missing or NaN value as an empty field, which CSV
// readers (DuckDB, pandas) read as NULL/NaN, keeping the column numeric,
// and never (+Inf) as "inf" (runs.CSVValue).
func csvMetric(m map[string]*runs.JSONValue, k string) string {
	v, ok := m[k]
	if !ok {
		return ""
	}
	return runs.CSVValue(float64(*v))
}
