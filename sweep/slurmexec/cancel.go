package slurmexec

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"goldstone/internal/slurm"
	"goldstone/runs"
	"goldstone/sweep/batch"
)

// CancelRun cancels run id's jobs (Cancel) and marks the run interrupted
// when it was running (the command that submitted it resumes it). It
// returns the jobs cancelled and the run's status before.
func CancelRun(ctx context.Context, st *runs.Store, id int64, o Options) ([]string, string, error) {
	cancelled, err := Cancel(ctx, st, id, o)
	if err != nil {
		return cancelled, "", err
	}
	ri, err := st.Run(ctx, id)
	if err != nil {
		return cancelled, "", err
	}
	if ri.Status != runs.StatusRunning {
		return cancelled, ri.Status, nil
	}
	return cancelled, ri.Status, st.SetRunStatus(ctx, id, runs.StatusInterrupted)
}

// Cancel cancels (the Slurm back end: scancels) every job of run id that still has tasks in the queue:
// those the database records, and those a submitter killed between sbatch
// and recording made (its intent is left in the run's directory), found in
// the queue by the run's job names (the trials', each split array's, the
// shared and the collect job's). It returns "JOB (role)" for each job
// cancelled.
func Cancel(ctx context.Context, st *runs.Store, id int64, o Options) ([]string, error) {
	jobs, err := st.SlurmJobs(ctx, id)
	if err != nil {
		return nil, err
	}
	c := o.client()
	var cancelled []string
	done := map[string]bool{}
	cancel := func(job, role string) error {
		if done[job] {
			return nil
		}
		done[job] = true
		if err := c.Cancel(ctx, job, -1); err != nil {
			return fmt.Errorf("run %d: cancel job %s: %w", id, job, err)
		}
		cancelled = append(cancelled, job+" ("+role+")")
		return nil
	}
	for _, j := range jobs {
		tasks, err := c.Queue(ctx, j.JobID)
		if err != nil {
			return cancelled, fmt.Errorf("run %d: cannot tell whether job %s is queued: %w", id, j.JobID, err)
		}
		if slices.ContainsFunc(tasks, slurm.Task.Active) {
			if err := cancel(j.JobID, j.Role); err != nil {
				return cancelled, err
			}
		} else {
			done[j.JobID] = true
		}
	}
	ri, err := st.Run(ctx, id)
	if err != nil {
		return cancelled, err
	}
	d := batch.RunDir(o.WorkDir, ri.Experiment, id)
	m, err := batch.ReadManifest(d)
	if err != nil {
		return cancelled, nil // no run directory here: nothing was submitted from it
	}
	in, err := batch.ReadIntent(d)
	if err != nil {
		return cancelled, err
	}
	if in == nil {
		return cancelled, nil
	}
	// A submission was interrupted: its jobs may be queued unrecorded.
	base := m.JobName()
	names := []string{base, base + "-shared", base + "-collect"}
	if !slices.Contains(names, in.Name) {
		names = append(names, in.Name) // a split array's part
	}
	tasks, err := c.QueueByName(ctx, strings.Join(names, ","))
	if err != nil {
		return cancelled, fmt.Errorf("run %d: a submission was interrupted (%s); cannot tell whether its jobs are queued: %w", id, d.IntentPath(), err)
	}
	for _, t := range tasks {
		if !t.Active() {
			continue
		}
		if err := cancel(t.JobID, "unrecorded"); err != nil {
			return cancelled, err
		}
	}
	return cancelled, nil
}
