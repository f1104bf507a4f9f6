package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"

	"goldstone/experiment"
	"goldstone/runs"
	"goldstone/sweep"
)

var runFlags struct {
	failFast       bool
	retryFailed    bool
	failOnDiverged bool
	progressMetric string
}

func init() {
	commands = append(commands, &command{
		name:    "run",
		summary: "run or resume an experiment (the default command)",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&runFlags.failFast, "fail-fast", false, "cancel the remaining trials at the first failure")
			fs.BoolVar(&runFlags.retryFailed, "retry-failed", false, "run the failed trials of a finished run again (not the diverged ones: a divergence is deterministic)")
			fs.BoolVar(&runFlags.failOnDiverged, "fail-on-diverged", false, "exit 1 when some trial diverged (by default a diverged trial is a result and the run exits 0)")
			fs.StringVar(&runFlags.progressMetric, "progress-metric", "loss", "the metric the live status line shows per running trial: loss, or any series the trials record (valid_ll, psi, excess, gauge_gap, ...)")
			registerSlurmFlags(fs)
			registerResultFlags(fs)
		},
		run: runRun,
	})
}

func runRun(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	e, err := g.loadExperiment()
	if err != nil {
		return err
	}
	st, err := g.openDB(ctx, false)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("open results database: %w", err)}
	}
	defer st.Close()
	recoverStale(ctx, g, st)
	if sweep.Detached(slurmFlags.executor) && e.Search == nil {
		return runExecutor(ctx, g, e, st, runFlags.retryFailed) // a search's loop runs here (execute)
	}
	prog := newProgress(g, e.Size(), runFlags.progressMetric) // the exact count comes with RunStarted
	defer prog.Close()
	opts, err := withResultOptions(g, sweep.RunOptions{
		WorkDir:     g.workdir,
		DataDir:     g.dataDir,
		Jobs:        g.jobs,
		FailFast:    runFlags.failFast,
		RetryFailed: runFlags.retryFailed,
		Log:         g.log,
		Observer:    prog,
		ReportDir:   g.reports,
		Checkpoint:  g.checkpointPolicy(),
	})
	if err != nil {
		return err
	}
	out, err := execute(ctx, g, st, e, opts) // a search's waves, or the grid
	prog.Close()
	page, rerr := finishReport(ctx, g, st, e, out) // said below
	if err == nil && errors.Is(rerr, context.Canceled) {
		err = rerr // stopped while it wrote the report
	}
	logOutcome(g, e, out, page, err)
	if g.logFormat == "json" {
		g.stdout = io.Discard // JSON only: the outcome is the event above
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			switch {
			case out == nil || out.RunID == 0:
				// Stopped before a run was chosen: nothing to say of one.
			case runs.Ended(out.Status):
				// The trials had ended (or the run was up to date): only
				// its report is missing.
				fmt.Fprintf(g.stdout, "run %d %s: %d of %d trials done; its report was interrupted: run the same command again to write it\n", out.RunID, out.Status, out.Done, out.Trials)
			default:
				fmt.Fprintf(g.stdout, "run %d interrupted: %d of %d trials done; run the same command again to resume\n", out.RunID, out.Done, out.Trials)
			}
			return err
		}
		if out != nil && out.InfraErr != nil {
			// The machine (a locked database, a full disk), not a trial:
			// exit 1, and the same command resumes.
			fmt.Fprintf(g.stdout, "run %d interrupted: %d of %d trials done; run the same command again to resume\n", out.RunID, out.Done, out.Trials)
			return &exitError{exitFailed, err}
		}
		return &exitError{exitUsage, err}
	}
	sayOutcome(g, e, out)
	if out.ReportPath != "" {
		fmt.Fprintf(g.stdout, "report: %s\n", out.ReportPath)
	}
	if page != "" {
		fmt.Fprintf(g.stdout, "html report: %s\n", page)
	}
	if out.DataErr != nil {
		return &exitError{exitUsage, out.DataErr}
	}
	if rerr != nil {
		fmt.Fprintf(g.stdout, "report of run %d failed: %s\n", out.RunID, oneLine(rerr.Error()))
	}
	for _, id := range slices.Sorted(maps.Keys(out.Divergences)) {
		fmt.Fprintf(g.stdout, "  diverged %s: %s\n", id, oneLine(out.Divergences[id]))
	}
	if out.Failed > 0 {
		for _, id := range slices.Sorted(maps.Keys(out.Failures)) {
			fmt.Fprintf(g.stdout, "  failed %s: %s\n", id, oneLine(out.Failures[id]))
		}
		return &exitError{exitFailed, fmt.Errorf("%d of %d trials failed (see 'runner results --experiment %s')", out.Failed, out.Trials, e.Name)}
	}
	if rerr != nil {
		return &exitError{exitFailed, fmt.Errorf("report of run %d: %w (the same command, or 'runner report --run %d', writes it again)", out.RunID, rerr, out.RunID)}
	}
	return divergedExit(out.Diverged, out.Trials, e.Name)
}

// divergedExit is the exit of a run that worked and whose diverged trials
// (n of trials) are its only blemish: nil (exit 0: a divergence is a result
// of the algorithm, reported as such), or exit 1 with --fail-on-diverged.
func divergedExit(n, trials int, experiment string) error {
	if n == 0 || !runFlags.failOnDiverged {
		return nil
	}
	return &exitError{exitFailed, fmt.Errorf("%d of %d trials diverged (--fail-on-diverged; see 'runner results --experiment %s')", n, trials, experiment)}
}

// sayOutcome prints what a run did: up to date (with the run it is the same
// as), or finished or resumed with its counts.
func sayOutcome(g *globalOptions, e *experiment.Experiment, out *sweep.Outcome) {
	switch {
	case out.SameAs:
		fmt.Fprintf(g.stdout, "%s: up to date: same as run %d (%s, %s), an earlier run of this configuration; nothing to run, no new run recorded\n", e.Name, out.RunID, out.Status, out.Counts())
		if out.ReportRebuilt != "" {
			fmt.Fprintf(g.stdout, "its report written again (%s)\n", oneLine(out.ReportRebuilt))
		}
	case out.UpToDate && out.ReportRebuilt != "":
		fmt.Fprintf(g.stdout, "%s: up to date (run %d, %s, %s); report written again (%s)\n", e.Name, out.RunID, out.Status, out.Counts(), oneLine(out.ReportRebuilt))
	case out.UpToDate:
		fmt.Fprintf(g.stdout, "%s: up to date (run %d, %s, %s); nothing to run\n", e.Name, out.RunID, out.Status, out.Counts())
	default:
		verb := "finished"
		if out.Resumed {
			verb = "resumed and finished"
		}
		fmt.Fprintf(g.stdout, "%s: run %d %s: %s; stages: %d ran, %d cached; status %s\n", e.Name, out.RunID, verb, out.Counts(), out.Ran, out.Cached, out.Status)
	}
}
