package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"goldstone/sweep/batch"
	"goldstone/sweep/slurmexec"
)

// workerOptions are worker's flags.
type workerOptions struct {
	run     int64
	index   int
	attempt int
	shared  bool
	pack    bool
}

var workerFlags workerOptions

func init() {
	commands = append(commands, &command{
		name:    "worker",
		summary: "run one trial of a submitted run (what a Slurm array task runs): --run ID --index N; with --pack the trials of a packed task",
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&workerFlags.run, "run", 0, "run id")
			fs.IntVar(&workerFlags.index, "index", -1, "task index: the trial's position in the run's manifest ($SLURM_ARRAY_TASK_ID)")
			fs.IntVar(&workerFlags.attempt, "attempt", 1, "submission number of this task")
			fs.BoolVar(&workerFlags.pack, "pack", false, "--index is a task of a packed submission (--slurm-trials-per-task): run the trials its packs.<attempt>.json gives it, one after another")
			fs.BoolVar(&workerFlags.shared, "shared", false, "run the stages every trial shares (the shared job of --slurm-shared-job) instead of a trial: --run ID --attempt N, no --index")
		},
		run: func(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
			return runWorker(ctx, g, workerFlags)
		},
	})
}

// runWorker runs one task. It never opens the results database: the task
// writes its result file under the run's directory.
func runWorker(ctx context.Context, g *globalOptions, opts workerOptions) error {
	if opts.shared {
		return runSharedWorker(ctx, g, opts)
	}
	if opts.run <= 0 || opts.index < 0 {
		return usageErr("worker needs --run ID and --index N")
	}
	d, err := slurmexec.FindDir(g.workdir, g.experiment, opts.run)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	wo := slurmexec.WorkerOptions{Dir: d, Index: opts.index, Attempt: opts.attempt, Restart: -1, Out: g.stdout, Checkpoint: g.checkpointPolicy()}
	var rs []*batch.Result
	if opts.pack {
		rs, err = slurmexec.PackWorker(ctx, wo)
	} else {
		var r *batch.Result
		if r, err = slurmexec.Worker(ctx, wo); r != nil {
			rs = append(rs, r)
		}
	}
	var failed []string
	for _, r := range rs {
		fmt.Fprintf(g.stdout, "run %d task %d (trial %s) attempt %s: %s in %.1fs; result %s\n", r.RunID, r.Index, r.Trial, r.Exec(),
			r.Status, r.Ended.Sub(r.Started).Seconds(), d.Result(r.Index, r.Exec()))
		if r.Status == batch.Failed {
			failed = append(failed, fmt.Sprintf("trial %s failed: %s", r.Trial, r.Error))
		}
	}
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		return err
	case err != nil:
		return &exitError{exitUsage, err}
	case len(failed) > 0:
		return &exitError{exitFailed, errors.New(strings.Join(failed, "; "))}
	}
	return nil
}

// runSharedWorker runs a submission's shared job: the stages every trial
// shares, into the shared cache. It never opens the results database; its
// exit status is what the trials' array waits for (afterok).
func runSharedWorker(ctx context.Context, g *globalOptions, opts workerOptions) error {
	if opts.run <= 0 || opts.index >= 0 {
		return usageErr("worker --shared needs --run ID (and no --index)")
	}
	d, err := slurmexec.FindDir(g.workdir, g.experiment, opts.run)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	r, err := slurmexec.SharedWorker(ctx, slurmexec.SharedOptions{Dir: d, Attempt: opts.attempt, Out: g.stdout})
	if r != nil {
		fmt.Fprintf(g.stdout, "run %d shared stages, submission %d: %s in %.1fs (%d stage(s) ran); result %s\n", r.RunID, r.Attempt,
			r.Status, r.Ended.Sub(r.Started).Seconds(), len(r.Ran), d.SharedResult(r.Attempt))
	}
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		return err
	case err != nil && r != nil:
		return &exitError{exitFailed, fmt.Errorf("shared stages failed: %w", err)}
	case err != nil:
		return &exitError{exitUsage, err}
	}
	return nil
}
