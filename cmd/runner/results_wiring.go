package main

import (
	"context"
	"flag"
	"path/filepath"

	"goldstone/experiment"
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
		page, err = htmlreport.WriteRun(ctx, st, e, out.RunID, out.ReportPath, g.reports)
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
