package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"goldstone/pipeline"
	"goldstone/workdir"
)

// gcCheckpoints is what gc found of the trials' checkpoints under the
// workdir (pipeline.CheckpointsDir, and each Slurm task's own workdir):
// those of nodes that have not ended are kept (the next run resumes them);
// those of a node whose cache entry exists are left over by a runner
// killed between caching the node and removing them, and are removed.
type gcCheckpoints struct {
	kept, stale           int
	keptBytes, staleBytes int64
	staleDirs             []string
}

// scanCheckpoints finds the checkpoint directories under the workdir work.
func scanCheckpoints(work string) *gcCheckpoints {
	c := &gcCheckpoints{}
	roots := []string{work}
	tasks, _ := filepath.Glob(workdir.Workdir(work).BatchTasks())
	roots = append(roots, tasks...)
	for _, root := range roots {
		dirs, _ := filepath.Glob(filepath.Join(pipeline.CheckpointsDir(root), "*", "*"))
		for _, d := range dirs {
			key := filepath.Base(d)
			stage := filepath.Base(filepath.Dir(d))
			size := dirSize(d)
			// A task's cache/ is the shared cache.
			if _, err := os.Stat(workdir.Workdir(root).CacheEntry(stage, key)); err == nil {
				c.stale++
				c.staleBytes += size
				c.staleDirs = append(c.staleDirs, d)
				continue
			}
			c.kept++
			c.keptBytes += size
		}
	}
	return c
}

// remove deletes the stale checkpoint directories.
func (c *gcCheckpoints) remove() error {
	for _, d := range c.staleDirs {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("gc: remove the checkpoints %s: %w", d, err)
		}
	}
	return nil
}

// text says what gc did with the checkpoints ("" when there are none).
func (c *gcCheckpoints) text(verb string) string {
	if c.kept == 0 && c.stale == 0 {
		return ""
	}
	s := fmt.Sprintf("checkpoints: %d of interrupted trials kept (%s; their next run resumes from them)", c.kept, byteText(c.keptBytes))
	if c.stale > 0 {
		s += fmt.Sprintf(", %s %d of trials that have ended (%s)", verb, c.stale, byteText(c.staleBytes))
	}
	return s
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
