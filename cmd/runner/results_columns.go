package main

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"goldstone/runs"
)

// resultFixedColumns are the columns of runner results that every trial has.
var resultFixedColumns = []string{"trial", "seq", "name", "status", "error"}

// resultColumns reads --columns: fixed columns, settings and metrics by name.
func resultColumns(spec string, paramKeys, metricKeys map[string]bool) ([]string, error) {
	var cols []string
	for _, c := range strings.Split(spec, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		if err := knownColumn(c, paramKeys, metricKeys); err != nil {
			return nil, usageErr("--columns: %v", err)
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		return nil, usageErr("--columns: no column named")
	}
	return cols, nil
}

// knownColumn checks a column name of runner results.
func knownColumn(c string, paramKeys, metricKeys map[string]bool) error {
	if slices.Contains(resultFixedColumns, c) || paramKeys[c] || metricKeys[c] {
		return nil
	}
	all := append(append(slices.Clone(resultFixedColumns), sortedKeys(paramKeys)...), sortedKeys(metricKeys)...)
	return fmt.Errorf("no column %q%s in this run (its columns: %s)", termText(c), didYouMean(c, all, ""), strings.Join(all, ", "))
}

// resultCell is a row's value in column c: its text and, for a number, the
// number (NaN for none).
func resultCell(r resultRow, c string, paramKeys map[string]bool) (string, float64) {
	switch c {
	case "trial":
		return r.Trial, math.NaN()
	case "seq":
		return fmt.Sprint(r.Seq), float64(r.Seq)
	case "name":
		return r.Name, math.NaN()
	case "status":
		return r.Status, math.NaN()
	case "error":
		return r.Error, math.NaN()
	}
	if paramKeys[c] {
		v := r.Params[c]
		if f, ok := v.(float64); ok {
			return paramText(v), f
		}
		return paramText(v), math.NaN()
	}
	if v, ok := r.Metrics[c]; ok {
		return runs.ValueText(float64(*v), 6), float64(*v)
	}
	return "", math.NaN()
}

// sortResults sorts rows by --sort COLUMN[:desc] (stable; numbers as
// numbers, text as text, a missing or NaN value last either way).
func sortResults(rows []resultRow, paramKeys, metricKeys map[string]bool, spec string) error {
	if spec == "" {
		return nil
	}
	col, dir, _ := strings.Cut(spec, ":")
	desc := false
	switch dir {
	case "", "asc":
	case "desc":
		desc = true
	default:
		return usageErr("--sort %s: want COLUMN, COLUMN:asc or COLUMN:desc", termText(spec))
	}
	if err := knownColumn(col, paramKeys, metricKeys); err != nil {
		return usageErr("--sort: %v", err)
	}
	slices.SortStableFunc(rows, func(a, b resultRow) int {
		at, an := resultCell(a, col, paramKeys)
		bt, bn := resultCell(b, col, paramKeys)
		numeric := col == "seq" || metricKeys[col] || !math.IsNaN(an) || !math.IsNaN(bn)
		var c int
		switch {
		case numeric && math.IsNaN(an) && math.IsNaN(bn):
			return 0
		case numeric && math.IsNaN(an):
			return 1 // last, ascending or not
		case numeric && math.IsNaN(bn):
			return -1
		case numeric:
			c = cmp.Compare(an, bn)
		default:
			switch {
			case at == "" && bt != "":
				return 1 // last, ascending or not
			case bt == "" && at != "":
				return -1
			}
			c = strings.Compare(at, bt)
		}
		if desc {
			return -c
		}
		return c
	})
	return nil
}

// writeResultColumns writes the chosen columns of rows as a table, CSV or
// JSON (objects with those keys).
func writeResultColumns(out io.Writer, format string, ri *runs.RunInfo, rows []resultRow, cols []string, paramKeys map[string]bool) error {
	switch format {
	case "json":
		var objs []map[string]any
		for _, r := range rows {
			o := map[string]any{}
			for _, c := range cols {
				t, n := resultCell(r, c, paramKeys)
				switch {
				case paramKeys[c]:
					o[c] = r.Params[c]
				case r.Metrics[c] != nil:
					o[c] = r.Metrics[c]
				case c == "seq":
					o[c] = n
				default:
					o[c] = t
				}
			}
			objs = append(objs, o)
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(objs)
	case "csv":
		w := csv.NewWriter(out)
		esc := csvText(out)
		head := make([]string, len(cols))
		for i, c := range cols {
			head[i] = esc(c)
		}
		w.Write(head)
		for _, r := range rows {
			rec := make([]string, len(cols))
			for i, c := range cols {
				if _, isMetric := r.Metrics[c]; isMetric && !paramKeys[c] {
					rec[i] = csvMetric(r.Metrics, c)
					continue
				}
				t, _ := resultCell(r, c, paramKeys)
				rec[i] = esc(t)
			}
			w.Write(rec)
		}
		w.Flush()
		return w.Error()
	}
	fmt.Fprintf(out, "run %d of %s (%s, started %s)\n", ri.ID, termText(ri.Experiment), ri.Status, ri.Started.Format("2006-01-02 15:04:05"))
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	for i, c := range cols {
		if i > 0 {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprint(tw, termText(strings.ToUpper(c)))
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		for i, c := range cols {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			t, _ := resultCell(r, c, paramKeys)
			fmt.Fprint(tw, termText(oneLine(t)))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
