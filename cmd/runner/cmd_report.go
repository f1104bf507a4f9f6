package main

import (
	"context"
	"flag"
	"fmt"

	"goldstone/experiment"
	"goldstone/runs"
	"goldstone/sweep"
)

var reportFlags struct {
	run int64
}

func init() {
	commands = append(commands, &command{
		name:    "report",
		summary: "write a run's report again (figures, Markdown, HTML page) from the results it recorded: --run ID",
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&reportFlags.run, "run", 0, "run id (default: the latest run of --experiment)")
		},
		run: runReport,
	})
}

// runReport rebuilds the report of an ended run (sweep.RebuildReport):
// after its report failed or was cut short, its files were removed, or an
// upgrade changed the report's code. Nothing is trained: the report reads
// the trial results the run recorded.
func runReport(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	if g.experiment == "" && reportFlags.run == 0 {
		return usageErr("missing --run ID or --experiment NAME")
	}
	if g.reports == "" {
		return usageErr("--reports is empty: say where the report goes")
	}
	st, err := g.openDB(ctx, true)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("open results database: %w", err)}
	}
	defer st.Close()
	recoverStale(ctx, g, st)
	ri, err := chosenRun(ctx, st, g, reportFlags.run)
	if err != nil {
		return err
	}
	if !runs.Ended(ri.Status) {
		return usageErr("run %d is %s, not ended: run the experiment again to finish it (its report comes with it)", ri.ID, ri.Status)
	}
	e, err := experiment.ExperimentFromResolved(ri.ConfigJSON)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("run %d: recorded configuration: %w", ri.ID, err)}
	}
	if e.Search != nil {
		// The run's trials are its search's points: the waves replayed
		// over the results it recorded.
		if e, err = sweep.SearchWave(ctx, st, ri.ID, e); err != nil {
			return &exitError{exitUsage, err}
		}
	}
	built, err := experiment.Build(ctx, e, e.Trials(), experiment.Env{DataDir: g.dataDir})
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("run %d: %w", ri.ID, err)}
	}
	// No workdir lock: runners share the workdir (the cache's entry locks).
	out, err := sweep.RebuildReport(ctx, st, ri, built, sweep.RunOptions{WorkDir: g.workdir, Jobs: g.jobs, ReportDir: g.reports, Log: g.log}, nil)
	if out == nil {
		out = &sweep.Outcome{RunID: ri.ID}
	}
	if err != nil {
		out.ReportErr = err
	}
	page, err := finishReport(ctx, g, st, e, out)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &exitError{exitFailed, err}
	}
	fmt.Fprintf(g.stdout, "report of run %d (%s): %s (stages: %d ran, %d cached)\n", ri.ID, termText(ri.Experiment), out.ReportPath, out.Ran, out.Cached)
	if page != "" {
		fmt.Fprintf(g.stdout, "html report: %s\n", page)
	}
	return nil
}
