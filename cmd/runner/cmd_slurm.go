package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"goldstone/internal/slurm"
	"goldstone/runs"
	"goldstone/stages"
	"goldstone/sweep"
	"goldstone/sweep/slurmexec"
)

// slurmFlags are run's executor flags; each overrides the experiment's
// [experiments.NAME.slurm] table.
var slurmFlags struct {
	executor     string
	partition    string
	account      string
	time         string
	maxParallel  int
	extra        string
	noCollectJob bool
}

// registerSlurmFlags adds run's executor flags.
func registerSlurmFlags(fs *flag.FlagSet) {
	fs.StringVar(&slurmFlags.executor, "executor", "local", "where trials run: local, or slurm (one array job; see README 'Running on a Slurm cluster')")
	fs.StringVar(&slurmFlags.partition, "slurm-partition", "", "Slurm partition (sbatch --partition)")
	fs.StringVar(&slurmFlags.account, "slurm-account", "", "Slurm account (sbatch --account)")
	fs.StringVar(&slurmFlags.time, "slurm-time", "", "time limit per trial, HH:MM:SS or D-HH:MM:SS (sbatch --time)")
	fs.IntVar(&slurmFlags.maxParallel, "slurm-max-parallel", -1, "trials running at once on the cluster (--array=...%K); 0: no limit; -1: the experiment's slurm.max_parallel, else no limit")
	fs.StringVar(&slurmFlags.extra, "slurm-extra", "", "further sbatch arguments, e.g. '--qos=long --constraint=avx2'")
	fs.BoolVar(&slurmFlags.noCollectJob, "slurm-no-collect-job", false, "submit no dependent collect job; run 'runner collect --run ID' on this host instead")
}

// slurmOptions resolves the executor options: flags over the experiment's
// slurm table.
func slurmOptions(g *globalOptions, e *stages.Experiment, retryFailed bool) (slurmexec.Options, error) {
	sc := e.Slurm
	o := slurmexec.Options{DB: g.db, WorkDir: g.workdir, DataDir: g.dataDir, Reports: g.reports, ConfigPath: g.config,
		Sets: g.sets, Jobs: g.jobs, Partition: sc.Partition, Account: sc.Account, Time: sc.Time, MaxParallel: sc.MaxParallel,
		CPUs: sc.CPUs, MemMB: sc.MemMB, NoCollectJob: slurmFlags.noCollectJob, RetryFailed: retryFailed, Log: g.log}
	extra, extraFrom := sc.Extra, fmt.Sprintf("%s: experiments.%s.slurm.extra", g.config, e.Name)
	if slurmFlags.partition != "" {
		o.Partition = slurmFlags.partition
	}
	if slurmFlags.account != "" {
		o.Account = slurmFlags.account
	}
	if slurmFlags.time != "" {
		o.Time = slurmFlags.time
	}
	if slurmFlags.maxParallel >= 0 {
		o.MaxParallel = slurmFlags.maxParallel
	}
	if slurmFlags.extra != "" {
		extra, extraFrom = slurmFlags.extra, "--slurm-extra"
	}
	args, err := slurm.SplitArgs(extra)
	if err != nil {
		return o, usageErr("%s: %v", extraFrom, err)
	}
	o.Extra = args
	ro, err := withResultOptions(g, sweep.RunOptions{})
	if err != nil {
		return o, &exitError{exitUsage, err}
	}
	o.Note, o.Tags, o.Env = ro.Note, ro.Tags, ro.Env
	o.OnReport = htmlPage(g)
	if err := o.Check(); err != nil {
		return o, usageErr("%v", err)
	}
	return o, nil
}

// runSlurm is run with --executor slurm: submit (or resume) the experiment's
// trials as a Slurm array job.
func runSlurm(ctx context.Context, g *globalOptions, e *stages.Experiment, st *runs.Store, retryFailed bool) error {
	o, err := slurmOptions(g, e, retryFailed)
	if err != nil {
		return err
	}
	if err := (&slurm.Client{}).Available(); err != nil {
		return usageErr("--executor slurm: %v (is this a Slurm submit host?)", err)
	}
	s, err := slurmexec.Submit(ctx, st, e, o)
	if err != nil {
		if errors.Is(err, slurmexec.ErrAlreadySubmitted) || errors.Is(err, context.Canceled) {
			return err
		}
		return &exitError{exitUsage, err}
	}
	w := g.stdout
	switch {
	case s.UpToDate:
		fmt.Fprintf(w, "%s: up to date (run %d, %d trials); nothing to submit\n", e.Name, s.RunID, s.Trials)
		return nil
	case s.Finished != nil:
		fmt.Fprintf(w, "%s: run %d: every trial has a result (%d done, %d failed); run %s\n", e.Name, s.RunID, s.Collected.Done, s.Collected.Failed, s.Finished.Status)
		printFinished(g, s.Finished)
		if s.Collected.Failed > 0 {
			return &exitError{exitFailed, fmt.Errorf("%d of %d trials failed (see 'runner results --run %d')", s.Collected.Failed, s.Trials, s.RunID)}
		}
		return nil
	}
	verb := "submitted"
	if s.Resumed {
		verb = fmt.Sprintf("resumed (%d done, %d failed, %d without a result)", s.Collected.Done, s.Collected.Failed, len(s.Collected.Pending))
	}
	fmt.Fprintf(w, "%s: run %d %s: %d of %d trials as Slurm job %s (array %s, %d cpu, %d MiB per task)\n",
		e.Name, s.RunID, verb, len(s.Submitted), s.Trials, s.ArrayJob, s.Array, s.CPUs, s.MemMB)
	if s.CollectJob != "" {
		fmt.Fprintf(w, "collect: job %s runs 'runner collect --run %d' when they end\n", s.CollectJob, s.RunID)
	} else {
		fmt.Fprintf(w, "collect: run 'runner collect --run %d' when they end\n", s.RunID)
	}
	fmt.Fprintf(w, "watch: runner status --run %d   logs: %s\n", s.RunID, s.Dir.Logs())
	return nil
}

// printFinished says how a Slurm run ended.
func printFinished(g *globalOptions, f *slurmexec.Finished) {
	switch {
	case f.ReportPath != "":
		fmt.Fprintf(g.stdout, "report: %s\n", f.ReportPath)
	case f.ReportNote != "":
		fmt.Fprintf(g.stdout, "%s\n", f.ReportNote)
	}
	if f.Page != "" {
		fmt.Fprintf(g.stdout, "html report: %s\n", f.Page)
	}
}

// htmlPage writes a Slurm run's HTML page, as a local run does.
func htmlPage(g *globalOptions) func(ctx context.Context, st *runs.Store, e *stages.Experiment, runID int64, reportPath string) (string, error) {
	return func(ctx context.Context, st *runs.Store, e *stages.Experiment, runID int64, reportPath string) (string, error) {
		return finishReport(ctx, g, st, e, &sweep.Outcome{RunID: runID, ReportPath: reportPath})
	}
}

// runExecutor runs the experiment with --executor other than local.
func runExecutor(ctx context.Context, g *globalOptions, e *stages.Experiment, st *runs.Store, retryFailed bool) error {
	switch slurmFlags.executor {
	case "slurm":
		return runSlurm(ctx, g, e, st, retryFailed)
	}
	return usageErr("--executor must be local or slurm, got %q", slurmFlags.executor)
}
