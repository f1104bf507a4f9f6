package main

import (
	"context"
	"flag"
	"fmt"

	"goldstone/runs"
	"goldstone/sweep/slurmexec"
)

// collectOptions are collect's flags.
type collectOptions struct {
	run int64
}

var collectFlags collectOptions

func init() {
	commands = append(commands, &command{
		name:    "collect",
		summary: "ingest a Slurm run's task results into the database; report and end the run once all are in: --run ID",
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&collectFlags.run, "run", 0, "run id (default: the latest run of --experiment)")
		},
		run: func(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
			return runCollect(ctx, g, collectFlags)
		},
	})
}

func runCollect(ctx context.Context, g *globalOptions, opts collectOptions) error {
	// Never a new database: collect on a host (or a path) that cannot see
	// the run's database must say so, not leave an empty one behind.
	st, err := g.openDB(ctx, true)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("open results database: %w", err)}
	}
	defer st.Close()
	id, err := runArg(ctx, g, st, opts.run)
	if err != nil {
		return err
	}
	o, err := runBackend(ctx, g, st, id, false)
	if err != nil {
		return err
	}
	c, err := slurmexec.Collect(ctx, st, id, o)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	return endCollect(g, id, c)
}

// endCollect says what a collect found and did, and returns its error: a
// failed trial (exit 1).
func endCollect(g *globalOptions, id int64, c *slurmexec.Collection) error {
	fmt.Fprintf(g.stdout, "run %d: %d trials: %s, %d interrupted, %d without a result; %d new result(s) collected\n",
		id, c.Trials, endedText(c.Done, c.Diverged, c.Failed), c.Interrupted, c.Missing, c.Ingested)
	if c.SharedFailed != "" {
		return &exitError{exitFailed, fmt.Errorf("run %d failed: %s; re-run the submitting command to resubmit", id, c.SharedFailed)}
	}
	if c.Finished == nil {
		switch {
		case c.MarkedInterrupted:
			fmt.Fprintf(g.stdout, "run %d interrupted: no task is queued; re-run the submitting command to resubmit the %d trial(s) without a result\n", id, len(c.Pending))
		case c.WaveEnded:
			fmt.Fprintf(g.stdout, "run %d: every trial of its search's wave has a result; the search's loop on the submitting host submits the next wave (run the submitting command again if it was stopped)\n", id)
		default:
			fmt.Fprintf(g.stdout, "not finished: %d trial(s) without a result yet\n", len(c.Pending))
		}
		return nil
	}
	if c.Finished.Already {
		fmt.Fprintf(g.stdout, "run %d had already ended (%s); nothing changed\n", id, c.Finished.Status)
	} else {
		fmt.Fprintf(g.stdout, "run %d %s\n", id, c.Finished.Status)
	}
	printFinished(g, c.Finished)
	if c.Failed > 0 {
		return &exitError{exitFailed, fmt.Errorf("%d of %d trials failed (see 'runner results --run %d')", c.Failed, c.Trials, id)}
	}
	return nil
}

// runBackend returns the options of run id's batch back end (its
// scheduler dispatching when dispatch: a waiting command), or a usage
// error naming the executor that ran it when that is no batch back end.
func runBackend(ctx context.Context, g *globalOptions, st *runs.Store, id int64, dispatch bool) (slurmexec.Options, error) {
	o := slurmexec.Options{WorkDir: g.workdir, Reports: g.reports, Jobs: g.jobs, Log: g.log, OnReport: htmlPage(g)}
	exe, err := st.Executor(ctx, id)
	if err != nil {
		return o, &exitError{exitUsage, err}
	}
	b, ok := slurmexec.Lookup(exe)
	if !ok {
		return o, usageErr("run %d ran with the %s executor: its trials ran in its runner; see 'runner results --run %d' (stop a running one with Ctrl-C where it runs)", id, exe, id)
	}
	if o.Client, err = scheduler(g, b, dispatch); err != nil {
		return o, err
	}
	o.Executor = b.Name
	return o, nil
}

// runArg returns --run, or the latest run of --experiment.
func runArg(ctx context.Context, g *globalOptions, st *runs.Store, run int64) (int64, error) {
	if run > 0 {
		return run, nil
	}
	if g.experiment == "" {
		return 0, usageErr("missing --run ID or --experiment NAME")
	}
	ri, err := st.LatestRun(ctx, g.experiment, runs.KindRun)
	if err != nil {
		return 0, err
	}
	if ri == nil {
		return 0, usageErr("no run of %s in %s", g.experiment, g.db)
	}
	return ri.ID, nil
}
