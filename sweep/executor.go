package sweep

import (
	"context"
	"log/slog"

	"goldstone/experiment"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/runs"
)

// Executor runs the trials of a run that Execute opened: the one seam
// between recording a sweep and running it somewhere (as bigslice's exec
// separates its evaluator from its local and bigmachine executors). Local
// runs them on this machine; the Slurm executor (sweep/slurmexec) submits
// them as an array job whose results are collected later.
//
// Execute has done everything every run needs before Run: the graph is
// built (Job.Built), the run is owned by this process (Job.Owner), the run exists in
// the store with its executor, note, tags and environment, and the trials
// without an outcome are recorded as pending. After Run, Execute ends the
// run from its trials' statuses, unless Run set Job.Outcome.HandedOff: the
// trials then run on without this process, and the executor ends the run
// when they are collected.
type Executor interface {
	// Name is recorded with the run (a name of the executor registry,
	// RegisterExecutor): a run that has not ended is resumed only by the
	// executor that ran it.
	Name() string
	// Run runs the trials of job that have no outcome yet (not in
	// Job.Keep), or hands them off. An error means the run could not go
	// on (Execute marks it interrupted when ctx was cancelled); a trial's
	// failure is no error of Run's, but its trial's status.
	Run(ctx context.Context, job *Job) error
}

// Checker is an Executor that can tell, before a run is created or
// resumed, that it would refuse it (a cluster that refuses the request:
// a bad partition, account or time limit). Execute calls Check after the
// graph is built and the run to resume (if any) is chosen, before it
// records anything: an error ends Execute with no run created and none
// marked running. Job.RunID is the run to resume, or 0 for a new one.
type Checker interface {
	Check(ctx context.Context, job *Job) error
}

// check runs x's Check when x is a Checker.
func (job *Job) check(ctx context.Context, x Executor) error {
	if c, ok := x.(Checker); ok {
		return c.Check(ctx, job)
	}
	return nil
}

// Job is a run as Execute hands it to an executor.
type Job struct {
	Store      *runs.Store
	Experiment *experiment.Experiment
	Trials     []experiment.Trial // every trial of the sweep, in order
	Built      *experiment.Built  // their graph, built with Budget
	ConfigJSON string             // the experiment's resolved configuration (Experiment.Resolved)
	ConfigHash string
	RunID      int64
	// Keep holds the trials of a resumed run that keep their outcome (id
	// -> status: done, or failed unless RetryFailed); the others are
	// recorded as pending.
	Keep    map[string]string
	Options RunOptions
	Lock    *pipeline.Lock // the caller's exclusive lock on Options.WorkDir (RunOptions.Lock), usually nil: runners share the workdir
	Budget  *optim.Budget  // the machine's cores, shared by the trials' pools
	Log     *slog.Logger
	Outcome *Outcome // what the run did; the executor adds to it
	// Owner is this process as the owner of the run (runs.Owner): recorded
	// when the run is created or resumed, and checked when it ends.
	Owner runs.Owner

	runErr error // Local: the error of the graph's run
}

// TrialParams renders a trial's settings as the results store records them
// (each setting as JSON text, with its variant and name), for an executor
// that writes them elsewhere too (the Slurm executor's manifest).
func (job *Job) TrialParams(tr experiment.Trial) map[string]string { return trialParams(tr) }

// Local runs a run's trials on this machine: the experiment's graph, with
// the content cache of Options.WorkDir, Options.Jobs nodes at once, each
// trial's pools taken from the run's core budget.
type Local struct{}

// Name implements Executor.
func (Local) Name() string { return runs.ExecutorLocal }

// Run implements Executor. Trials already done in this run are not
// recorded again (their nodes stay: the report needs their outputs, which
// come from the cache); failed ones are not run again (keepFailures).
func (Local) Run(ctx context.Context, job *Job) error {
	if err := keepFailures(ctx, job.Built, job.Store, job.RunID, job.Keep); err != nil {
		return err
	}
	rec, err := newRecorder(job)
	if err != nil {
		return err
	}
	defer rec.logs.close()
	opts := job.Options
	_, job.runErr = pipeline.Run(ctx, job.Built.Graph, pipeline.Options{
		Lock:       job.Lock,
		WorkDir:    opts.WorkDir,
		Jobs:       opts.Jobs,
		Force:      opts.Force,
		FailFast:   opts.FailFast,
		Checkpoint: opts.Checkpoint,
		// A pruned search's promoted trials continue their shorter
		// trials' checkpoints.
		KeepCheckpoints: opts.keepCheckpoints,
		KeepMark:        keepMarkOf(job),
		Workers:         workersPerTrial(opts.Jobs, opts.Cores),
		Observer:        rec.observer(ctx),
		// Spread waits for loops running on the pools it grows: not on
		// the scheduler's goroutine.
		Idle: func(int) { go job.Budget.Spread() },
	})
	return nil
}

// keepMarkOf marks the checkpoints a run keeps (a pruned search's) with
// the run, so that its end and gc find them (ReleaseRunCheckpoints); ""
// when it keeps none.
func keepMarkOf(job *Job) string {
	if !job.Options.keepCheckpoints {
		return ""
	}
	return KeepMark(job.Experiment.Name, job.RunID)
}
