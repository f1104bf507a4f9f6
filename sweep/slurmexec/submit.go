package slurmexec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"goldstone/experiment"
	"goldstone/internal/atomicfile"
	"goldstone/internal/fault"
	"goldstone/internal/slurm"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/sweep"
	"goldstone/sweep/batch"
	"goldstone/workdir"
)

// ErrAlreadySubmitted is returned (wrapped) when the run still has tasks in
// the queue: a second submission of the same run is refused.
var ErrAlreadySubmitted = errors.New("already submitted")

// Submission is what Submit did.
type Submission struct {
	RunID    int64
	Dir      batch.Dir
	Resumed  bool // an earlier submission of the same run was resumed
	UpToDate bool // the run had ended: nothing submitted
	Trials   int
	Attempt  int    // of this submission (0 when nothing was submitted)
	Array    string // sbatch --array of the trials submitted (of the first array; see Arrays)
	ArrayJob string // the (first) array job
	// ArrayJobs and Arrays are every array job of the submission and its
	// recorded array_spec: more than one when the sweep is larger than
	// the cluster's MaxArraySize ("OFFSET+SPEC": trial index = OFFSET +
	// array index).
	ArrayJobs  []string
	Arrays     []string
	CollectJob string // "" with NoCollectJob or when nothing was submitted
	// SharedJob runs the stages every trial shares before the array
	// (Options.SharedJob, when one of them was not cached); "" when none
	// was submitted.
	SharedJob string
	Submitted []int  // trial indices submitted
	Tasks     int    // array tasks submitted (fewer than Submitted when packed)
	PerTask   int    // trials per array task when packed (--slurm-trials-per-task); 0: one
	CPUs      int    // per task
	MemMB     int    // per task
	Time      string // time limit per task ("" leaves it to the partition)
	Collected *batch.Collected
	Finished  *Finished // nothing was left to run: the run was ended

	needShared bool  // submit a shared job first
	rawBytes   int64 // the data set's bytes (the shared stages' external inputs)
}

// Submit hands the experiment's trials to Slurm through sweep.Execute and
// the Slurm executor: a new run, or the resumption of the latest run with
// the same configuration when it has not ended (only the trials without a
// result are submitted again). See the package doc.
func Submit(ctx context.Context, st *runs.Store, e *experiment.Experiment, o Options) (*Submission, error) {
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
	// adopted: a search's wave was submitted before (by a runner that was
	// killed) and has tasks queued: Run submits nothing, WaitWave waits.
	adopted bool
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
func (x *Executor) Name() string {
	if x.o.Executor != "" {
		return x.o.Executor
	}
	return Slurm
}

// Run implements sweep.Executor: it submits the trials of job that have no
// result (and, with RetryFailed, the failed ones), or ends the run when
// none is left.
func (x *Executor) Run(ctx context.Context, job *sweep.Job) error {
	o, st, e, log := x.o, job.Store, job.Experiment, x.o.log()
	out := &Submission{RunID: job.RunID, Resumed: job.Outcome.Resumed, Trials: len(job.Trials)}
	x.Submission, x.adopted = out, false
	inBytes, err := x.shared(ctx, job)
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
		log.Info("new run", "experiment", e.Name, "run", job.RunID, "trials", len(job.Trials), "executor", x.Name(), "dir", d)
	} else if m, todo, err = x.resume(ctx, st, d, job); err != nil {
		return err
	}
	job.Outcome.HandedOff = true
	if x.adopted {
		return nil // a search's wave whose tasks are queued: WaitWave waits for them
	}
	if len(todo) == 0 {
		// Every task ended and left its result (the waiting submit was
		// stopped before they did): end the run here, as this
		// run's owner (a search's wave that is not its last leaves it
		// for the next).
		out.Finished, err = endWave(ctx, st, d, m, job.Lock, o)
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
	err = submitTasks(ctx, st, d, m, todo, out, o)
	if err != nil && out.ArrayJob == "" {
		// Nothing was queued: the run must not stay "running". It ends
		// failed, saying why; its trials stay pending, so the same
		// command (once sbatch works) resumes it.
		if ferr := st.FinishRun(context.WithoutCancel(ctx), job.RunID, runs.StatusFailed, ""); ferr != nil {
			return errors.Join(err, ferr)
		}
		job.Outcome.Status = runs.StatusFailed
		return fmt.Errorf("%w; run %d is marked failed, its trials pending: the same command resubmits them", err, job.RunID)
	}
	return err
}

// shared runs the stages every trial shares here, under the run's workdir
// lock, and returns the bytes of each trial's inputs; with
// Options.SharedJob, when one of them is not cached, it runs none and
// leaves them to the submission's shared job (Submission.needShared): the
// bytes are then the data set's, the same for every trial.
func (x *Executor) shared(ctx context.Context, job *sweep.Job) ([]int64, error) {
	if x.o.SharedJob {
		pending, raw, err := sharedPending(ctx, job.Built, x.o)
		if err != nil {
			return nil, err
		}
		if pending {
			x.Submission.needShared, x.Submission.rawBytes = true, raw
			in := make([]int64, len(job.Trials))
			for i := range in {
				in[i] = raw
			}
			return in, nil
		}
	}
	return runShared(ctx, job.Built, job.Lock, x.o)
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
	if _, err := adopt(ctx, st, d, m, x.o); err != nil {
		return nil, nil, err
	}
	if m, err = x.queuedWave(ctx, st, d, m, job); err != nil || x.adopted {
		return m, nil, err
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
func runShared(ctx context.Context, built *experiment.Built, lock *pipeline.Lock, o Options) ([]int64, error) {
	shared := sharedGraph(built)
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
	token := make([]byte, 4)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	wave, err := freezeWave(job.Wave(), 0)
	if err != nil {
		return nil, err
	}
	m := &batch.Manifest{Format: batch.ManifestFormat, RunID: job.RunID, Experiment: job.Experiment.Name, ConfigHash: job.ConfigHash, Search: wave,
		Sets: slices.Clone(o.Sets), DB: o.DB, WorkDir: o.WorkDir, DataDir: o.DataDir, Reports: o.Reports,
		Created: time.Now().UTC(), Token: hex.EncodeToString(token)}
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

// trialsJob is the request of a submission's array job: the options'
// partition, account and time, cpus and memory per task, the warning
// signal before a time limit, and the further arguments extra (last: they
// win).
func trialsJob(o Options, name, array string, cpus, memMB int, extra []string, script string) *slurm.Job {
	return &slurm.Job{Name: name, Array: array, Partition: o.Partition, Account: o.Account, Time: o.Time,
		CPUsPerTask: cpus, MemMB: memMB, OpenMode: "append", Signal: fmt.Sprintf("B:TERM@%d", o.signalLead()), Extra: extra, Script: script}
}

// setupLines are Options.Setup as script lines ("" without any).
func setupLines(o Options) string {
	var b strings.Builder
	for _, l := range o.Setup {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// collectJob is the request of a collect job: 1 cpu, 2 GiB, the options'
// partition, account and time, and CollectExtra.
func collectJob(o Options, name, script string) *slurm.Job {
	return &slurm.Job{Name: name, Partition: o.Partition, Account: o.Account, Time: o.Time, CPUsPerTask: 1, MemMB: 2048,
		Extra: o.CollectExtra, Script: script}
}

// Check implements sweep.Checker: before the run is created or resumed,
// sbatch --test-only is asked whether it would accept the trials' array
// job (partition, account, time limit, QOS and the further arguments, the
// array's size, cpus and memory: the options', or the manifest's of a
// resumed run, or the smallest derived request for a new one, whose
// derived resources are only known once the shared stages ran). A refusal
// ends the submission with sbatch's message and no run recorded.
func (x *Executor) Check(ctx context.Context, job *sweep.Job) error {
	o := x.o
	n, err := x.toSubmit(ctx, job)
	if err != nil || n == 0 {
		return err
	}
	cpus, mem := derive(0)
	if job.RunID != 0 {
		if m, err := batch.ReadManifest(batch.RunDir(o.WorkDir, job.Experiment.Name, job.RunID)); err == nil {
			for _, tr := range m.Trials {
				cpus, mem = max(cpus, tr.CPUs), max(mem, tr.MemMB)
			}
		}
	}
	if o.CPUs > 0 {
		cpus = o.CPUs
	}
	if o.MemMB > 0 {
		mem = o.MemMB
	}
	if err := x.checkResources(job); err != nil {
		return err
	}
	// Packed (--slurm-trials-per-task K), the n trials are ceil(n/K)
	// array tasks.
	tasks := (n + o.perTask() - 1) / o.perTask()
	if err := x.checkSubmitLimit(ctx, job, tasks); err != nil {
		return err
	}
	idx := make([]int, tasks)
	for i := range idx {
		idx[i] = i
	}
	// The first array of the submission (the largest, when the sweep is
	// split: see chunks).
	first := chunks(idx, x.o.maxArraySize(ctx))[0]
	j := trialsJob(o, "gs-"+job.Experiment.Name+"-check", first.spec(o.MaxParallel), cpus, mem, o.Extra, "#!/bin/sh\ntrue\n")
	// Then every other job the run may submit: the shared job (its
	// smallest request) and the collect job, each with its own further
	// arguments, so that a site's required QOS or reservation is checked
	// for all of them before anything is recorded.
	what := "trials"
	err = o.client().TestSubmit(ctx, j)
	if err == nil && o.SharedJob {
		what = "shared job"
		scpus, smem := sharedRequest(0, o)
		t := o.Time
		if o.SharedTime != "" {
			t = o.SharedTime
		}
		err = o.client().TestSubmit(ctx, &slurm.Job{Name: "gs-" + job.Experiment.Name + "-check-shared", Partition: o.Partition, Account: o.Account,
			Time: t, CPUsPerTask: scpus, MemMB: smem, Extra: o.SharedExtra, Script: "#!/bin/sh\ntrue\n"})
	}
	if err == nil && !o.NoCollectJob {
		what = "collect job"
		err = o.client().TestSubmit(ctx, collectJob(o, "gs-"+job.Experiment.Name+"-check-collect", "#!/bin/sh\ntrue\n"))
	}
	if err != nil {
		if what != "trials" {
			err = fmt.Errorf("the %s: %w", what, err)
		}
		if job.RunID != 0 {
			return fmt.Errorf("sbatch --test-only refuses the trials of run %d (nothing submitted; the run is left as it was): %w", job.RunID, err)
		}
		return fmt.Errorf("sbatch --test-only refuses the trials of %s (nothing submitted, no run recorded): %w", job.Experiment.Name, err)
	}
	return nil
}

// checkResources refuses, before anything is recorded, a memory request
// (--slurm-mem or the table's mem_mb, a --mem in --slurm-extra, and
// --slurm-shared-mem) below the least a task of the experiment's data set
// needs (minMem).
func (x *Executor) checkResources(job *sweep.Job) error {
	o := x.o
	if o.MemMB <= 0 && o.SharedMemMB <= 0 {
		if _, _, _, ok := extraResources(o.Extra); !ok {
			return nil
		}
	}
	raw := dataBytes(job.Built)
	if err := checkMem("--slurm-mem", o.MemMB, raw); err != nil {
		return err
	}
	if _, _, mem, ok := extraResources(o.Extra); ok {
		if err := checkMem("--slurm-extra --mem", mem, raw); err != nil {
			return err
		}
	}
	return checkMem("--slurm-shared-mem", o.SharedMemMB, raw)
}

// quote quotes s for a POSIX shell.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// resolveRequest sets the cpus, memory and time limit per task of a
// submission of the trials todo, and returns its further sbatch arguments.
// Resources are resolved at each submission: the options (flags over the
// experiment's table) over what the manifest derived, the further sbatch
// arguments over both (they come last), and a retry scale over all.
func resolveRequest(ctx context.Context, st *runs.Store, d batch.Dir, m *batch.Manifest, todo []int, out *Submission, o Options) []string {
	for _, i := range todo {
		cpus, mem := m.Trials[i].CPUs, m.Trials[i].MemMB
		if o.CPUs > 0 {
			cpus = o.CPUs
		}
		if o.MemMB > 0 {
			mem = o.MemMB
		}
		out.CPUs, out.MemMB = max(out.CPUs, cpus), max(out.MemMB, mem)
	}
	if cpus, ok, _, _ := extraResources(o.Extra); ok {
		out.CPUs = cpus
	}
	if _, _, mem, ok := extraResources(o.Extra); ok {
		out.MemMB = mem
	}
	out.Time = extraTime(o.Extra, o.Time)
	extra := slices.Clone(o.Extra)
	if o.MemRetryScale > 1 || o.TimeRetryScale > 1 {
		lost := lostAs(ctx, st, d, m, todo, out.Attempt, o)
		if stoppedAtLimit(d, todo, out.Attempt-1) {
			// The tasks' own record: no accounting needed.
			if lost == nil {
				lost = map[string]bool{}
			}
			lost["TIMEOUT"] = true
		}
		// A scaled request goes last, after the further arguments: the
		// last of two same flags wins in sbatch.
		if mem := scaledMem(d, out.Attempt, lost, o); mem > out.MemMB {
			o.log().Warn("more memory: the previous submission's tasks ran out of it", "run", m.RunID, "mem_mb", mem, "was", out.MemMB)
			out.MemMB = mem
			extra = append(extra, fmt.Sprintf("--mem=%dM", mem))
		}
		if t := scaledTime(d, out.Attempt, lost, o); t != "" {
			o.log().Warn("more time: the previous submission's tasks reached their limit", "run", m.RunID, "time", t, "was", out.Time)
			out.Time = t
			extra = append(extra, "--time="+t)
		}
	}
	return extra
}

// submitTasks submits the array job of the trials todo and the dependent
// collect job, and records them.
func submitTasks(ctx context.Context, st *runs.Store, d batch.Dir, m *batch.Manifest, todo []int, out *Submission, o Options) error {
	c := o.client()
	extra := resolveRequest(ctx, st, d, m, todo, out, o)
	if err := os.MkdirAll(d.Logs(), 0o755); err != nil {
		return err
	}
	if err := freezeRunner(d, m, out.Attempt, o); err != nil {
		return err
	}
	name := m.JobName()
	units, packs, err := packTasks(d, m, todo, out, o)
	if err != nil {
		return err
	}
	// A sweep larger than the cluster's MaxArraySize goes as several
	// arrays (their task indices below it), collected as one run.
	parts := chunks(units, o.maxArraySize(ctx))
	if out.needShared {
		var err error
		if out.SharedJob, err = submitShared(ctx, st, d, m, out.Attempt, out.rawBytes, o); err != nil {
			return err
		}
	}
	// One throttle for the whole sweep: Slurm's %K limits each array on
	// its own, so when the trials to run outnumber K and go as several
	// arrays, each array waits for the one before it to end (afterany)
	// and at most K of the sweep's tasks run at once.
	chain := o.MaxParallel > 0 && len(units) > o.MaxParallel && len(parts) > 1
	prev := ""
	for k, part := range parts {
		spec := part.spec(o.MaxParallel)
		recorded := part.recorded(spec)
		index, jobName, scriptPath := `"$SLURM_ARRAY_TASK_ID"`, name, d.Script(out.Attempt)
		if part.Offset > 0 {
			index = fmt.Sprintf(`"$((%d + SLURM_ARRAY_TASK_ID))"`, part.Offset)
		}
		if k > 0 {
			jobName = fmt.Sprintf("%s-part%d", name, k)
			scriptPath = strings.TrimSuffix(scriptPath, ".sh") + fmt.Sprintf(".part%d.sh", k)
		}
		job := trialsJob(o, jobName, spec, out.CPUs, out.MemMB, extra, taskScript(d, m, out.Attempt, packs, index, o))
		job.Output, job.Chdir = filepath.Join(d.Logs(), "%A_%a.out"), m.WorkDir
		if out.SharedJob != "" {
			// Once the shared stages are in the cache; a failed shared
			// job cancels the array (Collect then ends the run failed).
			job.Dependency, job.KillOnInvalidDep = "afterok:"+out.SharedJob, true
		}
		if chain && prev != "" {
			// "," is AND: a failed shared job still cancels this array.
			job.Dependency = strings.TrimPrefix(job.Dependency+",afterany:"+prev, ",")
		}
		// The intent first: a runner killed between sbatch and recording
		// the job leaves it, and the next submission adopts the job
		// (adopt).
		if err := batch.WriteIntent(d, &batch.Intent{Attempt: out.Attempt, Name: jobName, Array: recorded, Created: time.Now().UTC()}); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(scriptPath, []byte(job.ScriptText())); err != nil {
			return err
		}
		id, err := c.Submit(ctx, job)
		if err != nil {
			batch.RemoveIntent(d)
			if k > 0 {
				return fmt.Errorf("submit the trials of run %d: array %d of %d (the trials of jobs %s are queued; the others stay pending and a later submission of the run submits them): %w",
					m.RunID, k+1, len(parts), strings.Join(out.ArrayJobs, ", "), err)
			}
			return fmt.Errorf("submit the trials of run %d: %w", m.RunID, err)
		}
		fault.Point("slurm:submitted")
		prev = id
		if k == 0 {
			out.ArrayJob, out.Array = id, recorded
		}
		out.ArrayJobs, out.Arrays = append(out.ArrayJobs, id), append(out.Arrays, recorded)
		for _, t := range part.Indices {
			out.Submitted = append(out.Submitted, packs.Trials(t)...)
		}
		out.Tasks += len(part.Indices)
		if err := st.RecordSlurmJob(ctx, runs.SlurmJob{RunID: m.RunID, JobID: id, Role: runs.RoleTrials, Attempt: out.Attempt, Array: recorded, Submitted: time.Now()}); err != nil {
			return err
		}
		if err := batch.RemoveIntent(d); err != nil {
			return err
		}
		o.log().Info("submitted trials", "run", m.RunID, "job", id, "array", recorded, "cpus", out.CPUs, "mem_mb", out.MemMB)
	}
	if !o.NoCollectJob {
		var err error
		if out.CollectJob, err = submitCollect(ctx, st, d, m, out.ArrayJobs, out.Attempt, o); err != nil {
			return err
		}
	}
	return nil
}

// taskScript is the batch script of a submission's array: the setup
// lines, then the frozen runner's worker for the task index (a shell
// expression), with --pack when the submission is packed.
func taskScript(d batch.Dir, m *batch.Manifest, attempt int, packs *batch.Packs, index string, o Options) string {
	runner := quote(d.Runner(attempt))
	common := fmt.Sprintf("--workdir %s --experiment %s --run %d", quote(m.WorkDir), quote(m.Experiment), m.RunID)
	ck := ""
	for _, a := range o.CheckpointArgs {
		ck += " " + quote(a)
	}
	what, pack := "one trial per array task", ""
	if packs != nil {
		what, pack = fmt.Sprintf("up to %d trials per array task (%s)", packs.PerTask, filepath.Base(d.PacksPath(attempt))), " --pack"
	}
	// exec: the task's shell is the runner, so --signal=B:TERM reaches it.
	return fmt.Sprintf("#!/bin/sh\n# goldstone %s run %d, submission %d: %s\n%sexec %s worker %s%s --attempt %d%s --index %s\n",
		m.Experiment, m.RunID, attempt, what, setupLines(o), runner, common, ck, attempt, pack, index)
}

// packTasks returns the array task indices of a submission of the trials
// todo: the trials themselves, one per task, or with
// Options.TrialsPerTask K > 1 the tasks 0..ceil(n/K)-1 of the pack file it
// writes for the submission (trials in manifest order, chunked by K; nil
// Packs when not packed).
func packTasks(d batch.Dir, m *batch.Manifest, todo []int, out *Submission, o Options) ([]int, *batch.Packs, error) {
	k := o.perTask()
	if k == 1 {
		// A packed submission of this number that never reached the
		// queue must not map this one's tasks.
		return todo, nil, batch.RemovePacks(d, out.Attempt)
	}
	p := &batch.Packs{Attempt: out.Attempt, PerTask: k, Tasks: batch.Pack(todo, k)}
	if err := batch.WritePacks(d, m, p); err != nil {
		return nil, nil, err
	}
	out.PerTask = k
	units := make([]int, len(p.Tasks))
	for i := range units {
		units[i] = i
	}
	return units, p, nil
}

// freezeRunner copies the runner into the submission's batch directory:
// this submission's tasks run the runner of this submission, frozen, so
// rebuilding it while they wait changes nothing.
func freezeRunner(d batch.Dir, m *batch.Manifest, attempt int, o Options) error {
	exe := o.Runner
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("find the runner binary: %w", err)
		}
	}
	return batch.FreezeShared(exe, workdir.Workdir(m.WorkDir).BatchBin(), d.Runner(attempt), 0o755)
}

// submitCollect submits the collect job of a submission's trials jobs ids
// (it runs once they all ended) and records it.
func submitCollect(ctx context.Context, st *runs.Store, d batch.Dir, m *batch.Manifest, ids []string, attempt int, o Options) (string, error) {
	id := strings.Join(ids, ":")
	c := o.client()
	runner := quote(d.Runner(attempt))
	common := fmt.Sprintf("--workdir %s --experiment %s --run %d", quote(m.WorkDir), quote(m.Experiment), m.RunID)
	name := m.JobName()
	cscript := fmt.Sprintf("#!/bin/sh\n# goldstone %s run %d: collect the results of job %s\nexec %s collect %s --db %s --reports %s --data-dir %s\n",
		m.Experiment, m.RunID, id, runner, common, quote(m.DB), quote(m.Reports), quote(m.DataDir))
	// The collect job asks for its own small request: none of the
	// trials' further arguments (--mem, --gres, --qos=long...).
	cjob := collectJob(o, name+"-collect", cscript)
	cjob.Output, cjob.Dependency, cjob.Chdir = filepath.Join(d.Logs(), "collect-%j.out"), "afterany:"+id, m.WorkDir
	cid, err := c.Submit(ctx, cjob)
	if err != nil {
		return "", fmt.Errorf("submit the collect job of run %d (the trials are submitted as job %s; run 'runner collect --run %d' when they end): %w", m.RunID, id, m.RunID, err)
	}
	return cid, st.RecordSlurmJob(ctx, runs.SlurmJob{RunID: m.RunID, JobID: cid, Role: runs.RoleCollect, Attempt: attempt, Submitted: time.Now()})
}

// adopt finds the jobs of a submission that a killed runner made but did
// not record (its intent is left in the run's directory): it asks the
// queue for jobs of the intent's name, records those it finds as the
// run's, submits the collect job the runner did not live to submit, and
// removes the intent. A job not in the queue has ended: its tasks' result
// files are collected as any others. It returns the job ids adopted.
func adopt(ctx context.Context, st *runs.Store, d batch.Dir, m *batch.Manifest, o Options) ([]string, error) {
	in, err := batch.ReadIntent(d)
	if err != nil || in == nil {
		return nil, err
	}
	recorded, err := st.SlurmJobs(ctx, m.RunID)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	collectOf := map[int]bool{} // attempts with a collect job
	trialsOf := map[int][]string{}
	for _, j := range recorded {
		known[j.JobID] = true
		if j.Role == runs.RoleCollect {
			collectOf[j.Attempt] = true
		} else {
			trialsOf[j.Attempt] = append(trialsOf[j.Attempt], j.JobID)
		}
	}
	var adopted []string
	for _, role := range []string{runs.RoleTrials, runs.RoleCollect} {
		name := in.Name
		if role == runs.RoleCollect {
			name = m.JobName() + "-collect"
		}
		tasks, err := o.client().QueueByName(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("run %d: a submission was interrupted (%s); cannot tell whether its job is queued: %w", m.RunID, d.IntentPath(), err)
		}
		for _, t := range tasks {
			if known[t.JobID] {
				continue
			}
			known[t.JobID] = true
			j := runs.SlurmJob{RunID: m.RunID, JobID: t.JobID, Role: role, Attempt: in.Attempt, Submitted: in.Created}
			if role == runs.RoleTrials {
				j.Array = in.Array
				trialsOf[in.Attempt] = append(trialsOf[in.Attempt], t.JobID)
			} else {
				collectOf[in.Attempt] = true
			}
			if err := st.RecordSlurmJob(ctx, j); err != nil {
				return nil, err
			}
			adopted = append(adopted, t.JobID)
			o.log().Warn("adopted a job of an interrupted submission", "run", m.RunID, "job", t.JobID, "role", role, "name", name)
		}
	}
	if ids := trialsOf[in.Attempt]; len(ids) > 0 && !collectOf[in.Attempt] && !o.NoCollectJob {
		if _, err := submitCollect(ctx, st, d, m, ids, in.Attempt, o); err != nil {
			return nil, err
		}
	}
	return adopted, batch.RemoveIntent(d)
}

// sbatchMem and sbatchTime read the memory and time limit a submission
// asked for from the copy of its batch script (its #SBATCH lines; the last
// wins, as in sbatch).
var (
	sbatchMem  = regexp.MustCompile(`(?m)^#SBATCH --mem=(\S+)$`)
	sbatchTime = regexp.MustCompile(`(?m)^#SBATCH (?:--time=|-t=?)(\S+)$`)
)

// lostAs returns the sacct states (OUT_OF_MEMORY, TIMEOUT, ...) in which
// the tasks of the trials todo ended in the previous submission (attempt
// - 1); nil when there is none or sacct cannot tell.
func lostAs(ctx context.Context, st *runs.Store, d batch.Dir, m *batch.Manifest, todo []int, attempt int, o Options) map[string]bool {
	if attempt < 2 {
		return nil
	}
	tm := newTaskMap(d, m)
	want := make(map[int]bool, len(todo))
	for _, i := range todo {
		want[i] = true
	}
	jobs, err := st.SlurmJobs(ctx, m.RunID)
	if err != nil {
		return nil
	}
	why := map[string]bool{}
	for _, j := range jobs {
		if j.Role != runs.RoleTrials || j.Attempt != attempt-1 {
			continue
		}
		states, err := o.client().Accounting(ctx, j.JobID)
		if err != nil {
			o.log().Info("cannot tell how the previous submission's tasks ended", "job", j.JobID, "err", err)
			return nil
		}
		for task, s := range states {
			trials, err := tm.trials(j, task)
			if err != nil {
				return nil
			}
			if slices.ContainsFunc(trials, func(i int) bool { return want[i] }) {
				why[s] = true
			}
		}
	}
	return why
}

// lastSbatch is the last value re finds in the copy of a submission's
// batch script; "" when there is none.
func lastSbatch(d batch.Dir, attempt int, re *regexp.Regexp) string {
	b, err := os.ReadFile(d.Script(attempt))
	if err != nil {
		return ""
	}
	ms := re.FindAllSubmatch(b, -1)
	if len(ms) == 0 {
		return ""
	}
	return string(ms[len(ms)-1][1])
}

// scaledMem is the memory of a resubmission when Options.MemRetryScale is
// set and a trial to submit was killed for memory (sacct OUT_OF_MEMORY) in
// the previous submission: that submission's memory times the scale; 0
// otherwise (or when sacct or the script copy cannot tell).
func scaledMem(d batch.Dir, attempt int, lost map[string]bool, o Options) int {
	if o.MemRetryScale <= 1 || !lost["OUT_OF_MEMORY"] {
		return 0
	}
	prev, err := ParseMem(lastSbatch(d, attempt-1, sbatchMem))
	if err != nil || prev == 0 {
		return 0
	}
	return int(math.Ceil(float64(prev) * o.MemRetryScale))
}

// scaledTime is the time limit of a resubmission when
// Options.TimeRetryScale is set and a trial to submit reached its limit
// (sacct TIMEOUT) in the previous submission: that submission's limit
// times the scale, rounded up to a minute (Slurm's unit); "" otherwise (or
// when sacct cannot tell, or that submission left the limit to the
// partition's default).
func scaledTime(d batch.Dir, attempt int, lost map[string]bool, o Options) string {
	if o.TimeRetryScale <= 1 || !lost["TIMEOUT"] {
		return ""
	}
	prev, err := ParseTime(lastSbatch(d, attempt-1, sbatchTime))
	if err != nil || prev == 0 {
		return ""
	}
	t := int64(math.Ceil(float64(prev)*o.TimeRetryScale/60)) * 60
	return FormatTime(t)
}

// stoppedAtLimit reports whether a trial of todo recorded, in its result
// file of submission attempt, that it stopped at its time-limit warning
// (batch.Stop).
func stoppedAtLimit(d batch.Dir, todo []int, attempt int) bool {
	if attempt < 1 {
		return false
	}
	latest, err := batch.Latest(d)
	if err != nil {
		return false
	}
	for _, i := range todo {
		if r := latest[i]; r != nil && r.Attempt == attempt && r.Stop != nil && r.Stop.TimeLimit {
			return true
		}
	}
	return false
}
