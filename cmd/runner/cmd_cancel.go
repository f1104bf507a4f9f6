package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"goldstone/sweep/slurmexec"
)

// cancelOptions are cancel's flags.
type cancelOptions struct {
	run int64
}

var cancelFlags cancelOptions

func init() {
	commands = append(commands, &command{
		name:    "cancel",
		summary: "cancel a Slurm run's queued and running jobs (scancel); the same command that submitted it resumes it: --run ID",
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&cancelFlags.run, "run", 0, "run id (default: the latest run of --experiment)")
		},
		run: func(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
			return runCancel(ctx, g, cancelFlags)
		},
	})
}

// runCancel cancels every job of a Slurm run that still has tasks in the
// queue (its trials jobs and its collect jobs). The running tasks get
// SIGTERM: each saves a checkpoint and records "interrupted". The run is
// marked interrupted; the submitting command resumes it.
func runCancel(ctx context.Context, g *globalOptions, opts cancelOptions) error {
	st, err := g.openDB(ctx, true)
	if err != nil {
		return &exitError{exitUsage, err}
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
	cancelled, status, err := slurmexec.CancelRun(ctx, st, id, o)
	if err != nil {
		return &exitError{exitFailed, err}
	}
	if len(cancelled) == 0 {
		fmt.Fprintf(g.stdout, "run %d (%s): no job of it is queued; nothing to cancel\n", id, status)
		return nil
	}
	fmt.Fprintf(g.stdout, "run %d: cancelled job %s; running trials save a checkpoint and stop; run %d is interrupted: the command that submitted it resumes it\n",
		id, strings.Join(cancelled, ", "), id)
	return nil
}
