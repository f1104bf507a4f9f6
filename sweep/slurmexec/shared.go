package slurmexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"goldstone/experiment"
	"goldstone/internal/atomicfile"
	"goldstone/internal/slurm"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/sweep/batch"
	"goldstone/workdir"
)

// sharedGraph is the stages of built that every trial shares: neither a
// trial's nor the report.
func sharedGraph(built *experiment.Built) *pipeline.Graph {
	drop := map[string]bool{}
	for _, tn := range built.Trials {
		for _, n := range tn.Nodes {
			drop[n] = true
		}
	}
	if built.Report != "" {
		drop[built.Report] = true
	}
	return without(built.Graph, drop)
}

// sharedPending reports whether a stage of the shared graph is not in the
// cache (pipeline.Plan: nothing runs), and the bytes of the shared stages'
// external inputs (the data set's files), from which the shared job's and,
// while the shared stages' outputs are unknown, the trials' resources are
// derived.
func sharedPending(ctx context.Context, built *experiment.Built, o Options) (bool, int64, error) {
	g := sharedGraph(built)
	if len(g.Nodes) == 0 {
		return false, 0, nil
	}
	items, err := pipeline.Plan(ctx, g, pipeline.Options{WorkDir: o.WorkDir, Jobs: max(1, o.Jobs)})
	if err != nil {
		return false, 0, fmt.Errorf("shared stages: %w", err)
	}
	pending := false
	for _, it := range items {
		pending = pending || !it.Cached
	}
	var raw int64
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		for _, r := range n.Inputs {
			if r.External() && !seen[r.Path] {
				seen[r.Path] = true
				raw += sizeOf(r.Path)
			}
		}
	}
	return pending, raw, nil
}

// sharedRequest is the shared job's cpus and memory: the options', else
// derived from the data set's size.
func sharedRequest(raw int64, o Options) (cpus, memMB int) {
	cpus, memMB = derive(raw)
	if o.SharedCPUs > 0 {
		cpus = o.SharedCPUs
	}
	if o.SharedMemMB > 0 {
		memMB = o.SharedMemMB
	}
	return cpus, memMB
}

// submitShared submits the shared job of submission attempt (it runs the
// stages every trial shares into the shared cache) and records it; it
// returns its job id.
func submitShared(ctx context.Context, st *runs.Store, d batch.Dir, m *batch.Manifest, attempt int, raw int64, o Options) (string, error) {
	if id, err := adoptShared(ctx, st, m, attempt, o); id != "" || err != nil {
		return id, err
	}
	cpus, mem := sharedRequest(raw, o)
	t := o.Time
	if o.SharedTime != "" {
		t = o.SharedTime
	}
	script := fmt.Sprintf("#!/bin/sh\n# goldstone %s run %d, submission %d: the stages every trial shares\n%sexec %s worker --shared --workdir %s --experiment %s --run %d --attempt %d\n",
		m.Experiment, m.RunID, attempt, setupLines(o), quote(d.Runner(attempt)), quote(m.WorkDir), quote(m.Experiment), m.RunID, attempt)
	// Like the collect job, it gets none of the trials' further arguments
	// (their --mem, --gres ...): its request is its own.
	job := &slurm.Job{Name: m.JobName() + "-shared", Partition: o.Partition, Account: o.Account, Time: t, CPUsPerTask: cpus, MemMB: mem,
		Output: filepath.Join(d.Logs(), "shared-%j.out"), Chdir: m.WorkDir, Extra: o.SharedExtra, Script: script}
	if err := atomicfile.WriteFile(filepath.Join(string(d), fmt.Sprintf("submit.%d.shared.sh", attempt)), []byte(job.ScriptText())); err != nil {
		return "", err
	}
	id, err := o.client().Submit(ctx, job)
	if err != nil {
		return "", fmt.Errorf("submit the shared stages of run %d: %w", m.RunID, err)
	}
	if err := st.RecordSlurmJob(ctx, runs.SlurmJob{RunID: m.RunID, JobID: id, Role: runs.RoleShared, Attempt: attempt, Submitted: time.Now()}); err != nil {
		return "", err
	}
	o.log().Info("submitted the shared stages", "run", m.RunID, "job", id, "cpus", cpus, "mem_mb", mem)
	return id, nil
}

// adoptShared returns the run's shared job still queued that a runner
// killed between its sbatch and recording it left (found by its name,
// unique per run), recorded now as this submission's; "" when there is
// none (or squeue cannot tell: a second shared job then only finds the
// first one's cache entries).
func adoptShared(ctx context.Context, st *runs.Store, m *batch.Manifest, attempt int, o Options) (string, error) {
	tasks, err := o.client().QueueByName(ctx, m.JobName()+"-shared")
	if err != nil {
		return "", nil
	}
	jobs, err := st.SlurmJobs(ctx, m.RunID)
	if err != nil {
		return "", err
	}
	for _, t := range tasks {
		if !t.Active() || slices.ContainsFunc(jobs, func(j runs.SlurmJob) bool { return j.JobID == t.JobID }) {
			continue
		}
		if err := st.RecordSlurmJob(ctx, runs.SlurmJob{RunID: m.RunID, JobID: t.JobID, Role: runs.RoleShared, Attempt: attempt, Submitted: time.Now()}); err != nil {
			return "", err
		}
		o.log().Warn("adopted the shared job of an interrupted submission", "run", m.RunID, "job", t.JobID)
		return t.JobID, nil
	}
	return "", nil
}

// SharedOptions say which shared job to run.
type SharedOptions struct {
	Dir     batch.Dir
	Attempt int
	// Workers is the stages run at once; 0 means $SLURM_CPUS_PER_TASK,
	// else the number of CPUs.
	Workers int
	Out     io.Writer // the job's log lines: each stage's start and end
}

// SharedWorker runs a submission's shared job: the stages every trial of
// the frozen run shares, into the shared cache (in a private workdir whose
// cache/ links to it: the pipeline's per-entry locking keeps concurrent
// writers apart), and writes its result file. The error is the job's: a
// stage that failed, or no manifest.
func SharedWorker(ctx context.Context, opts SharedOptions) (*batch.SharedResult, error) {
	d := opts.Dir
	m, err := batch.ReadManifest(d)
	if err != nil {
		return nil, err
	}
	if opts.Attempt < 1 {
		return nil, fmt.Errorf("attempt %d: want >= 1", opts.Attempt)
	}
	host, _ := os.Hostname()
	res := &batch.SharedResult{RunID: m.RunID, Attempt: opts.Attempt, Host: host, JobID: os.Getenv("SLURM_JOB_ID"), Started: time.Now().UTC()}
	runErr := runSharedJob(ctx, d, m, opts, res)
	res.Ended = time.Now().UTC()
	switch {
	case ctx.Err() != nil:
		res.Status, res.Error = batch.Interrupted, "interrupted: the shared job was stopped (SIGTERM: time limit or scancel)"
	case runErr != nil:
		res.Status, res.Error = batch.Failed, runErr.Error()
	default:
		res.Status = batch.Done
	}
	if err := batch.WriteSharedResult(d, res); err != nil {
		return res, errors.Join(runErr, err)
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, runErr
}

// runSharedJob runs the shared stages of run m and lists in res those
// that ran (were not cached).
func runSharedJob(ctx context.Context, d batch.Dir, m *batch.Manifest, opts SharedOptions, res *batch.SharedResult) error {
	built, err := buildFrozen(ctx, d, m)
	if err != nil {
		return err
	}
	workers := taskWorkers(opts.Workers)
	w, err := batch.LinkCacheAt(d.SharedWorkDir(), workdir.Workdir(m.WorkDir).Cache())
	if err != nil {
		return err
	}
	var failure string
	log := taskObserver(WorkerOptions{Out: opts.Out}, &failure)
	obs := pipeline.ObserverFunc(func(ev pipeline.Event) {
		if ev.Kind == pipeline.Started {
			res.Ran = append(res.Ran, ev.Node)
		}
		log.Event(ev)
	})
	_, err = pipeline.Run(ctx, sharedGraph(built), pipeline.Options{WorkDir: w, Jobs: workers, Observer: obs})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if failure != "" {
		return errors.New(failure)
	}
	return err
}

// sharedFailure describes, in one line, how the shared job of the run's
// latest submission failed (its stage's error, or how sacct says it ended,
// and its log file); "" when that submission had no shared job or it is
// done. Call it once the queue holds none of the run's jobs.
func sharedFailure(ctx context.Context, st *runs.Store, d batch.Dir, id int64, o Options) (string, error) {
	j, err := latestShared(ctx, st, id)
	if err != nil || j == nil {
		return "", err
	}
	r, err := batch.ReadSharedResult(d, j.Attempt)
	if err != nil {
		return "", err
	}
	if r == nil {
		// Still queued or running (a submission stopped before its
		// array): it has not failed.
		tasks, err := o.client().Queue(ctx, j.JobID)
		if err != nil || slices.ContainsFunc(tasks, slurm.Task.Active) {
			return "", nil
		}
	}
	var why string
	switch {
	case r != nil && r.Status == batch.Done:
		return "", nil
	case r != nil:
		why = r.Error
	default:
		why = "it ended without a result"
		if states, err := o.client().Accounting(ctx, j.JobID); err == nil && states[-1] != "" {
			why += " (sacct: " + states[-1] + ")"
		}
	}
	return fmt.Sprintf("the shared stages' job %s (submission %d) failed: %s; log: %s", j.JobID, j.Attempt, why, d.SharedLog(j.JobID)), nil
}

// latestShared is the shared job of the run's latest submission; nil when
// that submission had none.
func latestShared(ctx context.Context, st *runs.Store, id int64) (*runs.SlurmJob, error) {
	jobs, err := st.SlurmJobs(ctx, id)
	if err != nil {
		return nil, err
	}
	latest := 0
	for _, j := range jobs {
		latest = max(latest, j.Attempt)
	}
	for _, j := range jobs {
		if j.Role == runs.RoleShared && j.Attempt == latest {
			return &j, nil
		}
	}
	return nil, nil
}
