package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime"
	"strings"

	"goldstone/experiment"
	"goldstone/internal/checkpoint"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/runs"
)

// RunOptions configures Execute.
type RunOptions struct {
	WorkDir     string // stage outputs and caches
	DataDir     string
	Jobs        int // trials (stages) at once
	Cores       int // cores of the machine (0: runtime.NumCPU)
	FailFast    bool
	RetryFailed bool // re-run a finished run's failed trials
	Force       bool // ignore the cache (repro)
	Kind        string
	Log         *slog.Logger
	Observer    pipeline.Observer // extra observer (progress display); optional
	ReportDir   string            // the report's files are copied to ReportDir/<experiment>/run-<id>/ ("" keeps them in the cache only)
	Note        string            // the run's note ("" keeps a resumed run's note)
	Tags        map[string]string // tags added to the run
	Env         map[string]string // environment recorded with the run beyond runs.Environment (see runs.BuildEnv)
	LogDir      string            // per-trial log files go to LogDir/<experiment>/run-<id>/ ("" writes none)
	Lock        *pipeline.Lock    // the caller's exclusive lock on WorkDir, if it holds one (repro's scratch workdir); nil: none, runners share WorkDir
	// Checkpoint is when trials save their state part-way (the zero
	// value: every checkpoint.DefaultInterval); see pipeline.Options.
	Checkpoint checkpoint.Policy

	// unended: a wave of a search that goes on (Search): the run is left
	// interrupted when its trials have ended, and the next wave resumes it.
	unended bool
	// resume: the run a later wave of a repro search resumes (a repro's
	// run is not found as the experiment's latest run).
	resume int64
	// keepCheckpoints: a pruned search's wave (searchPruned) keeps the
	// training checkpoints for its promoted trials (pipeline.Options).
	keepCheckpoints bool
	// wave: the search wave of the run's trials (Search), for a batch
	// executor (Job.Wave).
	wave *Wave
}

// Outcome is what a run did.
type Outcome struct {
	RunID    int64
	Resumed  bool
	UpToDate bool
	// SameAs: up to date with RunID, an earlier run of the same
	// configuration than the experiment's latest (a run of another
	// configuration came between): no new run is recorded.
	SameAs      bool
	Trials      int
	Done        int // done or cached
	Diverged    int // ended with results, their training diverged (runs.StatusDiverged)
	Pruned      int // ended with results, and a pruned search stopped their points at their rungs (runs.StatusPruned)
	Failed      int
	Interrupted int
	Ran, Cached int   // stage counts
	DataErr     error // a non-trial stage (ingest, binning...) failed
	// InfraErr is the first error of the machine (runs.IsInfrastructure:
	// the results database locked past its wait, a full disk) that ended a
	// trial or a stage: the trials it hit are interrupted, not failed, and
	// the same command resumes them.
	InfraErr error
	// ReportErr is why the run's report was not written (its stage
	// failed, copying it failed); the run's report state is then
	// "failed" and 'runner report' rebuilds it.
	ReportErr error
	// ReportRebuilt says why the report of an up-to-date run was written
	// again ("" when it was not): it had failed, was cut short, or files
	// of it are missing.
	ReportRebuilt string
	Failures      map[string]string
	Divergences   map[string]string // trial id -> where its training diverged
	Status        string            // the run's status: runs.StatusFinished, StatusFailed or StatusInterrupted
	ReportPath    string            // where the report's files were copied
	// HandedOff: the executor handed the trials to a scheduler (or ended
	// the run itself, as the Slurm executor does when every trial has a
	// result): the run goes on without this process.
	HandedOff bool
}

// Counts is the outcome's trial counts as the run's summary line says
// them: "100 trials: 99 done, 1 diverged, 0 failed", or without diverged
// trials (the line of every run before they were a result) "100 trials:
// 100 done, 0 failed".
func (o *Outcome) Counts() string {
	if o.Pruned > 0 {
		return fmt.Sprintf("%d trials: %d done, %d pruned, %d diverged, %d failed", o.Trials, o.Done, o.Pruned, o.Diverged, o.Failed)
	}
	if o.Diverged == 0 {
		return fmt.Sprintf("%d trials: %d done, %d failed", o.Trials, o.Done, o.Failed)
	}
	return fmt.Sprintf("%d trials: %d done, %d diverged, %d failed", o.Trials, o.Done, o.Diverged, o.Failed)
}

// infra records the first machine error of the run.
func (o *Outcome) infra(err error) {
	if o.InfraErr == nil {
		o.InfraErr = err
	}
}

// workersPerTrial splits the machine's cores over the trials that run at
// once, so jobs x workers never oversubscribes it.
func workersPerTrial(jobs, cores int) int {
	return max(1, cores/max(1, jobs))
}

// Execute runs an experiment through x: it creates (or resumes) a run in
// the store, builds the pipeline graph of its trials, hands the trials
// without an outcome to the executor, and records every trial's settings,
// status, step-wise series and summary metrics, and the report's
// artifacts. It is the one path of every run, whichever executor runs the
// trials: Local here, or the Slurm executor (sweep/slurmexec), whose tasks
// are collected later.
//
// A run whose resolved configuration matches the latest run of the
// experiment is resumed when that run did not end (some trial is pending,
// running or interrupted, e.g. after Ctrl-C, a kill, or a data error that
// stopped it before its trials ran), and left alone when it did ("up to
// date") while the cache holds its done trials' stages under this code's
// keys; a changed configuration, or a changed cache key (a stage's version,
// an input, an entry removed), starts a new run, and stages whose cache
// keys did not change are reused from the cache. A resumed run keeps its
// done trials and, unless RetryFailed, its failed trials with their errors:
// only the others run. A run that has not ended is resumed only by the
// executor that ran it: a local run by Local (another executor starts a
// new run), a run handed to a scheduler by that executor (Local refuses it).
// A local run that is running under a live owner (runs.Owner: another
// runner on this host) is refused with a *runs.OwnedError before anything
// is written; a resumed run is claimed (runs.Store.ClaimRun) before its
// trials are touched, and ended only while this process still owns it.
//
// Any number of runners may share one workdir and one database: they share
// the cache through its entry locks (pipeline.Run), and each run has one
// owner. A runner refused because a live runner already runs the same
// configuration (*runs.OwnedError, from resumeOrSkip or, for two that
// start at the same moment, runs.Store.CreateOwnedRun) leaves no trace. The run ends
// finished (every trial done or diverged: a divergence is a result of the
// algorithm, TrialOutcome), failed (some trial failed, or a data error),
// or interrupted (ctx cancelled), unless the executor handed its trials off
// (Outcome.HandedOff): the executor ends it then.
func Execute(ctx context.Context, st *runs.Store, e *experiment.Experiment, x Executor, opts RunOptions) (*Outcome, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Kind == "" {
		opts.Kind = runs.KindRun
	}
	if opts.Cores <= 0 {
		opts.Cores = runtime.NumCPU()
	}
	if err := experiment.CheckName(e.Name); err != nil {
		return nil, &experiment.ConfigError{File: "experiment", Key: e.Name, Err: err}
	}
	trials, err := e.TrialsContext(ctx)
	if err != nil {
		return nil, err
	}
	job := &Job{Store: st, Experiment: e, Trials: trials, Options: opts, Log: opts.Log,
		Owner:   runs.Self(),
		Outcome: &Outcome{Trials: len(trials), Failures: map[string]string{}, Divergences: map[string]string{}},
		// The trials' pools share the machine's cores (train.NewPool):
		// when job slots stay idle (the end of a sweep, fewer trials than
		// jobs) the running trials get their cores, never more workers in
		// all than the cores.
		Budget: optim.NewBudget(min(opts.Cores, runtime.GOMAXPROCS(0)))}
	job.ConfigJSON, job.ConfigHash = e.Resolved()
	// Build before touching the store: a missing data set or a bad sweep
	// leaves no run behind.
	if job.Built, err = experiment.Build(ctx, e, trials, experiment.Env{DataDir: opts.DataDir, Fetch: true, Budget: job.Budget, Scan: true}); err != nil {
		return nil, err
	}
	for _, w := range job.Built.Warnings {
		job.Log.Warn(w)
	}
	job.Lock = opts.Lock // nil: runners share the workdir (pipeline's entry locks)
	switch {
	case opts.Kind == runs.KindRun:
		if done, err := job.resumeOrSkip(ctx, x); err != nil || done {
			return job.Outcome, err
		}
	case opts.resume != 0:
		if err := job.resumeRun(ctx, opts.resume); err != nil {
			return nil, err
		}
	}
	if job.RunID == 0 {
		if err := job.check(ctx, x); err != nil {
			return nil, err
		}
	}
	if err := job.open(ctx, x); err != nil {
		return nil, err
	}
	// Stopped (Ctrl-C) before a stage ran: the run is interrupted, not
	// left "running".
	abort := func(err error) (*Outcome, error) {
		if ctx.Err() == nil {
			return nil, err
		}
		if ferr := st.FinishOwnedRun(context.WithoutCancel(ctx), job.RunID, job.Owner, runs.StatusInterrupted, ""); ferr != nil {
			job.Log.Error("mark interrupted", "err", ferr)
		}
		job.Outcome.Status = runs.StatusInterrupted
		return job.Outcome, ctx.Err()
	}
	if err := job.recordPending(ctx); err != nil {
		return abort(err)
	}
	if err := x.Run(ctx, job); err != nil {
		if job.Outcome.HandedOff {
			return job.Outcome, err
		}
		return abort(err)
	}
	if job.Outcome.HandedOff {
		return job.Outcome, nil
	}
	return job.end(ctx)
}

// resumeOrSkip decides what to do with the latest run of the experiment
// when it has the same configuration: resume it (job.RunID, job.Keep), or
// nothing when it is up to date (done: job.Outcome says so; its report is
// written again when it is not current).
func (job *Job) resumeOrSkip(ctx context.Context, x Executor) (done bool, err error) {
	st, e, opts, out, log := job.Store, job.Experiment, job.Options, job.Outcome, job.Log
	last, err := st.LatestRun(ctx, e.Name, runs.KindRun)
	if err != nil {
		return false, err
	}
	if last == nil || last.ConfigHash != job.ConfigHash {
		return job.sameAsEarlier(ctx)
	}
	// What its trials say, not only its status: a run stopped by a data
	// error ended "failed" with its trials still pending.
	now, err := st.EndStatus(ctx, last.ID)
	if err != nil {
		return false, err
	}
	exe, err := st.Executor(ctx, last.ID)
	if err != nil {
		return false, err
	}
	ended := runs.Ended(last.Status) && now != runs.StatusInterrupted && !(opts.RetryFailed && now == runs.StatusFailed)
	stale := ""
	if ended {
		if stale, err = staleRun(ctx, st, last.ID, job.Built, opts.WorkDir); err != nil {
			return false, err
		}
	}
	switch {
	case last.Status == runs.StatusRunning && !Detached(exe) && last.Owner().Liveness() == runs.OwnerAlive:
		// Another runner works on it: refused before anything is written
		// (ClaimRun decides again, in its transaction).
		return false, &runs.OwnedError{RunID: last.ID, Experiment: e.Name, Owner: last.Owner()}
	case ended && stale != "":
		// The same settings, but its results would not come from the
		// cache with this code and data: a new run.
		log.Info("new run: a stage's cache key changed since the last run (code, data or cache)", "experiment", e.Name, "last run", last.ID, "stage", stale)
		return false, nil
	case ended:
		out.RunID, out.UpToDate, out.Status = last.ID, true, last.Status
		return true, job.upToDate(ctx, last)
	case exe != x.Name() && !Detached(exe):
		return false, nil // a local run is not taken over by another executor: a new run
	case exe != x.Name():
		return false, fmt.Errorf("run %d of %s was submitted to %s and has not ended: watch it with 'runner status --run %d', collect it with 'runner collect --run %d', or resume it with --executor %s",
			last.ID, e.Name, executorText(exe), last.ID, last.ID, exe)
	}
	job.RunID, out.Resumed = last.ID, true
	if err := job.check(ctx, x); err != nil {
		return false, err
	}
	// This process owns the run from here (its pid, start time and a new
	// token), before its trials are touched: no other runner resumes it,
	// or marks it interrupted, while this one lives.
	if err := st.ClaimRun(ctx, job.RunID, job.Owner); err != nil {
		return false, err
	}
	if job.Keep, err = st.ResumeTrials(ctx, job.RunID, opts.RetryFailed); err != nil {
		return false, err
	}
	log.Info("resuming run", "experiment", e.Name, "run", job.RunID, "was", last.Status, "executor", x.Name())
	return false, nil
}

// resumeRun resumes run id, claimed by this process, keeping its trials
// that have an outcome (a repro search's next wave).
func (job *Job) resumeRun(ctx context.Context, id int64) error {
	job.RunID, job.Outcome.Resumed = id, true
	if err := job.Store.ClaimRun(ctx, id, job.Owner); err != nil {
		return err
	}
	var err error
	job.Keep, err = job.Store.ResumeTrials(ctx, id, false)
	return err
}

// sameAsEarlier finds the newest earlier run of the same configuration
// (the latest run of the experiment has another): when it finished and the
// cache still holds its stages under this code's keys, the experiment is up
// to date with it (done) and no duplicate run is recorded.
func (job *Job) sameAsEarlier(ctx context.Context) (done bool, err error) {
	st, e, out := job.Store, job.Experiment, job.Outcome
	all, err := st.Runs(ctx, e.Name)
	if err != nil {
		return false, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		r := all[i]
		if r.Kind != runs.KindRun || r.ConfigHash != job.ConfigHash {
			continue
		}
		if r.Status != runs.StatusFinished {
			return false, nil
		}
		stale, err := staleRun(ctx, st, r.ID, job.Built, job.Options.WorkDir)
		if err != nil || stale != "" {
			return false, err
		}
		out.RunID, out.UpToDate, out.SameAs, out.Status = r.ID, true, true, r.Status
		return true, job.upToDate(ctx, &r)
	}
	return false, nil
}

func executorText(exe string) string {
	return "the " + exe + " executor"
}

// upToDate fills the outcome of an ended run that needs nothing run. Up to
// date includes the report: one that failed, was cut short or lost files is
// written again, from the results the run recorded.
func (job *Job) upToDate(ctx context.Context, last *runs.RunInfo) error {
	out, opts, log := job.Outcome, job.Options, job.Log
	if err := countStatuses(ctx, job.Store, out); err != nil {
		return err
	}
	ok, why, err := ReportCurrent(ctx, job.Store, last, opts.ReportDir)
	if err != nil {
		return err
	}
	if ok {
		log.Info("up to date: nothing to run", "experiment", job.Experiment.Name, "run", last.ID, "trials", out.Trials, "failed", out.Failed)
		return nil
	}
	log.Info("up to date, but the report is not: rebuilding it", "experiment", job.Experiment.Name, "run", last.ID, "why", why)
	out.ReportRebuilt = why
	ro, err := RebuildReport(ctx, job.Store, last, job.Built, opts, job.Lock)
	if ro != nil {
		out.ReportPath, out.Ran, out.Cached = ro.ReportPath, ro.Ran, ro.Cached
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		out.ReportErr = err
	}
	return nil
}

// open creates the run unless one is resumed, records its executor, note,
// tags and environment, and tells the observer.
func (job *Job) open(ctx context.Context, x Executor) error {
	st, e, opts := job.Store, job.Experiment, job.Options
	if job.RunID == 0 {
		info := runs.Environment()
		info.Experiment, info.Kind, info.ConfigJSON, info.ConfigHash = e.Name, opts.Kind, job.ConfigJSON, job.ConfigHash
		info.SetOwner(job.Owner)
		create := st.CreateRun
		if opts.Kind == runs.KindRun {
			create = st.CreateOwnedRun // one owner per run: a twin runner started at the same moment is refused
		}
		id, err := create(ctx, info)
		if err != nil {
			return err
		}
		job.RunID = id
		if Detached(x.Name()) {
			if err := st.SetExecutor(ctx, id, x.Name()); err != nil {
				return err
			}
		}
		job.Log.Info("new run", "experiment", e.Name, "run", id, "trials", len(job.Trials), "kind", opts.Kind, "executor", x.Name())
	}
	job.Outcome.RunID = job.RunID
	if ro, ok := opts.Observer.(RunObserver); ok {
		ro.RunStarted(job.RunID, len(job.Trials), trialOf(job.Built))
	}
	return recordRunInfo(ctx, st, job.RunID, opts)
}

// recordPending records the trials without an outcome as pending, in one
// transaction.
func (job *Job) recordPending(ctx context.Context) error {
	pending := make([]runs.Trial, 0, len(job.Trials))
	for _, tr := range job.Trials {
		if _, kept := job.Keep[tr.ID]; !kept {
			pending = append(pending, runs.Trial{RunID: job.RunID, ID: tr.ID, Params: trialParams(tr), Seed: int64(tr.Seed), Status: runs.StatusPending})
		}
	}
	return job.Store.UpsertTrials(ctx, pending)
}

// end ends a run whose executor ran its trials here: its status from its
// trials (interrupted when ctx was cancelled or the machine failed, failed
// on a data error), and the error the caller reports.
func (job *Job) end(ctx context.Context) (*Outcome, error) {
	st, out, log, runID := job.Store, job.Outcome, job.Log, job.RunID
	wctx := context.WithoutCancel(ctx)
	if ferr := st.Flush(wctx); ferr != nil {
		if !runs.IsInfrastructure(ferr) {
			return nil, ferr
		}
		out.infra(ferr) // it names the database
	}
	var status string
	switch {
	case ctx.Err() != nil || out.InfraErr != nil:
		status = runs.StatusInterrupted
		if err := st.MarkUnended(wctx, runID); err != nil {
			log.Error("mark interrupted", "err", err)
		}
	case out.DataErr != nil:
		status = runs.StatusFailed
	default:
		var err error
		if status, err = st.EndStatus(wctx, runID); err != nil {
			return nil, err
		}
		if job.Options.unended {
			status = runs.StatusInterrupted // the search's next wave resumes it
		}
	}
	out.Status = status
	if err := countStatuses(wctx, st, out); err != nil {
		return nil, err
	}
	note := fmt.Sprintf("%s, %d interrupted", out.Counts(), out.Interrupted)
	log.Info("run ended", "run", runID, "status", status, "trials", note)
	switch err := st.FinishOwnedRun(wctx, runID, job.Owner, status, ""); {
	case runs.IsInfrastructure(err):
		// The run stays "running" with this process gone: the next run
		// resumes it.
		out.infra(fmt.Errorf("results %s: %w", st.Path(), err))
		out.Status = runs.StatusInterrupted
	case errors.Is(err, runs.ErrTakenOver):
		// Another runner claimed the run (one on another host, which
		// could not tell that this one lives): its end is theirs.
		return nil, fmt.Errorf("%w; its status and report are left to that runner (the trials this one ended are recorded)", err)
	case err != nil:
		return nil, err
	}
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	if out.InfraErr != nil {
		return out, fmt.Errorf("%w (the run is interrupted: run the same command again to resume it; trials that trained are recorded from the cache)", out.InfraErr)
	}
	if job.runErr != nil && out.DataErr == nil && out.Failed == 0 {
		return out, job.runErr
	}
	return out, nil
}

func countStatuses(ctx context.Context, st *runs.Store, out *Outcome) error {
	ts, err := st.TrialStatuses(ctx, out.RunID)
	if err != nil {
		return err
	}
	out.Done, out.Diverged, out.Pruned, out.Failed, out.Interrupted = 0, 0, 0, 0, 0
	if out.Divergences == nil {
		out.Divergences = map[string]string{}
	}
	for _, t := range ts {
		switch t.Status {
		case runs.StatusDone, runs.StatusCached:
			out.Done++
		case runs.StatusPruned:
			out.Pruned++
		case runs.StatusDiverged:
			out.Diverged++
			out.Divergences[t.ID] = t.Error
		case runs.StatusFailed:
			out.Failed++
			out.Failures[t.ID] = t.Error
		case runs.StatusInterrupted, runs.StatusRunning, runs.StatusPending:
			out.Interrupted++
		}
	}
	return nil
}

// trialParams renders a trial's settings as JSON texts for the store, with
// its variant and its name (variant and grid values: stable across code
// versions that add settings, which change trial ids). A float setting
// keeps a decimal point even when integral (lr = 1 is "1.0"), so that the
// typed columns of the trials view and of exports are REAL/DOUBLE for it.
func trialParams(tr experiment.Trial) map[string]string {
	m := make(map[string]string, len(tr.Settings)+2)
	js := func(v any) string {
		switch x := v.(type) {
		case float64:
			return floatJSON(x)
		case []float64:
			parts := make([]string, len(x))
			for i, f := range x {
				parts[i] = floatJSON(f)
			}
			return "[" + strings.Join(parts, ",") + "]"
		}
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	for k, v := range tr.Settings {
		m[k] = js(v)
	}
	if tr.Variant != "" {
		m["variant"] = js(tr.Variant)
	}
	m["name"] = js(tr.Name)
	return m
}

// recordRunInfo stores the run's note, tags and environment (runs.BuildEnv
// and opts.Env).
func recordRunInfo(ctx context.Context, st *runs.Store, runID int64, opts RunOptions) error {
	if opts.Note != "" {
		if err := st.SetNote(ctx, runID, opts.Note); err != nil {
			return err
		}
	}
	if len(opts.Tags) > 0 {
		if err := st.SetTags(ctx, runID, opts.Tags); err != nil {
			return err
		}
	}
	env := runs.BuildEnv()
	maps.Copy(env, opts.Env)
	return st.SetEnv(ctx, runID, env)
}

// skipCause returns the node whose failure made a Skipped event's node
// impossible ("upstream X failed"), or "".
func skipCause(ev pipeline.Event) string {
	r, ok := strings.CutPrefix(ev.Reason, "upstream ")
	if !ok {
		return ""
	}
	c, ok := strings.CutSuffix(r, " failed")
	if !ok {
		return ""
	}
	return c
}

// floatJSON is the JSON text of f with a decimal point or exponent, so that
// JSON readers (SQLite's json_extract) read it as a float.
func floatJSON(f float64) string {
	b, err := json.Marshal(f)
	if err != nil {
		panic(err) // settings are finite: checked when decoded
	}
	s := string(b)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// staleRun returns the first node of the trials done in run id (or of the
// stages they share) whose cache entry this code and data would not reuse:
// a stage's version, a setting's encoding or an input changed since, or the
// entry was removed; "" when every one is cached. Failed trials do not
// count: a resumed run keeps them failed (diverged ones count: their
// results come from the cache).
func staleRun(ctx context.Context, st *runs.Store, id int64, built *experiment.Built, workdir string) (string, error) {
	trials, err := st.Trials(ctx, id)
	if err != nil {
		return "", err
	}
	done := map[string]bool{}
	for _, t := range trials {
		if runs.HasResult(t.Status) {
			done[t.ID] = true
		}
	}
	items, err := pipeline.Plan(ctx, built.Graph, pipeline.Options{WorkDir: workdir})
	if err != nil {
		return "", err
	}
	for _, it := range items {
		if it.Cached || it.Node == built.Report {
			continue
		}
		if i := built.TrialOf(it.Node); i >= 0 && !done[built.Trials[i].Trial.ID] {
			continue
		}
		return it.Node, nil
	}
	return "", nil
}
