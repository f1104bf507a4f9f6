package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"goldstone/internal/atomicfile"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/sweep"
	"goldstone/workdir"
)

// scratchGrace is how old a repro scratch directory without a lock file
// must be before recoverStale removes it: a repro locks its scratch right
// after creating it, so only a repro killed in between leaves one.
const scratchGrace = time.Minute

// recoverStale clears what runners killed earlier left behind, before a
// command that writes (run, repro, report, gc): runs left "running" by an
// owner whose process is gone (its pid dead, or recycled by a process
// started later) are marked interrupted (sweep.MarkStaleRuns),
// temporary files of writes a kill cut short (their names carry their
// writer's pid: atomicfile.RemoveStale) are removed from the reports
// directory and the workdir's state, and so are the scratch directories of
// killed repros (<workdir>/repro-*) whose lock no process holds. It logs what it did; its errors are
// logged, not returned: they must not stop the command.
func recoverStale(ctx context.Context, g *globalOptions, st *runs.Store) {
	marked, err := sweep.MarkStaleRuns(ctx, st)
	for _, ri := range marked {
		g.log.Warn("a run was left running by a runner that is gone; marked interrupted", "run", ri.ID, "kind", ri.Kind, "experiment", ri.Experiment, "pid", ri.PID, "host", ri.Host)
	}
	if err != nil {
		g.log.Error("mark stale runs", "err", err)
	}
	// Temporary files of writes a kill cut short: reports (figures,
	// Markdown, HTML pages, exports) and the workdir's state.
	for _, root := range []string{g.reports, workdir.Workdir(g.workdir).State()} {
		if root == "" {
			continue
		}
		removed, err := atomicfile.RemoveStale(root)
		for _, p := range removed {
			g.log.Info("removed a temporary file a killed runner left", "path", p)
		}
		if err != nil {
			g.log.Error("remove temporary files a killed runner left", "dir", root, "err", err)
		}
	}
	dirs, _ := filepath.Glob(workdir.Workdir(g.workdir).ReproScratch())
	for _, d := range dirs {
		if err := removeScratch(d); err != nil {
			g.log.Error("remove the scratch of a killed repro", "dir", d, "err", err)
		} else if _, err := os.Stat(d); os.IsNotExist(err) {
			g.log.Info("removed the scratch of a killed repro", "dir", d)
		}
	}
}

// removeScratch removes a repro scratch directory unless a live repro
// holds its lock (or, without a lock file, it is younger than
// scratchGrace).
func removeScratch(dir string) error {
	work := filepath.Join(dir, "work")
	if _, err := os.Stat(filepath.Join(work, "lock")); err != nil {
		fi, err := os.Stat(dir)
		if err != nil || time.Since(fi.ModTime()) < scratchGrace {
			return nil
		}
		return os.RemoveAll(dir)
	}
	lock, err := pipeline.LockWorkDir(work)
	if errors.Is(err, pipeline.ErrBusy) {
		return nil // a repro is working in it
	}
	if err != nil {
		return err
	}
	defer lock.Unlock()
	return os.RemoveAll(dir)
}
