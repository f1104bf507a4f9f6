package slurmexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"goldstone/internal/slurm"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/stages"
	"goldstone/sweep"
	"goldstone/sweep/slurmexec/batch"
)

// ErrAlreadySubmitted is returned (wrapped) when the run still has tasks in
// the queue: a second submission of the same run is refused.
var ErrAlreadySubmitted = errors.New("already submitted")

// Submission is what Submit did.
type Submission struct {
	RunID      int64
	Dir        batch.Dir
	Resumed    bool // an earlier submission of the same run was resumed
	UpToDate   bool // the run had ended: nothing submitted
	Trials     int
	Attempt    int    // of this submission (0 when nothing was submitted)
	Array      string // sbatch --array of the trials submitted
	ArrayJob   string
	CollectJob string // "" with NoCollectJob or when nothing was submitted
	Submitted  []int  // task indices submitted
	CPUs       int    // per task
	MemMB      int    // per task
	Collected  *batch.Collected
	Finished   *Finished // nothing was left to run: the run was ended
}

// Submit hands the experiment's trials to Slurm through sweep.Execute and
// the Slurm executor: a new run, or the resumption of the latest run with
// the same configuration when it has not ended (only the trials without a
// result are submitted again). See the package doc.
func Submit(ctx context.Context, st *runs.Store, e *stages.Experiment, o Options) (*Submission, error) {
	x, err := NewExecutor(o)
	if err != nil {
		return nil, err
	}
	out, err := sweep.Execute(ctx, st, e, x, x.RunOptions())
	if out != nil && out.UpToDate {
		return &Submission{RunID: out.RunID, UpToDate: true, Trials: out.Trials, Dir: batch.RunDir(x.o.WorkDir, e.Name, out.RunID)}, err
	}
	return x.Submission, err
}

// Executor is the Slurm executor (sweep.Executor): it runs the stages the
// trials share into the shared cache, freezes the run's manifest, the
// experiments file and the runner binary into the run's directory, and
// submits the trials without a result as an array job, then hands the run
// off; Collect records the tasks' results and ends it. One Executor serves
// one submission: Submission says what it did.
type Executor struct {
	o          Options
	Submission *Submission // set by Run
}

// NewExecutor checks o and makes its paths absolute (the jobs run in other
// directories, on other hosts).
func NewExecutor(o Options) (*Executor, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := o.absolute(); err != nil {
		return nil, err
	}
	return &Executor{o: o}, nil
}

// RunOptions are the sweep options of a submission: its work and data
// directories, reports, note, tags and environment.
func (x *Executor) RunOptions() sweep.RunOptions {
	o := x.o
	return sweep.RunOptions{WorkDir: o.WorkDir, DataDir: o.DataDir, Jobs: o.Jobs, RetryFailed: o.RetryFailed,
		ReportDir: o.Reports, Note: o.Note, Tags: o.Tags, Env: o.Env, Log: o.Log}
}

// Name implements sweep.Executor.
func (x *Executor) Name() string { return runs.ExecutorSlurm }

// Run implements sweep.Executor: it submits the trials of job that have no
// result (and, with RetryFailed, the failed ones), or ends the run when
// none is left.
func (x *Executor) Run(ctx context.Context, job *sweep.Job) error {
	o, st, e, log := x.o, job.Store, job.Experiment, x.o.log()
	out := &Submission{RunID: job.RunID, Resumed: job.Outcome.Resumed, Trials: len(job.Trials)}
	x.Submission = out
	// The shared stages run here, under the run's workdir lock.
	inBytes, err := runShared(ctx, job.Built, job.Lock, o)
	if err != nil {
		return err
	}
	d := batch.RunDir(o.WorkDir, e.Name, job.RunID)
	unlock, err := d.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	out.Dir = d
	var (
		m    *batch.Manifest
		todo []int
	)
	if !out.Resumed {
		if m, err = freeze(d, job, inBytes, o); err != nil {
			return err
		}
		for _, tr := range m.Trials {
			todo = append(todo, tr.Index)
		}
		log.Info("new run", "experiment", e.Name, "run", job.RunID, "trials", len(job.Trials), "executor", "slurm", "dir", d)
	} else if m, todo, err = x.resume(ctx, st, d, job); err != nil {
		return err
	}
	job.Outcome.HandedOff = true
	if len(todo) == 0 {
		out.Finished, err = Finish(ctx, st, d, m, o)
		return err
	}
	jobs, err := st.SlurmJobs(ctx, job.RunID)
	if err != nil {
		return err
	}
	out.Attempt = 1
	for _, j := range jobs {
		out.Attempt = max(out.Attempt, j.Attempt+1)
	}
	return submitTasks(ctx, st, d, m, todo, out, o)
}

// resume reads a resumed run's manifest, refuses a run whose tasks are
// still queued, collects the results the tasks left, and returns the
// trials to submit again.
func (x *Executor) resume(ctx context.Context, st *runs.Store, d batch.Dir, job *sweep.Job) (*batch.Manifest, []int, error) {
	m, err := batch.ReadManifest(d)
	if err != nil {
		return nil, nil, err
	}
	if m.ConfigHash != job.ConfigHash {
		return nil, nil, fmt.Errorf("%s: config hash %s, run %d has %s", d.Manifest(), m.ConfigHash, job.RunID, job.ConfigHash)
	}
	if err := refuseQueued(ctx, st, job.RunID, x.o); err != nil {
		return nil, nil, err
	}
	c, err := batch.Collect(ctx, st, d, m)
	if err != nil {
		return nil, nil, err
	}
	x.Submission.Collected = c
	todo := slices.Clone(c.Pending)
	if x.o.RetryFailed {
		for _, tr := range m.Trials {
			if _, failed := c.Failures[tr.ID]; failed {
				todo = append(todo, tr.Index)
			}
		}
		slices.Sort(todo)
	}
	x.o.log().Info("resuming run", "experiment", job.Experiment.Name, "run", job.RunID, "done", c.Done, "failed", c.Failed, "to submit", len(todo))
	return m, todo, nil
}

// runShared runs the stages every trial shares (neither a trial's nor the
// report) into the shared cache, and returns the bytes of each trial's
// inputs, by trial index.
func runShared(ctx context.Context, built *stages.Built, lock *pipeline.Lock, o Options) ([]int64, error) {
	drop := map[string]bool{}
	for _, tn := range built.Trials {
		for _, n := range tn.Nodes {
			drop[n] = true
		}
	}
	if built.Report != "" {
		drop[built.Report] = true
	}
	shared := without(built.Graph, drop)
	outputs := map[string]map[string]string{}
	if len(shared.Nodes) > 0 {
		res, err := pipeline.Run(ctx, shared, pipeline.Options{WorkDir: o.WorkDir, Jobs: o.Jobs, Lock: lock})
		if err != nil {
			return nil, fmt.Errorf("shared stages: %w", err)
		}
		for id, nr := range res.Nodes {
			outputs[id] = nr.Outputs
		}
	}
	byID := map[string]*pipeline.Node{}
	for _, n := range built.Graph.Nodes {
		byID[n.ID] = n
	}
	sizes := make([]int64, len(built.Trials))
	for i, tn := range built.Trials {
		seen := map[string]bool{}
		for _, id := range tn.Nodes {
			n := byID[id]
			if n == nil {
				continue
			}
			for _, r := range n.Inputs {
				var p string
				if r.External() {
					p = r.Path
				} else if outs, ok := outputs[r.Node]; ok {
					p = outs[r.Output]
				}
				if p != "" && !seen[p] {
					seen[p] = true
					sizes[i] += sizeOf(p)
				}
			}
		}
	}
	return sizes, nil
}

// freeze writes the run directory: the experiments file, the runner binary
// and the manifest of every trial of job (with the parameters and seed the
// store records), and the resources each task asks for.
func freeze(d batch.Dir, job *sweep.Job, inBytes []int64, o Options) (*batch.Manifest, error) {
	if err := batch.Freeze(o.ConfigPath, d.Config(), 0o644); err != nil {
		return nil, err
	}
	m := &batch.Manifest{Format: batch.ManifestFormat, RunID: job.RunID, Experiment: job.Experiment.Name, ConfigHash: job.ConfigHash,
		Sets: slices.Clone(o.Sets), DB: o.DB, WorkDir: o.WorkDir, DataDir: o.DataDir, Reports: o.Reports,
		Created: time.Now().UTC()}
	for i, tr := range job.Trials {
		cpus, mem := derive(inBytes[i])
		if o.CPUs > 0 {
			cpus = o.CPUs
		}
		if o.MemMB > 0 {
			mem = o.MemMB
		}
		m.Trials = append(m.Trials, batch.Trial{Index: i, ID: tr.ID, Name: tr.Name, Seed: int64(tr.Seed),
			Params: job.TrialParams(tr), CPUs: cpus, MemMB: mem})
	}
	if err := batch.WriteManifest(d, m); err != nil {
		return nil, err
	}
	return m, nil
}

// refuseQueued returns ErrAlreadySubmitted when a job of the run's latest
// submission still has tasks in the queue.
func refuseQueued(ctx context.Context, st *runs.Store, runID int64, o Options) error {
	jobs, err := st.SlurmJobs(ctx, runID)
	if err != nil {
		return err
	}
	c := o.client()
	for _, j := range jobs {
		tasks, err := c.Queue(ctx, j.JobID)
		if err != nil {
			return fmt.Errorf("run %d: cannot tell whether job %s is still queued: %w", runID, j.JobID, err)
		}
		tasks = slices.DeleteFunc(tasks, func(t slurm.Task) bool { return !t.Active() })
		if len(tasks) > 0 {
			return fmt.Errorf("run %d is %w: its %s job %s has %d task(s) queued or running; watch it with 'runner status --run %d' or cancel it with 'scancel %s' first",
				runID, ErrAlreadySubmitted, j.Role, j.JobID, len(tasks), runID, j.JobID)
		}
	}
	return nil
}

// quote quotes s for a POSIX shell.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// submitTasks submits the array job of the trials todo and the dependent
// collect job, and records them.
func submitTasks(ctx context.Context, st *runs.Store, d batch.Dir, m *batch.Manifest, todo []int, out *Submission, o Options) error {
	c := o.client()
	for _, i := range todo {
		out.CPUs = max(out.CPUs, m.Trials[i].CPUs)
		out.MemMB = max(out.MemMB, m.Trials[i].MemMB)
	}
	if err := os.MkdirAll(d.Logs(), 0o755); err != nil {
		return err
	}
	// This submission's tasks run the runner of this submission, frozen:
	// rebuilding it while they wait changes nothing.
	exe := o.Runner
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("find the runner binary: %w", err)
		}
	}
	if err := batch.FreezeShared(exe, filepath.Join(m.WorkDir, "batch", "bin"), d.Runner(out.Attempt), 0o755); err != nil {
		return err
	}
	runner := quote(d.Runner(out.Attempt))
	common := fmt.Sprintf("--workdir %s --experiment %s --run %d", quote(m.WorkDir), quote(m.Experiment), m.RunID)
	name := fmt.Sprintf("gs-%s-%d", m.Experiment, m.RunID)
	limit := o.MaxParallel
	if limit >= len(todo) {
		limit = 0 // no limit to state
	}
	out.Array = slurm.ArraySpec(todo, limit)
	// exec: the task's shell is the runner, so --signal=B:TERM reaches it.
	script := fmt.Sprintf("#!/bin/sh\n# goldstone %s run %d, submission %d: one trial per array task\nexec %s worker %s --attempt %d --index \"$SLURM_ARRAY_TASK_ID\"\n",
		m.Experiment, m.RunID, out.Attempt, runner, common, out.Attempt)
	job := &slurm.Job{Name: name, Array: out.Array, Partition: o.Partition, Account: o.Account, Time: o.Time,
		CPUsPerTask: out.CPUs, MemMB: out.MemMB, Output: filepath.Join(d.Logs(), "%A_%a.out"), Signal: "B:TERM@120",
		Chdir: m.WorkDir, Extra: o.Extra, Script: script}
	id, err := c.Submit(ctx, job)
	if err != nil {
		return fmt.Errorf("submit the trials of run %d: %w", m.RunID, err)
	}
	out.ArrayJob, out.Submitted = id, slices.Clone(todo)
	if err := st.RecordSlurmJob(ctx, runs.SlurmJob{RunID: m.RunID, JobID: id, Role: runs.RoleTrials, Attempt: out.Attempt, Array: out.Array, Submitted: time.Now()}); err != nil {
		return err
	}
	o.log().Info("submitted trials", "run", m.RunID, "job", id, "array", out.Array, "cpus", out.CPUs, "mem_mb", out.MemMB)
	if o.NoCollectJob {
		return nil
	}
	cscript := fmt.Sprintf("#!/bin/sh\n# goldstone %s run %d: collect the results of job %s\nexec %s collect %s --db %s --reports %s --data-dir %s\n",
		m.Experiment, m.RunID, id, runner, common, quote(m.DB), quote(m.Reports), quote(m.DataDir))
	cjob := &slurm.Job{Name: name + "-collect", Partition: o.Partition, Account: o.Account, Time: o.Time, CPUsPerTask: 1, MemMB: 2048,
		Output: filepath.Join(d.Logs(), "collect-%j.out"), Dependency: "afterany:" + id, Chdir: m.WorkDir, Extra: o.Extra, Script: cscript}
	cid, err := c.Submit(ctx, cjob)
	if err != nil {
		return fmt.Errorf("submit the collect job of run %d (the trials are submitted as job %s; run 'runner collect --run %d' when they end): %w", m.RunID, id, m.RunID, err)
	}
	out.CollectJob = cid
	return st.RecordSlurmJob(ctx, runs.SlurmJob{RunID: m.RunID, JobID: cid, Role: runs.RoleCollect, Attempt: out.Attempt, Submitted: time.Now()})
}
