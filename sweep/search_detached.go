package sweep

import (
	"context"
	"fmt"

	"goldstone/experiment"
	"goldstone/runs"
	"goldstone/search"
)

// Wave is the search wave whose trials a run's Job holds (Search): the
// points suggested so far (suggestion 0 first), a pruned search's rung
// jobs so far, and whether it is the search's last wave. Its trials are
// Experiment's (Experiment.Wave from 0, or Experiment.PrunedWave): a batch
// executor freezes it with the run, so that its workers rebuild the same
// trials, and ends the run only after the last wave.
type Wave struct {
	Points []search.Point
	Jobs   []experiment.RungJob // a pruned search's; nil without a pruner
	Last   bool
}

// Experiment is the experiment of the wave's trials, e being the search's
// experiment (or one of its waves).
func (w *Wave) Experiment(e *experiment.Experiment) (*experiment.Experiment, error) {
	if e.Search == nil {
		return nil, fmt.Errorf("experiment %s has no search table", e.Name)
	}
	if e.Search.Pruning != nil {
		return e.PrunedWave(w.Points, w.Jobs)
	}
	return e.Wave(0, w.Points)
}

// Wave is the search wave of the job's trials, nil for a grid.
func (job *Job) Wave() *Wave { return job.Options.wave }

// WaveWaiter is a detached executor (a batch back end) that a search runs
// on: Search hands each wave's trials to it through Execute (its Run
// submits those without a result and hands the run off), then calls
// WaitWave, which returns once every trial of the wave has its result in
// the store. The run is then left unended (status interrupted) for the
// next wave, or, after the last wave, ended with its report. A detached
// executor that is not a WaveWaiter runs no search.
type WaveWaiter interface {
	WaitWave(ctx context.Context, st *runs.Store, runID int64) (*WaveEnd, error)
}

// WaveEnd is how a wave that WaitWave waited for ended: the run's status
// (interrupted between waves; finished or failed after the last) and,
// after the last, where its report's files were copied.
type WaveEnd struct {
	Status     string
	ReportPath string
	ReportErr  error
}

// searchExecutor refuses a detached executor that cannot run a search.
func searchExecutor(e *experiment.Experiment, x Executor) error {
	if !Detached(x.Name()) {
		return nil
	}
	if _, ok := x.(WaveWaiter); !ok {
		return fmt.Errorf("experiment %s is a search: the %s executor cannot run its waves", e.Name, x.Name())
	}
	return nil
}

// executeWave runs one wave's trials through x (Execute); on a detached
// executor, which hands them off, it waits for them (WaveWaiter) and
// fills the outcome from the run's trials as Execute does for a local run.
func executeWave(ctx context.Context, st *runs.Store, w *experiment.Experiment, x Executor, opts RunOptions) (*Outcome, error) {
	out, err := Execute(ctx, st, w, x, opts)
	if err != nil || out == nil || !out.HandedOff {
		return out, err
	}
	end, err := x.(WaveWaiter).WaitWave(ctx, st, out.RunID)
	if err != nil {
		return out, err
	}
	out.HandedOff = false
	out.Status, out.ReportPath, out.ReportErr = end.Status, end.ReportPath, end.ReportErr
	if err := countStatuses(context.WithoutCancel(ctx), st, out); err != nil {
		return out, err
	}
	if out.Interrupted > 0 {
		// The next wave is suggested from this one's results: all of them.
		return out, fmt.Errorf("run %d: %d trial(s) of the search's wave have no result yet: the same command resumes it", out.RunID, out.Interrupted)
	}
	return out, nil
}
