package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"goldstone/report/htmlreport"
	"goldstone/runs"
)

var runsFlags struct {
	format string
	tags   multiFlag
	kind   string
}

func init() {
	commands = append(commands, &command{
		name:    "runs",
		summary: "every run: id, kind, experiment, start, duration, status, trial counts, commit, note, tags",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&runsFlags.format, "format", "table", "table, csv or json")
			fs.Var(&runsFlags.tags, "tag", "only runs with this tag: key=value (repeatable)")
			fs.StringVar(&runsFlags.kind, "kind", "", "only runs of this kind: run or repro")
		},
		run: runRuns,
	})
}

// runRow is one run in `runner runs`.
type runRow struct {
	ID          int64             `json:"id"`
	Kind        string            `json:"kind"`
	Experiment  string            `json:"experiment"`
	Started     *time.Time        `json:"started"`
	Ended       *time.Time        `json:"ended"`
	Seconds     float64           `json:"duration_seconds"`
	Status      string            `json:"status"`
	Trials      int               `json:"trials"`
	TrialCounts map[string]int    `json:"trial_counts"`
	GitCommit   string            `json:"git_commit"`
	GitDirty    bool              `json:"git_dirty"`
	Note        string            `json:"note"`
	Tags        map[string]string `json:"tags"`
	ReportState string            `json:"report_state"` // "", writing, done or failed
	ReportError string            `json:"report_error,omitempty"`
}

// parseTags parses key=value flags.
func parseTags(flagName string, vals []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usageErr("--%s %q: want key=value", flagName, v)
		}
		out[strings.TrimSpace(k)] = val
	}
	return out, nil
}

func checkFormat(f string) error {
	switch f {
	case "table", "csv", "json":
		return nil
	}
	return usageErr("--format must be table, csv or json, got %q", f)
}

// openResults opens an existing results database read-only, for commands
// that only read it (runs, results, diff, export, claims): they write
// nothing to it or beside it, so they work on read-only media and while a
// runner holds the write lock.
func openResults(ctx context.Context, g *globalOptions) (*runs.Store, error) {
	st, err := runs.OpenReadOnly(ctx, g.db)
	if err != nil {
		return nil, &exitError{exitUsage, err}
	}
	return st, nil
}

// openResultsRW opens an existing results database for commands that
// change it (gc).
func openResultsRW(ctx context.Context, g *globalOptions) (*runs.Store, error) {
	st, err := g.openDB(ctx, true)
	if err != nil {
		return nil, &exitError{exitUsage, err}
	}
	return st, nil
}

// chosenRun is the run --run ID names, else the latest ordinary run of
// --experiment; a missing run is a usage error naming the database.
func chosenRun(ctx context.Context, st *runs.Store, g *globalOptions, runID int64) (*runs.RunInfo, error) {
	var ri *runs.RunInfo
	var err error
	if runID != 0 {
		ri, err = st.Run(ctx, runID)
	} else {
		if g.experiment == "" {
			return nil, usageErr("missing --experiment NAME or --run ID")
		}
		ri, err = st.LatestRun(ctx, g.experiment, runs.KindRun)
	}
	if err != nil {
		return nil, &exitError{exitUsage, err}
	}
	if ri == nil {
		return nil, usageErr("%s: no run of experiment %q yet", g.db, g.experiment)
	}
	return ri, nil
}

func runRuns(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	if err := checkFormat(runsFlags.format); err != nil {
		return err
	}
	tags, err := parseTags("tag", runsFlags.tags)
	if err != nil {
		return err
	}
	st, err := openResults(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	list, err := st.ListRuns(ctx, runs.RunFilter{Experiment: g.experiment, Kind: runsFlags.kind, Tags: tags})
	if err != nil {
		return err
	}
	now := time.Now()
	rows := make([]runRow, len(list))
	for i, l := range list {
		r := runRow{ID: l.ID, Kind: l.Kind, Experiment: l.Experiment, Seconds: l.Duration(now).Seconds(), Status: l.Status,
			Trials: l.Trials, TrialCounts: l.Counts, GitCommit: l.GitCommit, GitDirty: l.GitDirty, Note: l.Note, Tags: l.Tags,
			ReportState: l.ReportState, ReportError: l.ReportError}
		if !l.Started.IsZero() {
			r.Started = &list[i].Started
		}
		if !l.Ended.IsZero() {
			r.Ended = &list[i].Ended
		}
		rows[i] = r
	}
	switch runsFlags.format {
	case "json":
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "csv":
		w := csv.NewWriter(g.stdout)
		esc := csvText(g.stdout)
		w.Write([]string{"id", "kind", "experiment", "started", "ended", "duration_seconds", "status", "trials", "done", "failed", "interrupted", "git_commit", "git_dirty", "note", "tags", "report_state", "diverged"})
		for _, r := range rows {
			c := r.TrialCounts
			// pruned: ended with its results (a pruned search's rung), counted as done
			done, failed, diverged := c[runs.StatusDone]+c[runs.StatusCached]+c[runs.StatusPruned], c[runs.StatusFailed], c[runs.StatusDiverged]
			w.Write([]string{strconv.FormatInt(r.ID, 10), r.Kind, esc(r.Experiment), csvTime(r.Started), csvTime(r.Ended),
				strconv.FormatFloat(r.Seconds, 'f', 3, 64), r.Status, strconv.Itoa(r.Trials),
				strconv.Itoa(done), strconv.Itoa(failed), strconv.Itoa(r.Trials - done - failed - diverged),
				esc(r.GitCommit), strconv.FormatBool(r.GitDirty), esc(r.Note), esc(htmlreport.TagText(r.Tags)), r.ReportState, strconv.Itoa(diverged)})
		}
		w.Flush()
		return w.Error()
	}
	tw := tabwriter.NewWriter(g.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tKIND\tEXPERIMENT\tSTARTED\tDURATION\tSTATUS\tTRIALS\tCOMMIT\tNOTE\tTAGS")
	for _, r := range rows {
		started := ""
		if r.Started != nil {
			started = r.Started.Local().Format("2006-01-02 15:04")
		}
		commit := r.GitCommit[:min(len(r.GitCommit), 10)]
		if r.GitDirty {
			commit += "+dirty"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Kind, termText(r.Experiment), started,
			shortDuration(time.Duration(r.Seconds*float64(time.Second))), r.Status, htmlreport.CountText(r.Trials, r.TrialCounts), termText(commit), oneLine(r.Note), termText(htmlreport.TagText(r.Tags)))
	}
	return tw.Flush()
}

func csvTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func shortDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
