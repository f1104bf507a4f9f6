package slurmexec

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"goldstone/internal/atomicfile"
	"goldstone/internal/slurm"
	"goldstone/runs"
	"goldstone/sweep/slurmexec/batch"
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
	attempt := 0
	for i := len(out.Jobs) - 1; i >= 0; i-- {
		if out.Jobs[i].Role != runs.RoleTrials {
			continue
		}
		out.QueueJob, attempt = out.Jobs[i].JobID, out.Jobs[i].Attempt
		var tasks []slurm.Task
		tasks, out.QueueAt, out.QueueErr = queueOf(ctx, d, out.QueueJob, p)
		for _, t := range tasks {
			if t.Index >= 0 {
				queue[t.Index] = t.State
			}
		}
		break
	}
	if out.Trials, err = batch.Status(d, m, queue, attempt); err != nil {
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

// queueCache is the last answer of squeue about a run's array job, kept in
// the run directory so that status commands in other processes (a shell
// loop, several users) ask squeue at most once per Poller interval too.
type queueCache struct {
	Job   string       `json:"job"`
	At    time.Time    `json:"at"`
	Tasks []slurm.Task `json:"tasks"`
}

// queueOf asks p about job unless the run directory holds an answer about
// it younger than p's interval.
func queueOf(ctx context.Context, d batch.Dir, job string, p *slurm.Poller) ([]slurm.Task, time.Time, error) {
	path := filepath.Join(string(d), "queue.json")
	interval := p.Interval
	if interval <= 0 {
		interval = 30 * time.Second
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	var c queueCache
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &c) == nil && c.Job == job {
		if age := now().Sub(c.At); age >= 0 && age < interval {
			return c.Tasks, c.At, nil
		}
	}
	tasks, at, err := p.Queue(ctx, job)
	if err == nil {
		if b, merr := json.Marshal(queueCache{Job: job, At: at, Tasks: tasks}); merr == nil {
			atomicfile.WriteFile(path, b) // a cache: failing to write it only costs a call
		}
	}
	return tasks, at, err
}
