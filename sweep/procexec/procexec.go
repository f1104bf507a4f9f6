// Package procexec is the process back end of the batch executor
// (`runner --executor process`): a run's trials as `runner worker`
// subprocesses on this machine, through the same file protocol as the
// Slurm back end (manifest, per-execution result files, intents, packs:
// sweep/batch), so that a trial's memory and crashes are its
// own process's, as Snakemake's and Nextflow's local executors give.
//
// It is a slurmexec.Scheduler: an array job is a record in
// <workdir>/batch/procs/<id>.json (its tasks: pending, started with a pid
// and the process's start time, ended with an exit status) and a copy of
// its script, which each task runs with /bin/sh and $SLURM_ARRAY_TASK_ID
// set, in its own session (Ctrl-C of the runner stops waiting, not the
// trials), its output in the job's output file. The runner that submits
// (or waits for) a job starts its tasks, at most Config.Jobs at once;
// when it is killed, its started workers run on, and the next runner that
// waits for the run (the same command again) adopts the job: it starts
// the tasks nobody started. A task whose process is gone without a result
// file is missing, as a lost Slurm task is: the next submission runs it
// again, from its checkpoint. Cancel sends SIGTERM to the running tasks
// (each saves a checkpoint and records interrupted) and drops the pending
// ones.
package procexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"goldstone/internal/atomicfile"
	"goldstone/internal/slurm"
	"goldstone/runs"
	"goldstone/sweep/slurmexec"
	"goldstone/workdir"
)

// Name is the back end's name (--executor, runs.executor).
const Name = "process"

func init() {
	slurmexec.Register(slurmexec.Backend{Name: Name, Here: true,
		Doc: "each trial (or pack) a 'runner worker' subprocess on this machine, --jobs at once (see docs/slurm.md)",
		New: func(c slurmexec.Config) slurmexec.Scheduler { return New(c) }})
}

// Scheduler runs array jobs as processes on this machine.
type Scheduler struct {
	dir      string // <workdir>/batch/procs
	limit    int    // tasks at once
	dispatch bool
	self     runs.Owner
	// Poll is how often the dispatcher looks for tasks to start.
	Poll time.Duration

	once    sync.Once
	started bool           // the dispatcher was started (set under once)
	reapers sync.WaitGroup // one per task this process started, until its end is recorded
	stop    chan struct{}  // closed by Close: the dispatcher ends
	done    chan struct{}  // closed when the dispatcher has ended
	mu      sync.Mutex
	wait    map[string]bool // "job/index" this process started and waits for
}

// New returns the scheduler of the jobs under c.WorkDir.
func New(c slurmexec.Config) *Scheduler {
	return &Scheduler{dir: workdir.Workdir(c.WorkDir).Procs(), limit: max(1, c.Jobs), dispatch: c.Dispatch,
		self: runs.Self(), Poll: 200 * time.Millisecond, wait: map[string]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
}

// Close stops the dispatcher, if it runs, waits until its last tick has
// ended, and waits for the tasks this process started to end and their ends
// to be recorded: no record is written after it returns. A closed scheduler
// starts no more tasks. (A runner exits without it; tests call it.)
func (s *Scheduler) Close() {
	s.once.Do(func() {}) // no dispatcher starts after this
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	if s.started {
		<-s.done
	}
	s.reapers.Wait()
}

// job is a job's record.
type job struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Script      string     `json:"script"`
	Chdir       string     `json:"chdir"`
	Output      string     `json:"output"`
	CPUs        int        `json:"cpus"`
	MaxParallel int        `json:"max_parallel"`
	Submitted   time.Time  `json:"submitted"`
	Dispatcher  runs.Owner `json:"dispatcher"` // the runner that starts its tasks
	Tasks       []task     `json:"tasks"`
}

// task is one array task's record.
type task struct {
	Index int `json:"index"`
	// Launching is set before the process starts, PID once it has: a
	// task launching without a pid was being started by a runner that
	// died, and is never started twice.
	Launching bool   `json:"launching,omitempty"`
	PID       int    `json:"pid,omitempty"`
	Started   string `json:"started,omitempty"` // the process's start (runs.Owner.Started)
	Cancelled bool   `json:"cancelled,omitempty"`
	// Exit is the exit status once the runner that started it saw it
	// end; Signal the signal that ended it.
	Exit   *int   `json:"exit,omitempty"`
	Signal string `json:"signal,omitempty"`
}

func (t *task) pending() bool { return !t.Launching && !t.Cancelled }

// alive: started, and its process runs.
func (t *task) alive() bool {
	if t.PID <= 0 || t.Exit != nil || t.Signal != "" {
		return false
	}
	return t.owner().Liveness() == runs.OwnerAlive
}

func (t *task) owner() runs.Owner {
	host, _ := os.Hostname()
	return runs.Owner{Host: host, PID: t.PID, Started: t.Started}
}

// lock takes the directory's lock: every change of a record is made under it.
func (s *Scheduler) lock() (func(), error) {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

func (s *Scheduler) path(id string) string { return filepath.Join(s.dir, id+".json") }

// read returns job id's record; nil when there is none.
func (s *Scheduler) read(id string) (*job, error) {
	if id == "" || strings.ContainsAny(id, `/\.`) {
		return nil, fmt.Errorf("process job id %q: want a number", id)
	}
	b, err := os.ReadFile(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j job
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path(id), err)
	}
	return &j, nil
}

func (s *Scheduler) write(j *job) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(s.path(j.ID), append(b, '\n'))
}

// all returns every job's record, oldest first.
func (s *Scheduler) all() ([]*job, error) {
	ms, err := filepath.Glob(filepath.Join(s.dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*job
	for _, m := range ms {
		id := strings.TrimSuffix(filepath.Base(m), ".json")
		if _, err := strconv.Atoi(id); err != nil {
			continue
		}
		j, err := s.read(id)
		if err != nil {
			return nil, err
		}
		if j != nil {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b *job) int { return numID(a.ID) - numID(b.ID) })
	return out, nil
}

func numID(id string) int { n, _ := strconv.Atoi(id); return n }

// Available implements slurmexec.Scheduler: /bin/sh runs the scripts.
func (s *Scheduler) Available() error {
	if _, err := os.Stat("/bin/sh"); err != nil {
		return fmt.Errorf("the process back end runs its tasks with /bin/sh: %w", err)
	}
	return nil
}

// TestSubmit implements slurmexec.Scheduler: it refuses what Submit would.
func (s *Scheduler) TestSubmit(_ context.Context, j *slurm.Job) error {
	if j.Dependency != "" {
		return fmt.Errorf("the process back end runs no dependent jobs (%s)", j.Dependency)
	}
	if j.Array != "" {
		if _, _, err := slurm.ParseArraySpec(j.Array); err != nil {
			return err
		}
	}
	return nil
}

// Submit implements slurmexec.Scheduler: it records the job, its tasks
// pending, and starts them (this process dispatches them from now on).
func (s *Scheduler) Submit(ctx context.Context, sj *slurm.Job) (string, error) {
	if err := s.TestSubmit(ctx, sj); err != nil {
		return "", err
	}
	indices, maxPar := []int{-1}, 0
	if sj.Array != "" {
		var err error
		if indices, maxPar, err = slurm.ParseArraySpec(sj.Array); err != nil {
			return "", err
		}
	}
	unlock, err := s.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	id, err := s.nextID()
	if err != nil {
		return "", err
	}
	j := &job{ID: id, Name: sj.Name, Script: filepath.Join(s.dir, id+".sh"), Chdir: sj.Chdir, Output: sj.Output, CPUs: sj.CPUsPerTask,
		MaxParallel: maxPar, Submitted: time.Now().UTC(), Dispatcher: s.self}
	for _, i := range indices {
		j.Tasks = append(j.Tasks, task{Index: i})
	}
	if err := atomicfile.WriteFile(j.Script, []byte(sj.ScriptText())); err != nil {
		return "", err
	}
	if err := s.write(j); err != nil {
		return "", err
	}
	s.start()
	return id, nil
}

// nextID is the next job id (under the lock).
func (s *Scheduler) nextID() (string, error) {
	p := filepath.Join(s.dir, "next")
	n := 1
	if b, err := os.ReadFile(p); err == nil {
		if n, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil || n < 1 {
			return "", fmt.Errorf("%s: %q: want a job number", p, b)
		}
	}
	if err := atomicfile.WriteFile(p, []byte(strconv.Itoa(n+1)+"\n")); err != nil {
		return "", err
	}
	return strconv.Itoa(n), nil
}

// start starts the dispatcher (once), when this process dispatches.
func (s *Scheduler) start() {
	s.once.Do(func() {
		s.started = true
		go func() {
			defer close(s.done)
			for {
				select {
				case <-s.stop:
					return
				default:
				}
				if err := s.tick(); err != nil {
					fmt.Fprintf(os.Stderr, "process executor: %v\n", err)
				}
				select {
				case <-s.stop:
					return
				case <-time.After(s.Poll):
				}
			}
		}()
	})
}

// tick adopts the jobs whose dispatcher is gone (when this process
// dispatches) and starts pending tasks of the jobs this process
// dispatches, while fewer than the limit run.
func (s *Scheduler) tick() error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	jobs, err := s.all()
	if err != nil {
		return err
	}
	running := 0
	var mine []*job
	for _, j := range jobs {
		d := j.Dispatcher
		if d.PID != s.self.PID || d.Started != s.self.Started || d.Host != s.self.Host {
			if !s.dispatch || d.Liveness() == runs.OwnerAlive || !slices.ContainsFunc(j.Tasks, func(t task) bool { return t.pending() }) {
				continue
			}
			j.Dispatcher = s.self // adopted: its runner is gone
			if err := s.write(j); err != nil {
				return err
			}
		}
		mine = append(mine, j)
		for i := range j.Tasks {
			if j.Tasks[i].alive() {
				running++
			}
		}
	}
	for _, j := range mine {
		limit := s.limit
		if j.MaxParallel > 0 {
			limit = min(limit, j.MaxParallel)
		}
		for i := range j.Tasks {
			if running >= limit {
				break
			}
			if !j.Tasks[i].pending() {
				continue
			}
			if err := s.launch(j, i); err != nil {
				return err
			}
			running++
		}
	}
	return nil
}

// launch starts task i of j (under the lock) and waits for it in the
// background, recording how it ended.
func (s *Scheduler) launch(j *job, i int) error {
	t := &j.Tasks[i]
	t.Launching = true
	if err := s.write(j); err != nil {
		return err
	}
	idx := strconv.Itoa(t.Index)
	out := strings.NewReplacer("%A", j.ID, "%a", idx, "%j", j.ID).Replace(j.Output)
	if out == "" {
		out = filepath.Join(s.dir, j.ID+"_"+idx+".out")
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command("/bin/sh", j.Script)
	cmd.Dir, cmd.Stdout, cmd.Stderr = j.Chdir, f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cpus := max(1, runtime.NumCPU()/s.limit)
	if j.CPUs > 0 {
		cpus = min(cpus, j.CPUs)
	}
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_JOB_ID="+j.ID, "SLURM_ARRAY_TASK_ID="+idx, "SLURM_JOB_ID="+j.ID,
		"SLURM_CPUS_PER_TASK="+strconv.Itoa(cpus))
	if t.Index < 0 {
		cmd.Env = append(os.Environ(), "SLURM_JOB_ID="+j.ID, "SLURM_CPUS_PER_TASK="+strconv.Itoa(cpus))
	}
	if err := cmd.Start(); err != nil {
		code := 127
		t.Exit = &code
		return errors.Join(fmt.Errorf("start task %s_%s: %w", j.ID, idx, err), s.write(j))
	}
	o := runs.OwnerOf(cmd.Process.Pid)
	t.PID, t.Started = o.PID, o.Started
	if err := s.write(j); err != nil {
		return err
	}
	key := j.ID + "/" + idx
	s.mu.Lock()
	s.wait[key] = true
	s.mu.Unlock()
	s.reapers.Add(1)
	go func() { defer s.reapers.Done(); s.reap(cmd, j.ID, t.Index, key) }()
	return nil
}

// reap waits for a task's process and records how it ended.
func (s *Scheduler) reap(cmd *exec.Cmd, id string, index int, key string) {
	err := cmd.Wait()
	code, sig := 0, ""
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			sig = ws.Signal().String()
		}
	}
	defer func() {
		s.mu.Lock()
		delete(s.wait, key)
		s.mu.Unlock()
	}()
	unlock, err := s.lock()
	if err != nil {
		return
	}
	defer unlock()
	j, err := s.read(id)
	if err != nil || j == nil {
		return
	}
	for i := range j.Tasks {
		if j.Tasks[i].Index == index && j.Tasks[i].PID == cmd.Process.Pid {
			j.Tasks[i].Exit, j.Tasks[i].Signal = &code, sig
		}
	}
	s.write(j)
}

// states is the queue's view of a job's active tasks.
func (s *Scheduler) states(j *job) []slurm.Task {
	var out []slurm.Task
	for i := range j.Tasks {
		t := &j.Tasks[i]
		switch {
		case t.pending():
			out = append(out, slurm.Task{JobID: j.ID, Index: t.Index, State: "PENDING", Reason: "JobArrayTaskLimit"})
		case t.alive() || (t.PID == 0 && t.Launching && t.Exit == nil && j.Dispatcher.Liveness() == runs.OwnerAlive):
			// Being started by a live runner counts as running.
			out = append(out, slurm.Task{JobID: j.ID, Index: t.Index, State: "RUNNING", Reason: "None"})
		}
	}
	return out
}

// Queue implements slurm.Queuer: the job's pending and running tasks (a
// job this machine does not know has none). A dispatching scheduler
// starts its dispatcher here: a waiting runner adopts the job.
func (s *Scheduler) Queue(_ context.Context, id string) ([]slurm.Task, error) {
	if s.dispatch {
		s.start()
	}
	j, err := s.read(id)
	if err != nil || j == nil {
		return nil, err
	}
	return s.states(j), nil
}

// QueueByName implements slurmexec.Scheduler.
func (s *Scheduler) QueueByName(_ context.Context, names string) ([]slurm.Task, error) {
	want := strings.Split(names, ",")
	jobs, err := s.all()
	if err != nil {
		return nil, err
	}
	var out []slurm.Task
	for _, j := range jobs {
		if slices.Contains(want, j.Name) {
			out = append(out, s.states(j)...)
		}
	}
	return out, nil
}

// Accounting implements slurm.Queuer: how the job's ended tasks ended,
// in Slurm's words (COMPLETED, FAILED, CANCELLED); a task whose end its
// runner did not see (that runner was killed) has no state.
func (s *Scheduler) Accounting(_ context.Context, id string) (map[int]string, error) {
	j, err := s.read(id)
	if err != nil {
		return nil, err
	}
	if j == nil {
		return nil, fmt.Errorf("no process job %s under %s", id, s.dir)
	}
	out := map[int]string{}
	for _, t := range j.Tasks {
		switch {
		case t.Cancelled:
			out[t.Index] = "CANCELLED"
		case t.Exit == nil:
		case *t.Exit == 0 && t.Signal == "":
			out[t.Index] = "COMPLETED"
		default:
			out[t.Index] = "FAILED"
		}
	}
	return out, nil
}

// Cancel implements slurmexec.Scheduler: the pending tasks are dropped,
// the running ones get SIGTERM (their process group).
func (s *Scheduler) Cancel(_ context.Context, id string, index int) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	j, err := s.read(id)
	if err != nil {
		return err
	}
	if j == nil {
		return fmt.Errorf("no process job %s under %s", id, s.dir)
	}
	var errs []error
	for i := range j.Tasks {
		t := &j.Tasks[i]
		if index >= 0 && t.Index != index {
			continue
		}
		switch {
		case t.pending():
			t.Cancelled = true
		case t.alive():
			t.Cancelled = true
			if err := syscall.Kill(-t.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("task %s_%d (pid %d): %w", j.ID, t.Index, t.PID, err))
			}
		}
	}
	return errors.Join(append(errs, s.write(j))...)
}

// MaxArraySize implements slurmexec.Scheduler: no limit.
func (s *Scheduler) MaxArraySize(context.Context) (int, error) { return math.MaxInt32, nil }

// MaxSubmitJobs implements slurmexec.Scheduler: no limit.
func (s *Scheduler) MaxSubmitJobs(context.Context, string) (int, error) { return 0, nil }

// UserJobs implements slurmexec.Scheduler.
func (s *Scheduler) UserJobs(context.Context, string) (int, error) { return 0, nil }
