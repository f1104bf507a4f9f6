package slurmexec

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"goldstone/experiment"
	"goldstone/internal/slurm"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/sweep"
	"goldstone/sweep/batch"
)

// Collection is what Collect did.
type Collection struct {
	*batch.Collected
	RunID             int64
	Finished          *Finished // nil while trials are missing a result
	MarkedInterrupted bool      // trials lack a result and none is queued: the run was marked interrupted
	// SharedFailed says how the shared job of the run's latest submission
	// failed (Options.SharedJob): its trials were cancelled, and the run
	// was ended failed. One line, naming the job and its log file.
	SharedFailed string
	// WaveEnded: every trial of a search's wave that is not its last has
	// a result; the run is left unended (interrupted) for the next wave
	// (Finished is nil).
	WaveEnded bool
}

// queued reports whether the run's latest trials jobs (one per array of
// its latest submission) still have tasks in the queue (true when squeue cannot tell).
func queued(ctx context.Context, st *runs.Store, id int64, o Options) bool {
	jobs, err := st.SlurmJobs(ctx, id)
	if err != nil {
		return true
	}
	for _, j := range latestTrialsJobs(jobs) {
		tasks, err := o.client().Queue(ctx, j.JobID)
		if err != nil || slices.ContainsFunc(tasks, slurm.Task.Active) {
			return true
		}
	}
	return false
}

// Finished is how a run ended.
type Finished struct {
	Status     string // run status: finished, failed
	Already    bool   // it had ended before: nothing was changed
	ReportPath string // where the report's files were copied ("" without one)
	ReportNote string // why there is no report
	Page       string // what Options.OnReport wrote
	// Experiment is the run's experiment, rebuilt from its frozen files
	// (set with a report).
	Experiment *experiment.Experiment
}

// Collect ingests the results of run id's tasks; once every trial has a
// result it runs the report and ends the run (Finish). Collecting again
// changes nothing.
func Collect(ctx context.Context, st *runs.Store, id int64, o Options) (*Collection, error) {
	if err := o.absolute(); err != nil {
		return nil, err
	}
	ri, err := st.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	d := batch.RunDir(o.WorkDir, ri.Experiment, id)
	m, err := batch.ReadManifest(d)
	if err != nil {
		return nil, err
	}
	if m.RunID != id || m.Experiment != ri.Experiment || m.ConfigHash != ri.ConfigHash {
		return nil, fmt.Errorf("%s is of run %d of %s (config %s), not of run %d of %s in %s (config %s)",
			d.Manifest(), m.RunID, m.Experiment, m.ConfigHash, id, ri.Experiment, st.Path(), ri.ConfigHash)
	}
	// The queue first, then the files: a task writes its result before it
	// leaves the queue, so a trial whose task was not queued before the
	// files were read and that has no result was lost. (Asked the other
	// way round, a task that ends in between looks lost.)
	wasQueued := ri.Status != runs.StatusRunning || queued(ctx, st, id, o)
	c, err := batch.Collect(ctx, st, d, m)
	if err != nil {
		return nil, err
	}
	out := &Collection{Collected: c, RunID: id}
	if err := awaitRetried(ctx, st, d, c, m); err != nil {
		return nil, err
	}
	for _, tr := range m.Trials {
		if r, err := batch.Latest(d); err == nil && r[tr.Index] != nil && r[tr.Index].JobID != "" {
			// The task's output file, as the scheduler named it (%A_%a.out).
			if err := st.SetTrialLog(ctx, id, tr.ID, filepath.Join(d.Logs(), r[tr.Index].JobID+".out")); err != nil {
				return nil, err
			}
		}
	}
	if len(c.Pending) > 0 {
		// Trials lack a result: while tasks are queued the run is running;
		// once none are, it stopped short (lost node, cancelled task,
		// preemption) and is interrupted until resubmitted.
		if !wasQueued || ri.Status == runs.StatusFailed {
			// A failed shared job: Slurm cancelled the array that
			// depended on it. The run ends failed, saying why; the same
			// command resubmits it.
			why, err := sharedFailure(ctx, st, d, id, o)
			if err != nil {
				return nil, err
			}
			if why != "" {
				out.SharedFailed = why
				if ri.Status == runs.StatusRunning {
					return out, st.FinishRun(ctx, id, runs.StatusFailed, "")
				}
				return out, nil
			}
		}
		if !wasQueued {
			if err := st.SetRunStatus(ctx, id, runs.StatusInterrupted); err != nil {
				return nil, err
			}
			out.MarkedInterrupted = true
		}
		return out, nil
	}
	out.Finished, err = endWave(ctx, st, d, m, nil, o)
	out.WaveEnded = out.Finished == nil && err == nil
	return out, err
}

// Finish ends a run whose trials all have a result: when every trial is
// done it runs the report stage from the shared cache (never a trial's
// stages: their outputs must be cached) and records its files; then it
// sets the run's end status. A run that has ended is left as it is.
// lock is the caller's lock on the workdir (nil: the report takes it).
func Finish(ctx context.Context, st *runs.Store, d batch.Dir, m *batch.Manifest, lock *pipeline.Lock, o Options) (*Finished, error) {
	ri, err := st.Run(ctx, m.RunID)
	if err != nil {
		return nil, err
	}
	if runs.Ended(ri.Status) {
		return &Finished{Status: ri.Status, Already: true}, nil
	}
	status, err := st.EndStatus(ctx, m.RunID)
	if err != nil {
		return nil, err
	}
	f := &Finished{Status: status}
	trials, err := st.Trials(ctx, m.RunID)
	if err != nil {
		return nil, err
	}
	failed := map[string]string{} // trial id -> its error
	for _, t := range trials {
		if t.Status == runs.StatusFailed {
			failed[t.ID] = t.Error
		}
	}
	switch {
	case status == runs.StatusFinished || (status == runs.StatusFailed && len(failed) < len(trials)):
		// As the local executor does: the report covers the trials that
		// finished and lists the failed ones with their errors.
		if f.Experiment, f.ReportPath, f.ReportNote, err = report(ctx, st, m, d, lock, o); err != nil {
			return nil, err
		}
		if o.OnReport != nil && f.ReportPath != "" {
			if f.Page, err = o.OnReport(ctx, st, f.Experiment, m.RunID, f.ReportPath); err != nil {
				o.log().Error("report page", "run", m.RunID, "err", err)
			}
		}
		if len(failed) > 0 && f.ReportPath != "" {
			f.ReportNote = fmt.Sprintf("%d of %d trials failed: the report covers the others and lists them (--retry-failed resubmits them)", len(failed), len(trials))
		}
	default:
		f.ReportNote = "no report: no trial finished (--retry-failed resubmits them)"
	}
	if err := st.FinishRun(ctx, m.RunID, status, ""); err != nil {
		return nil, err
	}
	return f, nil
}

// report writes the report of run m.RunID over the trials' results in the
// shared cache, as sweep writes the report of any run from what it
// recorded (sweep.RebuildReport): the trials the run recorded as failed are
// listed with their errors, and the outputs the report reads are recorded
// as the run's.
func report(ctx context.Context, st *runs.Store, m *batch.Manifest, d batch.Dir, lock *pipeline.Lock, o Options) (*experiment.Experiment, string, string, error) {
	e, trials, err := loadFrozen(d, m)
	if err != nil {
		return nil, "", "", err
	}
	built, err := experiment.Build(ctx, e, trials, experiment.Env{DataDir: m.DataDir})
	if err != nil {
		return nil, "", "", err
	}
	if built.Report == "" {
		return e, "", "the experiment has no report stage", nil
	}
	ri, err := st.Run(ctx, m.RunID)
	if err != nil {
		return nil, "", "", err
	}
	reports := o.Reports
	if reports == "" {
		reports = m.Reports
	}
	out, err := sweep.RebuildReport(ctx, st, ri, built, sweep.RunOptions{WorkDir: m.WorkDir, Jobs: max(1, o.Jobs), ReportDir: reports, Log: o.Log}, lock)
	if err != nil {
		return nil, "", "", fmt.Errorf("%w (the tasks must share --workdir with the submit host)", err)
	}
	return e, out.ReportPath, "", nil
}

// awaitRetried counts the failed trials that the run's latest submission
// submitted again (--retry-failed) and that have no result of it yet as
// pending, not failed: the earlier submission's failure is not the
// retry's outcome.
func awaitRetried(ctx context.Context, st *runs.Store, d batch.Dir, c *batch.Collected, m *batch.Manifest) error {
	if len(c.Failures) == 0 {
		return nil
	}
	jobs, err := st.SlurmJobs(ctx, m.RunID)
	if err != nil {
		return err
	}
	latest := latestTrialsJobs(jobs)
	if len(latest) == 0 {
		return nil
	}
	res, err := batch.Latest(d)
	if err != nil {
		return err
	}
	tm := newTaskMap(d, m)
	for _, j := range latest {
		submitted, err := tm.submitted(j)
		if err != nil {
			return err
		}
		for _, i := range submitted {
			if i < 0 || i >= len(m.Trials) {
				continue
			}
			tr := m.Trials[i]
			if _, failed := c.Failures[tr.ID]; !failed {
				continue
			}
			if r := res[i]; r != nil && r.Attempt >= j.Attempt {
				continue // the retry's own result
			}
			delete(c.Failures, tr.ID)
			c.Failed--
			c.Pending = append(c.Pending, i)
		}
	}
	slices.Sort(c.Pending)
	return nil
}
