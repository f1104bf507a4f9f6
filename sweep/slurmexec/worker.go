package slurmexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"goldstone/experiment"
	"goldstone/internal/checkpoint"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/sweep"
	"goldstone/sweep/batch"
	"goldstone/trialio"
	"goldstone/workdir"
)

// FindDir returns the run directory of run id under workdir: that of
// experiment when given, else the only batch/*/run-<id> there is.
func FindDir(wd, experiment string, id int64) (batch.Dir, error) {
	if experiment != "" {
		return batch.RunDir(wd, experiment, id), nil
	}
	ms, err := filepath.Glob(workdir.Workdir(wd).BatchManifests(id))
	if err != nil {
		return "", err
	}
	switch len(ms) {
	case 0:
		return "", fmt.Errorf("no submitted run %d under %s (no batch/*/run-%d/manifest.json)", id, wd, id)
	case 1:
		return batch.Dir(filepath.Dir(ms[0])), nil
	}
	return "", fmt.Errorf("run %d is ambiguous under %s (%d experiments have one); give --experiment", id, wd, len(ms))
}

// loadFrozen rebuilds a run's experiment from its frozen experiments file
// and overrides, and checks it against the manifest: same configuration
// hash, same trial ids in the same order.
func loadFrozen(d batch.Dir, m *batch.Manifest) (*experiment.Experiment, []experiment.Trial, error) {
	cfg, err := experiment.LoadConfig(d.Config())
	if err != nil {
		return nil, nil, err
	}
	e, ok := cfg.Experiments[m.Experiment]
	if !ok {
		return nil, nil, fmt.Errorf("%s: no experiment %q", d.Config(), m.Experiment)
	}
	if err := e.Override(m.Sets); err != nil {
		return nil, nil, err
	}
	// A search's trials are its waves' so far.
	if e, err = waveExperiment(e, m); err != nil {
		return nil, nil, err
	}
	if _, h := e.Resolved(); h != m.ConfigHash {
		return nil, nil, fmt.Errorf("%s: experiment %s resolves to config hash %s, the manifest says %s (was this runner built from other code?)",
			d.Config(), m.Experiment, h, m.ConfigHash)
	}
	trials := e.Trials()
	if len(trials) != len(m.Trials) {
		return nil, nil, fmt.Errorf("experiment %s has %d trials, the manifest %d", m.Experiment, len(trials), len(m.Trials))
	}
	for i, tr := range trials {
		if tr.ID != m.Trials[i].ID {
			return nil, nil, fmt.Errorf("trial %d of %s is %s, the manifest says %s", i, m.Experiment, tr.ID, m.Trials[i].ID)
		}
	}
	return e, trials, nil
}

// WorkerOptions say which task to run.
type WorkerOptions struct {
	Dir     batch.Dir
	Index   int
	Attempt int
	// Workers is the cores the trial may use; 0 means $SLURM_CPUS_PER_TASK,
	// else the number of CPUs.
	Workers int
	// Restart is how often Slurm restarted this task (requeue,
	// preemption); < 0 means $SLURM_RESTART_COUNT (0 when unset).
	Restart int
	// Out, when set, gets the task's log lines while it runs (the task's
	// Slurm output file): each stage's start and end, its log lines
	// (checkpoints written and resumed) and, at most every ProgressEvery
	// (default 30 s), its step.
	Out           io.Writer
	ProgressEvery time.Duration
	// Checkpoint is when the trial saves its state: a task stopped (time
	// limit, preemption, requeue) continues from it when it runs again.
	Checkpoint checkpoint.Policy
}

// Worker runs one task: the trial at opts.Index, into the shared cache, and
// writes its result file. The error is about the task itself (no manifest,
// an unwritable result); a trial that fails is a result with status failed,
// and a SIGTERM (ctx cancelled) one with status interrupted, returned with
// ctx's error.
func Worker(ctx context.Context, opts WorkerOptions) (*batch.Result, error) {
	d := opts.Dir
	m, restart, err := workerSetup(opts)
	if err != nil {
		return nil, err
	}
	if opts.Index < 0 || opts.Index >= len(m.Trials) {
		return nil, fmt.Errorf("task index %d: run %d has trials 0-%d", opts.Index, m.RunID, len(m.Trials)-1)
	}
	build := sync.OnceValues(func() (*experiment.Built, error) { return buildFrozen(ctx, d, m) })
	return runOne(ctx, d, m, opts, build, opts.Index, restart, time.Time{})
}

// workerSetup reads the manifest and checks opts, and returns the
// execution's restart count (opts.Restart, else $SLURM_RESTART_COUNT).
func workerSetup(opts WorkerOptions) (*batch.Manifest, int, error) {
	m, err := batch.ReadManifest(opts.Dir)
	if err != nil {
		return nil, 0, err
	}
	if opts.Attempt < 1 {
		return nil, 0, fmt.Errorf("attempt %d: want >= 1", opts.Attempt)
	}
	restart := opts.Restart
	if restart < 0 {
		restart = 0
		if s := os.Getenv("SLURM_RESTART_COUNT"); s != "" {
			if restart, err = strconv.Atoi(s); err != nil || restart < 0 {
				return nil, 0, fmt.Errorf("SLURM_RESTART_COUNT %q: want a count", s)
			}
		}
	}
	return m, restart, nil
}

// runOne runs trial index of the task and writes its result file. A
// stop's time is measured from taskStart (the pack's start; zero: the
// trial's own start).
func runOne(ctx context.Context, d batch.Dir, m *batch.Manifest, opts WorkerOptions, build func() (*experiment.Built, error), index, restart int, taskStart time.Time) (*batch.Result, error) {
	tr := m.Trials[index]
	host, _ := os.Hostname()
	res := &batch.Result{RunID: m.RunID, Index: index, Attempt: opts.Attempt, Restart: restart, Trial: tr.ID, Host: host, Started: clock().UTC()}
	if taskStart.IsZero() {
		taskStart = res.Started
	}
	if j, t := os.Getenv("SLURM_ARRAY_JOB_ID"), os.Getenv("SLURM_ARRAY_TASK_ID"); j != "" {
		res.JobID = j + "_" + t
	}
	var (
		mu     sync.Mutex
		stopAt time.Time
		step   atomic.Value // string: the trial's last progress
	)
	stopWatch := context.AfterFunc(ctx, func() {
		mu.Lock()
		stopAt = clock()
		mu.Unlock()
	})
	defer stopWatch()
	runErr := runTrial(ctx, d, m, opts, build, index, res, &step)
	res.Ended = time.Now().UTC()
	switch {
	case ctx.Err() != nil:
		res.Status, res.Error = batch.Interrupted, "interrupted: the task was stopped (SIGTERM: preemption, time limit or scancel)"
		res.Summary, res.Series = nil, nil
		mu.Lock()
		at := stopAt
		mu.Unlock()
		if at.IsZero() {
			at = clock()
		}
		res.Stop = stopOf(d, opts.Attempt, at.Sub(taskStart), &step)
		if res.Stop.TimeLimit {
			res.Error = fmt.Sprintf("interrupted: stopped at the time-limit warning (SIGTERM %d s before the %s limit) after %.0f s",
				res.Stop.LeadSeconds, FormatTime(res.Stop.LimitSeconds), res.Stop.AfterSeconds)
			if res.Stop.Step != "" {
				res.Error += ", at " + res.Stop.Step
			}
		}
	case runErr != nil:
		res.Status, res.Error = batch.Failed, runErr.Error()
		res.Summary, res.Series = nil, nil
	default:
		// done, or diverged with where (as the local executor records it)
		res.Status, res.Error = trialOutcome(res.Summary)
	}
	if err := batch.WriteResult(d, res); err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

// PackWorker runs one task of a packed submission (--slurm-trials-per-task):
// the trials that the submission's pack file (packs.<attempt>.json) gives
// task opts.Index, one after another, each exactly as Worker runs a trial
// (its own result file, its own checkpoints in tasks/<trial index>/). A
// trial that already has a done, diverged or failed result of this
// submission (an earlier execution of the task, before Slurm requeued it)
// is not run again. Once the task is stopped (SIGTERM), the running
// trial records interrupted and where it stopped, and every trial of the
// pack not yet started records interrupted with NotRun set, saying so, so
// that the next submission runs them; the error is then ctx's. It returns
// the results written, in the pack's order.
func PackWorker(ctx context.Context, opts WorkerOptions) ([]*batch.Result, error) {
	d := opts.Dir
	m, restart, err := workerSetup(opts)
	if err != nil {
		return nil, err
	}
	p, err := batch.ReadPacks(d, m, opts.Attempt)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("submission %d of run %d packed no trials (no %s)", opts.Attempt, m.RunID, d.PacksPath(opts.Attempt))
	}
	trials := p.Trials(opts.Index)
	if trials == nil {
		return nil, fmt.Errorf("task index %d: submission %d of run %d has tasks 0-%d", opts.Index, opts.Attempt, m.RunID, len(p.Tasks)-1)
	}
	ended, err := endedBefore(d, trials, opts.Attempt, restart)
	if err != nil {
		return nil, err
	}
	start := clock()
	build := sync.OnceValues(func() (*experiment.Built, error) { return buildFrozen(ctx, d, m) })
	var out []*batch.Result
	for k, i := range trials {
		if ended[i] {
			continue
		}
		if ctx.Err() != nil {
			rs, err := notRun(d, m, opts, trials[k:], ended, restart, start, out)
			return append(out, rs...), errors.Join(err, ctx.Err())
		}
		r, err := runOne(ctx, d, m, opts, build, i, restart, start)
		if r != nil {
			out = append(out, r)
		}
		if err != nil {
			if ctx.Err() != nil && r != nil {
				rs, werr := notRun(d, m, opts, trials[k+1:], ended, restart, start, out)
				return append(out, rs...), errors.Join(werr, err)
			}
			return out, err
		}
	}
	return out, nil
}

// endedBefore are the trials of a pack that an earlier execution of
// submission attempt's task (restart below restart) ran to a result:
// done, diverged or failed.
func endedBefore(d batch.Dir, trials []int, attempt, restart int) (map[int]bool, error) {
	out := map[int]bool{}
	if restart == 0 {
		return out, nil
	}
	files, err := d.ResultFiles()
	if err != nil {
		return nil, err
	}
	for _, i := range trials {
		for _, e := range files[i] {
			if e.Attempt != attempt || e.Restart >= restart {
				continue
			}
			r, err := batch.ReadResult(d, i, e)
			if err != nil {
				return nil, err
			}
			if r.Status != batch.Interrupted {
				out[i] = true
			}
		}
	}
	return out, nil
}

// notRun records the trials of a stopped pack that it did not start:
// interrupted, NotRun, with the pack's stop (the last trial's, when one
// was stopped running; else measured now from the pack's start).
func notRun(d batch.Dir, m *batch.Manifest, opts WorkerOptions, trials []int, ended map[int]bool, restart int, start time.Time, ran []*batch.Result) ([]*batch.Result, error) {
	var stop *batch.Stop
	if n := len(ran); n > 0 && ran[n-1].Stop != nil {
		s := *ran[n-1].Stop
		stop = &s
	} else {
		var none atomic.Value
		stop = stopOf(d, opts.Attempt, clock().Sub(start), &none)
	}
	stop.Step = ""
	host, _ := os.Hostname()
	var out []*batch.Result
	for _, i := range trials {
		if ended[i] {
			continue
		}
		now := clock().UTC()
		r := &batch.Result{RunID: m.RunID, Index: i, Attempt: opts.Attempt, Restart: restart, Trial: m.Trials[i].ID, Host: host,
			Started: now, Ended: now, Status: batch.Interrupted, NotRun: true, Stop: stop,
			Error: "interrupted before it started: its pack's task was stopped (SIGTERM: preemption, time limit or scancel) while an earlier trial of the pack ran"}
		if stop.TimeLimit {
			r.Error = fmt.Sprintf("interrupted before it started: its pack's task was stopped at the time-limit warning (SIGTERM %d s before the %s limit) after %.0f s",
				stop.LeadSeconds, FormatTime(stop.LimitSeconds), stop.AfterSeconds)
		}
		if j, t := os.Getenv("SLURM_ARRAY_JOB_ID"), os.Getenv("SLURM_ARRAY_TASK_ID"); j != "" {
			r.JobID = j + "_" + t
		}
		if err := batch.WriteResult(d, r); err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// trialOutcome is the task status and error text of a trial whose result
// has the summary sum (sweep.TrialOutcome).
func trialOutcome(sum map[string]batch.Num) (status, notice string) {
	ts := make(trialio.Summary, len(sum))
	for k, v := range sum {
		ts[k] = float64(v)
	}
	status, notice = sweep.TrialOutcome(ts)
	if status == runs.StatusDiverged {
		return batch.Diverged, notice
	}
	return batch.Done, ""
}

// buildFrozen rebuilds run m's experiment and trials from its frozen files.
func buildFrozen(ctx context.Context, d batch.Dir, m *batch.Manifest) (*experiment.Built, error) {
	e, trials, err := loadFrozen(d, m)
	if err != nil {
		return nil, err
	}
	return experiment.Build(ctx, e, trials, experiment.Env{DataDir: m.DataDir})
}

// taskWorkers is a task's worker count: n when set, else the cpus Slurm
// gave the task ($SLURM_CPUS_PER_TASK), else the machine's.
func taskWorkers(n int) int {
	if n <= 0 {
		n, _ = strconv.Atoi(os.Getenv("SLURM_CPUS_PER_TASK"))
	}
	if n <= 0 {
		n = runtime.NumCPU()
	}
	return n
}

// runTrial runs the trial's stages and fills res's summary and series.
func runTrial(ctx context.Context, d batch.Dir, m *batch.Manifest, opts WorkerOptions, build func() (*experiment.Built, error), index int, res *batch.Result, step *atomic.Value) error {
	built, err := build()
	if err != nil {
		return err
	}
	workers := taskWorkers(opts.Workers)
	tn := built.Trials[index]
	if tn.Trial.ID != m.Trials[index].ID {
		return fmt.Errorf("built trial %d is %s, the manifest says %s", index, tn.Trial.ID, m.Trials[index].ID)
	}
	w, err := d.LinkCache(index, workdir.Workdir(m.WorkDir).Cache())
	if err != nil {
		return err
	}
	// A pruned search's trials keep their training checkpoints in the
	// shared work directory, where the task of the point's next rung (a
	// later wave, another index) goes on from them.
	keep, err := keepsCheckpoints(m)
	if err != nil {
		return err
	}
	if keep {
		if err := linkCheckpoints(w, m.WorkDir); err != nil {
			return err
		}
	}
	// The first failure of the trial's own nodes is its error, worded as
	// the local executor words it.
	var failure string
	mine := map[string]bool{}
	for _, n := range tn.Nodes {
		mine[n] = true
	}
	out := taskObserver(opts, &failure)
	obs := pipeline.ObserverFunc(func(ev pipeline.Event) {
		if ev.Kind == pipeline.Progress && ev.Total > 0 {
			step.Store(fmt.Sprintf("%s: step %d of %d", ev.Node, ev.Count, ev.Total))
		}
		out.Event(ev)
	})
	popts := pipeline.Options{WorkDir: w, Jobs: 1, Workers: workers, Observer: obs, Checkpoint: opts.Checkpoint, KeepCheckpoints: keep}
	if keep {
		// Marked with the run, as the local executor marks them, so that
		// the search's end and gc remove them.
		popts.KeepMark = sweep.KeepMark(m.Experiment, m.RunID)
	}
	r, err := pipeline.Run(ctx, subgraph(built.Graph, tn.Nodes...), popts)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if failure != "" {
		return errors.New(failure)
	}
	if err != nil {
		return err
	}
	nr, ok := r.Nodes[tn.Result]
	if !ok || (nr.Status != pipeline.Done && nr.Status != pipeline.Cached) {
		return fmt.Errorf("%s did not finish: %v", tn.Result, nr.Err)
	}
	dir := nr.Outputs["result"]
	sum, err := trialio.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		return fmt.Errorf("record results: %w", err)
	}
	ser, err := trialio.ReadSeries(filepath.Join(dir, "series.arrow"))
	if err != nil {
		return fmt.Errorf("record results: %w", err)
	}
	res.Summary = make(map[string]batch.Num, len(sum))
	for _, k := range sum.Keys() {
		res.Summary[k] = batch.Num(sum[k])
	}
	res.WallSeconds = sum["wall_seconds"]
	byMetric := map[string]int{}
	for i := range ser.Step {
		name := ser.Metric[i]
		k, ok := byMetric[name]
		if !ok {
			k = len(res.Series)
			byMetric[name] = k
			res.Series = append(res.Series, batch.Curve{Metric: name})
		}
		res.Series[k].Steps = append(res.Series[k].Steps, int(ser.Step[i]))
		res.Series[k].Values = append(res.Series[k].Values, batch.Num(ser.Value[i]))
	}
	return nil
}

// taskObserver records the first failure of the task's nodes in *failure
// (worded as the local executor words it) and writes the task's progress
// lines to opts.Out.
func taskObserver(opts WorkerOptions, failure *string) pipeline.Observer {
	every := opts.ProgressEvery
	if every <= 0 {
		every = 30 * time.Second
	}
	var lastProgress time.Time
	say := func(format string, args ...any) {
		if opts.Out != nil {
			fmt.Fprintf(opts.Out, time.Now().UTC().Format("2006-01-02T15:04:05Z")+" "+format+"\n", args...)
		}
	}
	return pipeline.ObserverFunc(func(ev pipeline.Event) {
		if ev.Kind == pipeline.Failed && *failure == "" && ev.Err != nil && !errors.Is(ev.Err, context.Canceled) {
			*failure = ev.Node + ": " + ev.Err.Error()
		}
		switch ev.Kind {
		case pipeline.Started:
			say("%s: started", ev.Node)
		case pipeline.Done:
			say("%s: done in %.1fs", ev.Node, ev.Elapsed.Seconds())
		case pipeline.Failed:
			say("%s: stopped: %v", ev.Node, ev.Err)
		case pipeline.Log:
			say("%s: %s", ev.Node, ev.Msg)
		case pipeline.Progress:
			if ev.Total > 0 && (ev.Count == ev.Total || time.Since(lastProgress) >= every) {
				lastProgress = time.Now()
				say("%s: step %d of %d", ev.Node, ev.Count, ev.Total)
			}
		}
	})
}

// clock is the worker's time (tests set it).
var clock = time.Now

// stopMargin is how much earlier than its lead before the time limit the
// warning signal may reach a task and still count as the warning: Slurm
// checks signals at intervals, and the task started a little after its job.
const stopMargin = 30 * time.Second

// sbatchSignal reads the warning lead of a submission's script
// (#SBATCH --signal=B:TERM@<seconds>).
var sbatchSignal = regexp.MustCompile(`(?m)^#SBATCH --signal=(?:B:)?\w+@(\d+)$`)

// stopOf says how an execution of submission attempt stopped, after
// running for ran: at its time-limit warning when it had run to within the
// lead (plus stopMargin) of the limit that submission's script asked for.
func stopOf(d batch.Dir, attempt int, ran time.Duration, step *atomic.Value) *batch.Stop {
	s := &batch.Stop{Signal: "SIGTERM", AfterSeconds: math.Round(ran.Seconds()*10) / 10}
	if v, ok := step.Load().(string); ok {
		s.Step = v
	}
	limit, err := ParseTime(lastSbatch(d, attempt, sbatchTime))
	if err != nil || limit <= 0 {
		return s
	}
	lead, err := strconv.ParseInt(lastSbatch(d, attempt, sbatchSignal), 10, 64)
	if err != nil {
		return s
	}
	s.LimitSeconds, s.LeadSeconds = limit, lead
	s.TimeLimit = ran >= time.Duration(limit-lead)*time.Second-stopMargin
	return s
}
