package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"goldstone/experiment"
	"goldstone/internal/slurm"
	"goldstone/runs"
	"goldstone/sweep"
	"goldstone/sweep/batch"
	"goldstone/sweep/slurmexec"
	"goldstone/workdir"
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
	cpus         int
	mem          string
	noCollectJob bool
	collectJob   bool
	detach       bool
	poll         time.Duration
	memScale     float64
	timeScale    float64
	maxArraySize int
	sharedJob    bool
	sharedCPUs   int
	sharedMem    string
	sharedTime   string
	signalLead   time.Duration
	sharedExtra  string
	collectExtra string
	setup        multiFlag
	perTask      int
}

// registerSlurmFlags adds run's executor flags.
func registerSlurmFlags(fs *flag.FlagSet) {
	fs.StringVar(&slurmFlags.executor, "executor", runs.ExecutorLocal, executorHelp())
	fs.StringVar(&slurmFlags.partition, "slurm-partition", "", "Slurm partition (sbatch --partition)")
	fs.StringVar(&slurmFlags.account, "slurm-account", "", "Slurm account (sbatch --account)")
	fs.StringVar(&slurmFlags.time, "slurm-time", "", "time limit per array task (one trial, or K with --slurm-trials-per-task), HH:MM:SS or D-HH:MM:SS (sbatch --time)")
	fs.IntVar(&slurmFlags.maxParallel, "slurm-max-parallel", -1, fmt.Sprintf("array tasks (trials, or packs of --slurm-trials-per-task) running at once on the cluster (--array=...%%K); 0: no limit; -1: the experiment's slurm.max_parallel, else %d", slurmexec.DefaultMaxParallel))
	fs.StringVar(&slurmFlags.extra, "slurm-extra", "", "further sbatch arguments, added after the experiment's slurm.extra, e.g. '--qos=long --constraint=avx2' (not given to the collect job)")
	fs.IntVar(&slurmFlags.cpus, "slurm-cpus", 0, "cpus per trial (sbatch --cpus-per-task); 0: the experiment's slurm.cpus, else derived from the input size; resolved at each submission")
	fs.StringVar(&slurmFlags.mem, "slurm-mem", "", "memory per trial, MiB or with K/M/G/T (sbatch --mem, e.g. 8G); default: the experiment's slurm.mem_mb, else derived from the input size; resolved at each submission")
	fs.BoolVar(&slurmFlags.noCollectJob, "slurm-no-collect-job", false, "no dependent collect job (the default; kept for scripts)")
	fs.BoolVar(&slurmFlags.collectJob, "slurm-collect-job", false, "also submit a dependent job that runs 'runner collect' on a compute node when the trials end: only when the database is on the shared filesystem and no other host writes it then (SQLite's WAL works on one host)")
	fs.BoolVar(&slurmFlags.detach, "detach", false, "submit and return at once (results then wait in the run's directory for 'runner collect', 'runner status --watch' or the collect job); by default the submit waits, shows progress and collects results here as they arrive")
	fs.Float64Var(&slurmFlags.memScale, "slurm-mem-retry-scale", 0, "on a resubmission, multiply the memory by this when a trial's task was killed for memory in the previous one (sacct OUT_OF_MEMORY); 0: never")
	fs.Float64Var(&slurmFlags.timeScale, "slurm-time-retry-scale", 0, "on a resubmission, multiply the time limit by this when a trial's task reached it in the previous one (its result file says it stopped at the time-limit warning, or sacct TIMEOUT); 0: never")
	fs.IntVar(&slurmFlags.maxArraySize, "slurm-max-array-size", 0, "the cluster's MaxArraySize: a larger sweep goes as several arrays; 0: read it with 'scontrol show config', else 1001")
	fs.BoolVar(&slurmFlags.sharedJob, "slurm-shared-job", true, "on by default: run the stages every trial shares (ingest, binning, split, vocabulary, counts, references) as a Slurm job before the trials' array (afterok) when one of them is not cached; the trials' resources are then derived from the data set's size; =false runs them on this host (see docs/slurm.md)")
	fs.IntVar(&slurmFlags.sharedCPUs, "slurm-shared-cpus", 0, "cpus of the shared job (--slurm-shared-job); 0: derived from the data set's size")
	fs.StringVar(&slurmFlags.sharedMem, "slurm-shared-mem", "", "memory of the shared job (--slurm-shared-job), MiB or with K/M/G/T; default: derived from the data set's size")
	fs.StringVar(&slurmFlags.sharedTime, "slurm-shared-time", "", "time limit of the shared job (--slurm-shared-job); default: the trials' (--slurm-time)")
	fs.DurationVar(&slurmFlags.signalLead, "slurm-signal-lead", slurmexec.DefaultSignalLead*time.Second, "how long before a trial's time limit Slurm sends it SIGTERM to save a checkpoint and record the stop (--signal=B:TERM@<lead>); a --slurm-time that leaves under a minute after it is refused")
	fs.StringVar(&slurmFlags.sharedExtra, "slurm-shared-extra", "", "further sbatch arguments of the shared job (--slurm-shared-job), e.g. a QOS or reservation the site requires on every job; none of --slurm-extra's")
	fs.StringVar(&slurmFlags.collectExtra, "slurm-collect-extra", "", "further sbatch arguments of the collect job (--slurm-collect-job), e.g. a QOS or reservation the site requires on every job; none of --slurm-extra's")
	fs.Var(&slurmFlags.setup, "slurm-setup", "a shell line the trials' and the shared job's batch scripts run before the runner ('module load gcc', 'source env/bin/activate'); repeat for more; kept in submit.<attempt>.sh")
	fs.IntVar(&slurmFlags.perTask, "slurm-trials-per-task", 0, "pack K trials into each array task, run one after another (a sweep of n trials is ceil(n/K) tasks; --slurm-time, cpus and memory are then per task: the time limit must cover K trials); 0: the experiment's slurm.trials_per_task, else 1")
	fs.DurationVar(&slurmFlags.poll, "slurm-poll", 10*time.Second, "how often a waiting submit collects results and asks squeue")
}

// executorNames are the registered executors as --executor's value
// ("local|process|slurm": its help and completion).
func executorNames() string {
	var names []string
	for _, x := range sweep.Executors() {
		names = append(names, x.Name)
	}
	return strings.Join(names, "|")
}

// executorHelp is --executor's help: the registered executors.
func executorHelp() string {
	var parts []string
	for _, x := range sweep.Executors() {
		parts = append(parts, x.Name+": "+x.Doc)
	}
	return "where trials run; " + strings.Join(parts, "; ")
}

// slurmOptions resolves the executor options: flags over the experiment's
// slurm table.
func slurmOptions(g *globalOptions, e *experiment.Experiment, retryFailed bool) (slurmexec.Options, error) {
	sc := e.Slurm
	if len(g.config.list()) > 1 || len(g.variants) > 0 {
		// The workers read the experiment again, from one frozen file and
		// the --set overrides (sweep/slurmexec).
		return slurmexec.Options{}, usageErr("--executor slurm takes one --config file and no --variant: its workers read the experiment again from that file; define the experiment you want there (extends = \"%s\" inherits this one)", e.Name)
	}
	o := slurmexec.Options{DB: g.db, WorkDir: g.workdir, DataDir: g.dataDir, Reports: g.reports, ConfigPath: g.config.list()[0],
		Sets: g.sets, Jobs: g.jobs, Partition: sc.Partition, Account: sc.Account, Time: sc.Time, MaxParallel: slurmexec.DefaultMaxParallel,
		CPUs: sc.CPUs, MemMB: sc.MemMB, NoCollectJob: !slurmFlags.collectJob || slurmFlags.noCollectJob, RetryFailed: retryFailed, Log: g.log,
		CheckpointArgs: checkpointArgs(g.checkpointPolicy()), MemRetryScale: slurmFlags.memScale,
		TimeRetryScale: slurmFlags.timeScale, MaxArraySize: slurmFlags.maxArraySize}
	extra, extraFrom := sc.Extra, fmt.Sprintf("%s: experiments.%s.slurm.extra", g.config.list()[0], e.Name)
	if slurmFlags.partition != "" {
		o.Partition = slurmFlags.partition
	}
	if slurmFlags.account != "" {
		o.Account = slurmFlags.account
	}
	if slurmFlags.time != "" {
		o.Time = slurmFlags.time
	}
	if sc.MaxParallel != nil {
		o.MaxParallel = *sc.MaxParallel
	}
	if slurmFlags.maxParallel >= 0 {
		o.MaxParallel = slurmFlags.maxParallel
	}
	if sc.TrialsPerTask != nil {
		o.TrialsPerTask = *sc.TrialsPerTask
	}
	if slurmFlags.perTask < 0 {
		return o, usageErr("--slurm-trials-per-task %d: want >= 1", slurmFlags.perTask)
	}
	if slurmFlags.perTask > 0 {
		o.TrialsPerTask = slurmFlags.perTask
	}
	if slurmFlags.cpus < 0 {
		return o, usageErr("--slurm-cpus %d: want >= 0", slurmFlags.cpus)
	}
	if slurmFlags.cpus > 0 {
		o.CPUs = slurmFlags.cpus
	}
	if slurmFlags.mem != "" {
		mb, err := slurmexec.ParseMem(slurmFlags.mem)
		if err != nil {
			return o, usageErr("--slurm-mem: %v", err)
		}
		o.MemMB = mb
	}
	if slurmFlags.signalLead < 0 || slurmFlags.signalLead%time.Second != 0 {
		return o, usageErr("--slurm-signal-lead %v: want whole seconds, at least 1s", slurmFlags.signalLead)
	}
	o.SignalLead = int(slurmFlags.signalLead / time.Second)
	o.SharedJob, o.SharedCPUs, o.SharedTime = slurmFlags.sharedJob, slurmFlags.sharedCPUs, slurmFlags.sharedTime
	if slurmFlags.sharedMem != "" {
		mb, err := slurmexec.ParseMem(slurmFlags.sharedMem)
		if err != nil {
			return o, usageErr("--slurm-shared-mem: %v", err)
		}
		o.SharedMemMB = mb
	}
	args, err := slurm.SplitArgs(extra)
	if err != nil {
		return o, usageErr("%s: %v", extraFrom, err)
	}
	// --slurm-extra adds to the table's extra (a QOS or constraint there
	// stays); the later of two same flags wins in sbatch.
	more, err := slurm.SplitArgs(slurmFlags.extra)
	if err != nil {
		return o, usageErr("--slurm-extra: %v", err)
	}
	o.Extra = append(args, more...)
	o.Setup = slurmFlags.setup
	if o.SharedExtra, err = slurm.SplitArgs(slurmFlags.sharedExtra); err != nil {
		return o, usageErr("--slurm-shared-extra: %v", err)
	}
	if o.CollectExtra, err = slurm.SplitArgs(slurmFlags.collectExtra); err != nil {
		return o, usageErr("--slurm-collect-extra: %v", err)
	}
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

// batchOptions are slurmOptions for back end b, its scheduler made here
// (dispatching: this runner starts the tasks of a back end that runs them
// on this machine).
func batchOptions(g *globalOptions, e *experiment.Experiment, retryFailed bool, b slurmexec.Backend) (slurmexec.Options, error) {
	o, err := slurmOptions(g, e, retryFailed)
	if err != nil {
		return o, err
	}
	if b.Here {
		if slurmFlags.detach {
			return o, usageErr("--executor %s runs its workers from this runner: it has no --detach (Ctrl-C stops waiting, not the workers; the same command adopts them)", b.Name)
		}
		// The shared stages run here before the workers, and this runner
		// collects: no shared or collect job.
		o.SharedJob, o.NoCollectJob = false, true
	}
	if o.Client, err = scheduler(g, b, true); err != nil {
		return o, err
	}
	o.Executor = b.Name
	return o, nil
}

// scheduler makes back end b's scheduler for the workdir.
func scheduler(g *globalOptions, b slurmexec.Backend, dispatch bool) (slurmexec.Scheduler, error) {
	wd, err := workdir.New(g.workdir)
	if err != nil {
		return nil, usageErr("--workdir: %v", err)
	}
	return b.New(slurmexec.Config{WorkDir: wd.Root(), Jobs: g.jobs, Dispatch: dispatch}), nil
}

// runSlurm is run with a batch --executor (slurm, process): submit (or
// resume) the experiment's trials as an array job of back end b.
func runSlurm(ctx context.Context, g *globalOptions, e *experiment.Experiment, st *runs.Store, retryFailed bool, b slurmexec.Backend) error {
	o, err := batchOptions(g, e, retryFailed, b)
	if err != nil {
		return err
	}
	if err := o.Client.Available(); err != nil {
		return usageErr("--executor %s: %v (is this a submit host of it?)", b.Name, err)
	}
	s, err := slurmexec.Submit(ctx, st, e, o)
	if err != nil && errors.Is(err, slurmexec.ErrAlreadySubmitted) && !slurmFlags.detach && s != nil && s.RunID != 0 {
		// The run's tasks are still queued (a waiting submit was stopped,
		// a retry is in flight): the same command waits for them, as
		// 'runner status --watch' would, instead of submitting again.
		fmt.Fprintf(g.stdout, "%s: run %d is already submitted and has tasks queued; waiting for them (Ctrl-C stops waiting, not the trials)\n", e.Name, s.RunID)
		return waitSlurm(ctx, g, st, s.RunID, o)
	}
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
		fmt.Fprintf(w, "%s: run %d: every trial has a result (%s); run %s\n", e.Name, s.RunID, endedText(s.Collected.Done, s.Collected.Diverged, s.Collected.Failed), s.Finished.Status)
		printFinished(g, s.Finished)
		if s.Collected.Failed > 0 {
			return &exitError{exitFailed, fmt.Errorf("%d of %d trials failed (see 'runner results --run %d')", s.Collected.Failed, s.Trials, s.RunID)}
		}
		return divergedExit(s.Collected.Diverged, s.Trials, e.Name)
	}
	verb := "submitted"
	if s.Resumed {
		verb = fmt.Sprintf("resumed (%s, %d without a result)", endedText(s.Collected.Done, s.Collected.Diverged, s.Collected.Failed), len(s.Collected.Pending))
	}
	jobs := fmt.Sprintf("job %s (array %s", s.ArrayJob, s.Array)
	if len(s.ArrayJobs) > 1 {
		// Split: larger than the cluster's MaxArraySize.
		var parts []string
		for i, id := range s.ArrayJobs {
			parts = append(parts, id+" "+s.Arrays[i])
		}
		jobs = fmt.Sprintf("%d jobs (%s: trial = offset+array index", len(parts), strings.Join(parts, ", "))
	}
	packed := ""
	if s.PerTask > 1 {
		packed = fmt.Sprintf(", %d tasks of up to %d trials", s.Tasks, s.PerTask)
	}
	via := "Slurm"
	if b.Here {
		via = b.Name // the process back end's jobs are its own
	}
	fmt.Fprintf(w, "%s: run %d %s: %d of %d trials as %s %s%s, %d cpu, %d MiB per task)\n",
		e.Name, s.RunID, verb, len(s.Submitted), s.Trials, via, jobs, packed, s.CPUs, s.MemMB)
	if s.SharedJob != "" {
		fmt.Fprintf(w, "shared stages: job %s runs them first (the trials wait for it: afterok); log: %s\n", s.SharedJob, s.Dir.SharedLog(s.SharedJob))
	}
	if !slurmFlags.detach {
		fmt.Fprintf(w, "waiting for them (Ctrl-C stops waiting, not the trials); logs: %s\n", s.Dir.Logs())
		return waitSlurm(ctx, g, st, s.RunID, o)
	}
	if s.CollectJob != "" {
		fmt.Fprintf(w, "collect: job %s runs 'runner collect --run %d' when they end\n", s.CollectJob, s.RunID)
	} else {
		fmt.Fprintf(w, "collect: run 'runner collect --run %d' (or 'runner status --run %d --watch') on this host when they end\n", s.RunID, s.RunID)
	}
	fmt.Fprintf(w, "watch: runner status --run %d   logs: %s\n", s.RunID, s.Dir.Logs())
	return nil
}

// waitSlurm waits for a submitted run: every --slurm-poll it collects the
// results that arrived (on this host: no compute node opens the database)
// and prints the progress line when it changed, until the run has ended
// (report written) or stopped short (trials lost, nothing queued). Ctrl-C
// stops waiting; the trials go on.
func waitSlurm(ctx context.Context, g *globalOptions, st *runs.Store, id int64, o slurmexec.Options) error {
	p := &slurm.Poller{Client: o.Client, Interval: slurmFlags.poll}
	last := ""
	for {
		c, err := slurmexec.Collect(ctx, st, id, o)
		if err != nil {
			if ctx.Err() != nil {
				return detached(g, id, ctx.Err())
			}
			return &exitError{exitFailed, err}
		}
		if c.Finished != nil || c.MarkedInterrupted || c.SharedFailed != "" {
			return endCollect(g, id, c)
		}
		if s, err := slurmexec.Status(ctx, st, id, g.workdir, p); err == nil {
			if line := progressLine(s); line != last {
				fmt.Fprintln(g.stdout, line)
				last = line
			}
		}
		select {
		case <-ctx.Done():
			return detached(g, id, ctx.Err())
		case <-time.After(slurmFlags.poll):
		}
	}
}

// detached says how to follow a run whose submit stopped waiting.
func detached(g *globalOptions, id int64, err error) error {
	fmt.Fprintf(g.stdout, "stopped waiting; run %d goes on on the cluster: 'runner status --run %d --watch' follows and collects it, 'runner cancel --run %d' stops it\n", id, id, id)
	return err
}

// endedText counts the trials that ended as the run's summary line does
// (sweep.Outcome.Counts): "3 done, 1 diverged, 0 failed", or "3 done, 0
// failed" when none diverged.
func endedText(done, diverged, failed int) string {
	if diverged == 0 {
		return fmt.Sprintf("%d done, %d failed", done, failed)
	}
	return fmt.Sprintf("%d done, %d diverged, %d failed", done, diverged, failed)
}

// progressLine is a waiting submit's progress: trials done, failed,
// running (with the step of each, from its task's output file), pending.
func progressLine(s *slurmexec.RunStatus) string {
	var parts []string
	n := len(s.Trials)
	parts = append(parts, fmt.Sprintf("%d/%d done", s.Counts[batch.Done], n))
	for _, k := range []string{batch.Diverged, batch.Failed, batch.Interrupted, batch.Missing, batch.Pending} {
		if c := s.Counts[k]; c > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c, k))
		}
	}
	if c := s.Counts[batch.Running]; c > 0 {
		var steps []string
		for _, t := range s.Trials {
			if t.State == batch.Running {
				if st := slurmexec.TaskStep(s.Dir, s.Task(t.Index)); st != "" {
					steps = append(steps, fmt.Sprintf("%d: %s", t.Index, st))
				}
			}
		}
		r := fmt.Sprintf("%d running", c)
		if len(steps) > 0 {
			r += " (" + strings.Join(steps, ", ") + ")"
		}
		parts = append(parts, r)
	}
	line := fmt.Sprintf("run %d: trials %s", s.Run.ID, strings.Join(parts, ", "))
	if sh := s.Shared; sh != nil && sh.State != batch.Done {
		line += fmt.Sprintf("; shared stages: job %s %s", sh.Job, strings.ToLower(sh.State))
	}
	return line
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
func htmlPage(g *globalOptions) func(ctx context.Context, st *runs.Store, e *experiment.Experiment, runID int64, reportPath string) (string, error) {
	return func(ctx context.Context, st *runs.Store, e *experiment.Experiment, runID int64, reportPath string) (string, error) {
		return finishReport(ctx, g, st, e, &sweep.Outcome{RunID: runID, ReportPath: reportPath})
	}
}

// searchExecutor is the executor of a search's waves: local, or the
// batch --executor, whose submissions of the waves this runner waits for,
// collecting their results and printing the progress line when it
// changed. The run's HTML page is written once the search ended, as a
// local search's.
func searchExecutor(g *globalOptions, e *experiment.Experiment, retryFailed bool) (sweep.Executor, error) {
	if !sweep.Detached(slurmFlags.executor) {
		return sweep.Local{}, nil
	}
	b, ok := slurmexec.Lookup(slurmFlags.executor)
	if !ok {
		return nil, usageErr("--executor must be one of %s, got %q", strings.ReplaceAll(executorNames(), "|", ", "), slurmFlags.executor)
	}
	o, err := batchOptions(g, e, retryFailed, b)
	if err != nil {
		return nil, err
	}
	if err := o.Client.Available(); err != nil {
		return nil, usageErr("--executor %s: %v (is this a submit host of it?)", b.Name, err)
	}
	o.OnReport, o.Poll = nil, slurmFlags.poll
	last := ""
	o.Progress = func(s *slurmexec.RunStatus) {
		if line := progressLine(s); line != last && !g.quiet {
			fmt.Fprintln(g.stdout, line)
			last = line
		}
	}
	x, err := slurmexec.NewExecutor(o)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return x, nil
}

// runExecutor runs the experiment with --executor other than local.
func runExecutor(ctx context.Context, g *globalOptions, e *experiment.Experiment, st *runs.Store, retryFailed bool) error {
	b, ok := slurmexec.Lookup(slurmFlags.executor)
	if !ok {
		return usageErr("--executor must be one of %s, got %q", strings.ReplaceAll(executorNames(), "|", ", "), slurmFlags.executor)
	}
	return runSlurm(ctx, g, e, st, retryFailed, b)
}

// planArrays prints, with a batch --executor, the array job(s) of the n
// trials plan lists (a search's first wave: its later waves are
// submitted as the search goes) as a new run would submit them.
func planArrays(g *globalOptions, e *experiment.Experiment, n int) error {
	if !sweep.Detached(slurmFlags.executor) {
		return nil
	}
	b, ok := slurmexec.Lookup(slurmFlags.executor)
	if !ok {
		return usageErr("--executor must be one of %s, got %q", strings.ReplaceAll(executorNames(), "|", ", "), slurmFlags.executor)
	}
	o, err := slurmOptions(g, e, false)
	if err != nil {
		return err
	}
	what := "its trials"
	if e.Search != nil {
		what = "the first wave's trials"
	}
	per := "one trial per task"
	if k := max(1, o.TrialsPerTask); k > 1 {
		per = fmt.Sprintf("up to %d trials per task", k)
	}
	arrays := slurmexec.PlanArrays(n, o)
	fmt.Fprintf(g.stdout, "on %s: %s (%d) as %s --array=%s (%s)\n", b.Name, what, n, plural(len(arrays), "array job"), strings.Join(arrays, ", "), per)
	return nil
}

// printWave says which wave a search run on a batch back end is at: its
// trials, the points (a pruned search's rung jobs) suggested so far, and
// whether the run ends with it.
func printWave(g *globalOptions, s *slurmexec.RunStatus) {
	w := s.Search
	if w == nil {
		return
	}
	trials := "no new trials"
	switch n := len(s.Trials); {
	case n == w.First+1:
		trials = fmt.Sprintf("trial %d", w.First)
	case n > w.First:
		trials = fmt.Sprintf("trials %d-%d", w.First, n-1)
	}
	jobs := ""
	if w.Jobs > 0 {
		jobs = fmt.Sprintf(", %d rung jobs", w.Jobs)
	}
	next := "the search's loop on the submitting host submits the next wave when it ends"
	if w.Last {
		next = "the search's last: the run ends with it"
	}
	fmt.Fprintf(g.stdout, "search wave: %s (%s), %d points suggested so far%s; %s\n", trials, plural(len(s.Trials)-w.First, "trial"), w.Points, jobs, next)
}
