package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"goldstone/internal/slurm"
	"goldstone/sweep/batch"
	"goldstone/sweep/slurmexec"
)

// statusOptions are status's flags.
type statusOptions struct {
	run   int64
	watch bool
}

var statusFlags statusOptions

func init() {
	commands = append(commands, &command{
		name:    "status",
		summary: "a Slurm run's trials: pending/running/done/diverged/failed from the result files, the queue as a hint: --run ID [--watch]",
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&statusFlags.run, "run", 0, "run id (default: the latest run of --experiment)")
			fs.BoolVar(&statusFlags.watch, "watch", false, "repeat every 30 s, collecting the results that arrived (as 'runner collect'), until the run has ended or nothing is pending or running")
		},
		run: func(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
			return runStatus(ctx, g, statusFlags)
		},
	})
}

// runStatus prints a batch run's trials (and with watch collects until it
// ends).
func runStatus(ctx context.Context, g *globalOptions, opts statusOptions) error {
	st, err := g.openDB(ctx, true)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer st.Close()
	id, err := runArg(ctx, g, st, opts.run)
	if err != nil {
		return err
	}
	o, err := runBackend(ctx, g, st, id, opts.watch)
	if err != nil {
		return err
	}
	p := &slurm.Poller{Client: o.Client}
	for {
		if opts.watch {
			// A watching status collects on this host, as a waiting
			// submit does: the results of a detached run arrive.
			c, err := slurmexec.Collect(ctx, st, id, o)
			if err != nil {
				return &exitError{exitFailed, err}
			}
			if c.Finished != nil || c.MarkedInterrupted || c.SharedFailed != "" {
				if s, err := slurmexec.Status(ctx, st, id, g.workdir, p); err == nil {
					printStatus(g, s)
				}
				return endCollect(g, id, c)
			}
		}
		s, err := slurmexec.Status(ctx, st, id, g.workdir, p)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		printStatus(g, s)
		if !opts.watch || s.Counts[batch.Pending]+s.Counts[batch.Running] == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(30 * time.Second):
		}
	}
}

func printStatus(g *globalOptions, s *slurmexec.RunStatus) {
	w := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "INDEX\tTRIAL\tNAME\tSTATE\tATTEMPT\tQUEUE\tERROR")
	for _, t := range s.Trials {
		q := t.Queue
		if q == "" {
			q = "-"
		}
		errText := oneLine(t.Error)
		if r := []rune(errText); len(r) > 60 {
			errText = string(r[:57]) + "..."
		}
		state := t.State
		if t.Ended != "" {
			state += " (" + t.Ended + ")"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", t.Index, t.Trial, termText(t.Name), state, t.Attempt, q, errText)
	}
	w.Flush()
	var parts []string
	for _, k := range []string{batch.Done, batch.Diverged, batch.Failed, batch.Interrupted, batch.Running, batch.Pending, batch.Missing} {
		if n := s.Counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	fmt.Fprintf(g.stdout, "run %d of %s (%s): %d trials: %s; %d collected into the database\n",
		s.Run.ID, termText(s.Run.Experiment), s.Run.Status, len(s.Trials), strings.Join(parts, ", "), s.Collected)
	printShared(g, s.Shared)
	printWave(g, s)
	switch {
	case s.QueueErr != nil:
		fmt.Fprintf(g.stdout, "queue: squeue failed (%v); states are from the result files only\n", s.QueueErr)
	case s.QueueJob != "":
		fmt.Fprintf(g.stdout, "queue: job %s asked at %s\n", s.QueueJob, s.QueueAt.Format("15:04:05"))
	}
	why := map[string]int{}
	for _, t := range s.Trials {
		if t.Ended != "" {
			why[t.Ended]++
		}
	}
	if why["OUT_OF_MEMORY"] > 0 {
		fmt.Fprintf(g.stdout, "%d task(s) ran out of memory: resubmit with more (--slurm-mem)\n", why["OUT_OF_MEMORY"])
	}
	if why["TIMEOUT"] > 0 {
		fmt.Fprintf(g.stdout, "%d task(s) reached their time limit: resubmitting continues them from their checkpoints (or raise --slurm-time)\n", why["TIMEOUT"])
	}
	if why["NODE_FAIL"]+why["PREEMPTED"] > 0 {
		fmt.Fprintf(g.stdout, "%d task(s) lost to a node failure or preemption: resubmitting continues them from their checkpoints\n", why["NODE_FAIL"]+why["PREEMPTED"])
	}
	if s.AcctErr != nil && s.Counts[batch.Missing] > 0 {
		fmt.Fprintf(g.stdout, "why tasks are missing is unknown: sacct failed (%v)\n", oneLine(s.AcctErr.Error()))
	}
	if s.Counts[batch.Missing]+s.Counts[batch.Interrupted] > 0 && s.Counts[batch.Pending]+s.Counts[batch.Running] == 0 {
		fmt.Fprintln(g.stdout, "to resubmit the trials without a result, run the submitting command again")
	}
}

// printShared says where the latest submission's shared job (the stages
// every trial shares, run before the array) is.
func printShared(g *globalOptions, sh *slurmexec.SharedState) {
	if sh == nil {
		return
	}
	state := strings.ToLower(sh.State)
	if sh.Reason != "" && sh.Reason != "None" {
		state += ": " + oneLine(sh.Reason)
	}
	fmt.Fprintf(g.stdout, "shared stages: job %s (submission %d) %s; log: %s\n", sh.Job, sh.Attempt, state, sh.Log)
}
