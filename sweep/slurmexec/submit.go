package slurmexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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

// Submit hands the experiment's trials to Slurm: a new run, or the
// resumption of the latest run with the same configuration when it has not
// ended (only the trials without a result are submitted again). See the
// package doc.
func Submit(ctx context.Context, st *runs.Store, e *stages.Experiment, o Options) (*Submission, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := o.absolute(); err != nil {
		return nil, err
	}
	log := o.log()
	trials := e.Trials()
	cfgJSON, cfgHash := e.Resolved()
	out := &Submission{Trials: len(trials)}

	var resume *runs.RunInfo
	last, err := st.LatestRun(ctx, e.Name, runs.KindRun)
	if err != nil {
		return nil, err
	}
	if last != nil && last.ConfigHash == cfgHash {
		exe, err := st.Executor(ctx, last.ID)
		if err != nil {
			return nil, err
		}
		switch {
		case runs.Ended(last.Status) && !o.RetryFailed:
			out.RunID, out.UpToDate = last.ID, true
			out.Dir = batch.RunDir(o.WorkDir, e.Name, last.ID)
			return out, nil
		case exe == runs.ExecutorSlurm:
			resume = last
		}
	}

	// The shared stages run here, before anything is recorded: a missing
	// data set leaves no run behind.
	workers := max(1, runtime.NumCPU())
	built, err := stages.Build(ctx, e, trials, stages.Env{DataDir: o.DataDir, Workers: workers, Fetch: true})
	if err != nil {
		return nil, err
	}
	inBytes, err := runShared(ctx, built, o)
	if err != nil {
		return nil, err
	}

	var (
		d     batch.Dir
		m     *batch.Manifest
		todo  []int
		runID int64
	)
	if resume == nil {
		info := runs.Environment()
		info.Experiment, info.Kind, info.ConfigJSON, info.ConfigHash = e.Name, runs.KindRun, cfgJSON, cfgHash
		if runID, err = st.CreateRun(ctx, info); err != nil {
			return nil, err
		}
		if err := st.SetExecutor(ctx, runID, runs.ExecutorSlurm); err != nil {
			return nil, err
		}
		if err := sweep.RecordRunInfo(ctx, st, runID, o.Note, o.Tags, o.Env); err != nil {
			return nil, err
		}
		d = batch.RunDir(o.WorkDir, e.Name, runID)
		unlock, err := d.Lock()
		if err != nil {
			return nil, err
		}
		defer unlock()
		if m, err = freeze(d, e, runID, cfgHash, trials, inBytes, o); err != nil {
			return nil, err
		}
		for _, tr := range m.Trials {
			if err := st.UpsertTrial(ctx, runs.Trial{RunID: runID, ID: tr.ID, Params: tr.Params, Seed: tr.Seed, Status: runs.StatusPending}); err != nil {
				return nil, err
			}
			todo = append(todo, tr.Index)
		}
		log.Info("new run", "experiment", e.Name, "run", runID, "trials", len(trials), "executor", "slurm", "dir", d)
	} else {
		runID, out.Resumed = resume.ID, true
		d = batch.RunDir(o.WorkDir, e.Name, runID)
		unlock, err := d.Lock()
		if err != nil {
			return nil, err
		}
		defer unlock()
		if m, err = batch.ReadManifest(d); err != nil {
			return nil, err
		}
		if m.ConfigHash != cfgHash {
			return nil, fmt.Errorf("%s: config hash %s, run %d has %s", d.Manifest(), m.ConfigHash, runID, cfgHash)
		}
		if err := refuseQueued(ctx, st, runID, o); err != nil {
			return nil, err
		}
		c, err := batch.Collect(ctx, st, d, m)
		if err != nil {
			return nil, err
		}
		out.Collected = c
		todo = slices.Clone(c.Pending)
		if o.RetryFailed {
			for _, tr := range m.Trials {
				if _, failed := c.Failures[tr.ID]; failed {
					todo = append(todo, tr.Index)
				}
			}
			slices.Sort(todo)
		}
		log.Info("resuming run", "experiment", e.Name, "run", runID, "done", c.Done, "failed", c.Failed, "to submit", len(todo))
	}
	out.RunID, out.Dir = runID, d

	if len(todo) == 0 {
		f, err := Finish(ctx, st, d, m, o)
		if err != nil {
			return out, err
		}
		out.Finished = f
		return out, nil
	}
	if err := st.SetRunStatus(ctx, runID, runs.StatusRunning); err != nil {
		return out, err
	}
	jobs, err := st.SlurmJobs(ctx, runID)
	if err != nil {
		return out, err
	}
	out.Attempt = 1
	for _, j := range jobs {
		out.Attempt = max(out.Attempt, j.Attempt+1)
	}
	if err := submitTasks(ctx, st, d, m, todo, out, o); err != nil {
		return out, err
	}
	return out, nil
}

// runShared runs the stages every trial shares (neither a trial's nor the
// report) into the shared cache, and returns the bytes of each trial's
// inputs, by trial index.
func runShared(ctx context.Context, built *stages.Built, o Options) ([]int64, error) {
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
		res, err := pipeline.Run(ctx, shared, pipeline.Options{WorkDir: o.WorkDir, Jobs: o.Jobs})
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
// and the manifest.
func freeze(d batch.Dir, e *stages.Experiment, runID int64, cfgHash string, trials []stages.Trial, inBytes []int64, o Options) (*batch.Manifest, error) {
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return a
	}
	if err := batch.Freeze(o.ConfigPath, d.Config(), 0o644); err != nil {
		return nil, err
	}
	m := &batch.Manifest{Format: batch.ManifestFormat, RunID: runID, Experiment: e.Name, ConfigHash: cfgHash,
		Sets: slices.Clone(o.Sets), DB: abs(o.DB), WorkDir: abs(o.WorkDir), DataDir: abs(o.DataDir), Reports: abs(o.Reports),
		Created: time.Now().UTC()}
	for i, tr := range trials {
		cpus, mem := derive(inBytes[i])
		if o.CPUs > 0 {
			cpus = o.CPUs
		}
		if o.MemMB > 0 {
			mem = o.MemMB
		}
		m.Trials = append(m.Trials, batch.Trial{Index: i, ID: tr.ID, Name: tr.Name, Seed: int64(tr.Seed),
			Params: sweep.TrialParams(tr), CPUs: cpus, MemMB: mem})
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
