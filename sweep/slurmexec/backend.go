package slurmexec

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"goldstone/internal/slurm"
	"goldstone/sweep"
)

// Scheduler is the batch system a run's jobs go to: it queues array jobs
// (a job's Script run once per array index, with the task's index in
// $SLURM_ARRAY_TASK_ID), says which tasks are still queued or running,
// cancels them and says how they ended. *slurm.Client is the Slurm
// cluster's (sbatch, squeue, scancel, sacct); sweep/procexec runs them as
// processes on this machine. Everything else of a run (the manifest, the
// result files, collection, resume, status, adoption after a killed
// submitter) is the same for every Scheduler.
type Scheduler interface {
	slurm.Queuer
	// Available says why jobs cannot be queued from here (nil: they can).
	Available() error
	Submit(ctx context.Context, j *slurm.Job) (string, error)
	TestSubmit(ctx context.Context, j *slurm.Job) error
	// QueueByName lists the queued tasks of the jobs with these names
	// (comma-separated): a killed submitter's unrecorded jobs.
	QueueByName(ctx context.Context, names string) ([]slurm.Task, error)
	// Cancel stops a job's tasks (index < 0: every task).
	Cancel(ctx context.Context, jobID string, index int) error
	MaxArraySize(ctx context.Context) (int, error)
	// MaxSubmitJobs and UserJobs are the user's limit of queued jobs (0:
	// none) and the jobs the user has queued.
	MaxSubmitJobs(ctx context.Context, user string) (int, error)
	UserJobs(ctx context.Context, user string) (int, error)
}

// Config is what a back end's scheduler is made from.
type Config struct {
	WorkDir string // the shared work directory (absolute)
	Jobs    int    // --jobs: at most that many tasks at once where the back end runs them here
	// Dispatch: this process starts the tasks of the back end's jobs that
	// no live process starts (a back end that runs them itself: the
	// submitting or waiting runner, not 'runner status' or 'cancel').
	Dispatch bool
}

// Backend is a batch back end: a name for --executor and the runs table,
// and its scheduler.
type Backend struct {
	Name string
	Doc  string // one line for --executor's help
	New  func(Config) Scheduler
	// Here: its tasks run on this machine, started by the submitting
	// runner: no shared job, no collect job, no detaching (the runner
	// starts them while it waits; a later waiting command adopts them).
	Here bool
}

var (
	backendsMu sync.Mutex
	backends   = map[string]Backend{}
)

// Register adds a batch back end (from its package's init); the name is
// registered with sweep as a detached executor too.
func Register(b Backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if _, dup := backends[b.Name]; dup || b.New == nil {
		panic(fmt.Sprintf("slurmexec: back end %q registered twice or without New", b.Name))
	}
	backends[b.Name] = b
	sweep.RegisterExecutor(sweep.ExecutorInfo{Name: b.Name, Detached: true, Doc: b.Doc})
}

// Lookup returns the batch back end of that name.
func Lookup(name string) (Backend, bool) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	b, ok := backends[name]
	return b, ok
}

// Backends are the batch back ends' names, sorted.
func Backends() []string {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	var out []string
	for n := range backends {
		out = append(out, n)
	}
	sort.Strings(out)
	return slices.Clip(out)
}

// Slurm is the Slurm back end's name (runs.executor).
const Slurm = "slurm"

func init() {
	Register(Backend{Name: Slurm, Doc: "one Slurm array job (see docs/slurm.md)", New: func(Config) Scheduler { return &slurm.Client{} }})
}
