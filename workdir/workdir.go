// Package workdir owns the layout of --workdir, the directory the runners
// share: every path under it is a method of Workdir, so that no other
// package joins "cache", "tmp", "state" or "batch" onto it by hand.
//
//	<workdir>/
//	  cache/<stage>/<key>/   the content-addressed stage cache (pipeline)
//	  tmp/                   scratch of atomic writes and gc's trash (gc-*)
//	  state/                 the pipeline's node states and digests
//	  logs/<experiment>/run-<id>/   trial logs
//	  checkpoints/<stage>/<key>/    checkpoints of nodes that have not ended
//	  batch/<experiment>/run-<id>/  a batch run's directory (sweep/batch)
//	  batch/bin/             frozen runner binaries, one per build
//	  batch/procs/           the process back end's jobs (sweep/procexec)
//	  lock                   an exclusive runner's lock
//	  repro-*/               a repro's scratch
package workdir

import (
	"fmt"
	"path/filepath"
)

// Workdir is a --workdir.
type Workdir string

// New returns the workdir at dir, made absolute (the batch back ends' jobs
// run in other directories).
func New(dir string) (Workdir, error) {
	a, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workdir %s: %w", dir, err)
	}
	return Workdir(a), nil
}

// Areas are the entries the runner keeps at the top of a workdir (a
// repro's scratch is repro-*): a reports directory inside one of them
// would be removed by the runner's clean-ups.
var Areas = []string{"cache", "tmp", "state", "logs", "batch", "checkpoints", "lock"}

func (w Workdir) join(elem ...string) string {
	return filepath.Join(append([]string{string(w)}, elem...)...)
}

// Root is the workdir itself.
func (w Workdir) Root() string { return string(w) }

// Cache is the stage cache.
func (w Workdir) Cache() string { return w.join("cache") }

// CacheEntry is the cache entry of a stage's key.
func (w Workdir) CacheEntry(stage, key string) string { return w.join("cache", stage, key) }

// Tmp is the scratch directory (atomic writes, gc's trash).
func (w Workdir) Tmp() string { return w.join("tmp") }

// GCTrash matches what a gc killed while deleting a cache entry left in tmp/.
func (w Workdir) GCTrash() string { return w.join("tmp", "gc-*") }

// State is the pipeline's state directory.
func (w Workdir) State() string { return w.join("state") }

// Logs is the trial logs' directory.
func (w Workdir) Logs() string { return w.join("logs") }

// Batch is the batch back ends' directory.
func (w Workdir) Batch() string { return w.join("batch") }

// BatchRun is the directory of run id of experiment (sweep/batch.Dir).
func (w Workdir) BatchRun(experiment string, id int64) string {
	return w.join("batch", experiment, fmt.Sprintf("run-%d", id))
}

// BatchManifests matches the manifests of run id of every experiment.
func (w Workdir) BatchManifests(id int64) string {
	return w.join("batch", "*", fmt.Sprintf("run-%d", id), "manifest.json")
}

// BatchTasks matches every batch task's private pipeline workdir.
func (w Workdir) BatchTasks() string { return w.join("batch", "*", "run-*", "tasks", "*") }

// BatchBin holds the frozen runner binaries.
func (w Workdir) BatchBin() string { return w.join("batch", "bin") }

// Procs holds the process back end's jobs.
func (w Workdir) Procs() string { return w.join("batch", "procs") }

// ReproScratch matches the scratch directories of repros.
func (w Workdir) ReproScratch() string { return w.join("repro-*") }
