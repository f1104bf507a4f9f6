package slurmexec

import (
	"context"
	"time"

	"goldstone/internal/batch"
	"goldstone/internal/slurm"
	"goldstone/runs"
)

// RunStatus is a run's state on the cluster.
type RunStatus struct {
	Run       *runs.RunInfo
	Dir       batch.Dir
	Jobs      []runs.SlurmJob
	Trials    []batch.TrialState
	Counts    map[string]int
	QueueJob  string    // the job squeue was asked about ("" when none)
	QueueAt   time.Time // when
	QueueErr  error     // squeue failed: the states come from the result files only
	Collected int       // trials whose latest result is in the database
}

// Status reads a run's result files (the truth) and asks the queue, once,
// about its latest array job (a hint). p rate-limits squeue calls: pass the
// same Poller to watch a run.
func Status(ctx context.Context, st *runs.Store, id int64, workdir string, p *slurm.Poller) (*RunStatus, error) {
	ri, err := st.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	d := batch.RunDir(workdir, ri.Experiment, id)
	m, err := batch.ReadManifest(d)
	if err != nil {
		return nil, err
	}
	out := &RunStatus{Run: ri, Dir: d}
	if out.Jobs, err = st.SlurmJobs(ctx, id); err != nil {
		return nil, err
	}
	queue := map[int]string{}
	for i := len(out.Jobs) - 1; i >= 0; i-- {
		if out.Jobs[i].Role != runs.RoleTrials {
			continue
		}
		out.QueueJob = out.Jobs[i].JobID
		var tasks []slurm.Task
		tasks, out.QueueAt, out.QueueErr = p.Queue(ctx, out.QueueJob)
		for _, t := range tasks {
			if t.Index >= 0 {
				queue[t.Index] = t.State
			}
		}
		break
	}
	if out.Trials, err = batch.Status(d, m, queue); err != nil {
		return nil, err
	}
	out.Counts = batch.Count(out.Trials)
	atts, err := st.Attempts(ctx, id)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, a := range atts {
		seen[a.Trial] = true
	}
	out.Collected = len(seen)
	return out, nil
}
