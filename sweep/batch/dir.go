package batch

import (
	"errors"
	"fmt"
	"goldstone/workdir"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
)

// Dir is a run's directory on the shared filesystem (see the package doc).
type Dir string

// RunDir returns the directory of run id of experiment under workdir.
func RunDir(wd, experiment string, id int64) Dir {
	return Dir(workdir.Workdir(wd).BatchRun(experiment, id))
}

func (d Dir) path(elem ...string) string {
	return filepath.Join(append([]string{string(d)}, elem...)...)
}

// Manifest is the path of the frozen manifest.
func (d Dir) Manifest() string { return d.path("manifest.json") }

// Config is the path of the frozen copy of the experiments file.
func (d Dir) Config() string { return d.path("experiments.toml") }

// Runner is the path of the runner binary the tasks of submission attempt
// execute.
func (d Dir) Runner(attempt int) string { return d.path("bin", fmt.Sprintf("runner.%d", attempt)) }

// Script is the path of the copy of submission attempt's batch script, with
// the #SBATCH lines of its sbatch arguments.
func (d Dir) Script(attempt int) string { return d.path(fmt.Sprintf("submit.%d.sh", attempt)) }

// Logs is the directory of the scheduler's output files.
func (d Dir) Logs() string { return d.path("logs") }

// Exec identifies one execution of a task: the submission that queued it
// (Attempt, 1, 2, ...) and how often Slurm restarted it since
// (SLURM_RESTART_COUNT: a requeue, a preemption that requeues). Every
// execution writes its own result file.
type Exec struct {
	Attempt int
	Restart int
}

func (e Exec) String() string {
	if e.Restart == 0 {
		return strconv.Itoa(e.Attempt)
	}
	return fmt.Sprintf("%d (restart %d)", e.Attempt, e.Restart)
}

// Result is the path of the result file of a task's execution:
// results/<index>.<attempt>.json, or <index>.<attempt>.<restart>.json for
// a restarted one.
func (d Dir) Result(index int, e Exec) string {
	if e.Restart == 0 {
		return d.path("results", fmt.Sprintf("%d.%d.json", index, e.Attempt))
	}
	return d.path("results", fmt.Sprintf("%d.%d.%d.json", index, e.Attempt, e.Restart))
}

// TaskWorkDir is the private pipeline workdir of task index: its own lock,
// state and temporary files, with cache/ a link to the shared cache.
func (d Dir) TaskWorkDir(index int) string { return d.path("tasks", strconv.Itoa(index)) }

var resultName = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?\.json$`)

// ResultFiles lists the result files present: for each task index, its
// executions in the order they ran (by attempt, then restart). Other files
// (temporaries) are ignored.
func (d Dir) ResultFiles() (map[int][]Exec, error) {
	ents, err := os.ReadDir(d.path("results"))
	if errors.Is(err, os.ErrNotExist) {
		return map[int][]Exec{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[int][]Exec{}
	for _, e := range ents {
		m := resultName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		i, err1 := strconv.Atoi(m[1])
		a, err2 := strconv.Atoi(m[2])
		r, err3 := 0, error(nil)
		if m[3] != "" {
			r, err3 = strconv.Atoi(m[3])
		}
		if err1 != nil || err2 != nil || err3 != nil || (m[3] != "" && r == 0) {
			continue
		}
		out[i] = append(out[i], Exec{a, r})
	}
	for i := range out {
		slices.SortFunc(out[i], func(x, y Exec) int {
			if x.Attempt != y.Attempt {
				return x.Attempt - y.Attempt
			}
			return x.Restart - y.Restart
		})
	}
	return out, nil
}

// LinkCache makes task index's private workdir with cache/ a symbolic link
// to sharedCache (created if missing), so that the task's pipeline writes
// into the shared cache (rename within one filesystem) while its lock and
// temporary files stay its own.
func (d Dir) LinkCache(index int, sharedCache string) (string, error) {
	return LinkCacheAt(d.TaskWorkDir(index), sharedCache)
}

// LinkCacheAt makes the private workdir w with cache/ a symbolic link to
// sharedCache (see LinkCache).
func LinkCacheAt(w, sharedCache string) (string, error) {
	if err := os.MkdirAll(w, 0o755); err != nil {
		return "", err
	}
	if err := os.MkdirAll(sharedCache, 0o755); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(sharedCache)
	if err != nil {
		return "", err
	}
	link := filepath.Join(w, "cache")
	if cur, err := os.Readlink(link); err == nil && cur == abs {
		return w, nil
	}
	tmp := link + ".tmp" + strconv.Itoa(os.Getpid())
	os.Remove(tmp)
	if err := os.Symlink(abs, tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("link %s to the shared cache: %w", link, err)
	}
	return w, nil
}

// Lock takes the run directory's submission lock (flock on submit.lock),
// without waiting: a second submission of the same run at the same time
// gets an error. Call the returned function to release it.
func (d Dir) Lock() (unlock func(), err error) {
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(d.path("submit.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is being submitted by another runner right now", d)
		}
		return nil, fmt.Errorf("lock %s: %w", d.path("submit.lock"), err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
