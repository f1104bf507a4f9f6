package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"goldstone/experiment"
	"goldstone/internal/fault"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/workdir"
)

// GCOptions say what GC deletes.
type GCOptions struct {
	Experiment string // only its runs; "": every experiment's
	KeepLast   int    // the newest runs of each experiment (and kind) kept
	DryRun     bool   // only measure
	WorkDir    string
	Reports    string
	Warn       io.Writer // "gc: keeping ..." lines (nil: discarded)
}

// GCReport is what GC deleted (or, on a dry run, would delete) and freed.
type GCReport struct {
	Runs                    []runs.RunInfo // the runs deleted
	InUse                   []runs.RunInfo // kept: a runner resumed them meanwhile
	Entries, Files, Batches int            // cache entries, report and log files, batch run directories
	Freed                   int64
	Checkpoints             *GCCheckpoints
}

// GC deletes the runs beyond the newest o.KeepLast of each experiment and
// what only they use, in an order a kill cannot spoil: it claims the runs
// (ClaimForDeletion), plans what they own (runs.Store.DeleteOwnedRuns,
// dry run), removes the files (each cache entry renamed out of the cache
// in one step under its lock, then deleted; the runs' logs, report files
// and batch directories), and deletes the rows last, in one transaction.
// A gc killed before the rows are gone leaves the runs recorded and the
// next gc plans and finishes the same deletion; files already removed are
// skipped. Recorded paths of a workdir or reports directory that has
// moved since are found under the current ones. The checkpoints of
// trials that have ended (their node is cached) go too; those of
// interrupted trials stay.
func GC(ctx context.Context, st *runs.Store, o GCOptions) (*GCReport, error) {
	if o.Warn == nil {
		o.Warn = io.Discard
	}
	old, err := st.OldRuns(ctx, o.Experiment, o.KeepLast)
	if err != nil {
		return nil, err
	}
	out := &GCReport{}
	self := runs.Self() // gc as the owner of the runs it deletes
	if !o.DryRun {
		// Runners share the workdir: gc takes no lock on it. It owns the
		// runs it deletes (none is resumed meanwhile), and removes a cache
		// entry only under that entry's lock (pipeline.RemoveEntry).
		if old, out.InUse, err = ClaimForDeletion(ctx, st, old, self); err != nil {
			return nil, err
		}
	}
	out.Runs = old
	ids := make([]int64, len(old))
	gone := map[int64]bool{}
	for i, r := range old {
		ids[i] = r.ID
		gone[r.ID] = true
	}
	if out.Checkpoints, err = scanCheckpoints(ctx, st, o.WorkDir, gone); err != nil {
		return nil, err
	}
	if !o.DryRun {
		if err := out.Checkpoints.remove(); err != nil {
			return nil, err
		}
	}
	plan, err := st.DeleteOwnedRuns(ctx, ids, self, true)
	if err != nil {
		return nil, err
	}
	wd, err := workdir.New(o.WorkDir)
	if err != nil {
		return nil, err
	}
	reports, err := filepath.Abs(o.Reports)
	if err != nil {
		return nil, err
	}
	if !o.DryRun && len(old) > 0 {
		// What a gc killed while deleting an entry left aside.
		leftovers, _ := filepath.Glob(wd.GCTrash())
		for _, d := range leftovers {
			os.RemoveAll(d)
		}
	}
	c := &gcFiles{dryRun: o.DryRun, warn: o.Warn, dirs: map[string]bool{}}
	if err := c.cacheEntries(plan.CacheDirs, wd.Cache(), wd.Root()); err != nil {
		return nil, err
	}
	if err := c.runFiles(plan.Files, wd.Root(), reports, old); err != nil {
		return nil, err
	}
	if err := c.batchDirs(old, o.WorkDir); err != nil {
		return nil, err
	}
	for d := range c.dirs { // run-<id> directories left empty
		for _, r := range []string{reports, wd.Root()} {
			removeEmptyUpTo(d, r)
		}
	}
	if !o.DryRun && len(ids) > 0 {
		// Last: the rows that let a killed gc find all this again.
		fault.Point("gc:rows")
		if _, err := st.DeleteOwnedRuns(ctx, ids, self, false); err != nil {
			return nil, err
		}
	}
	out.Entries, out.Files, out.Batches, out.Freed = c.entries, c.files, c.batches, c.freed
	return out, nil
}

// gcFiles removes (or, on a dry run, counts) the files of the runs gc
// deletes, and counts what it freed.
type gcFiles struct {
	dryRun                  bool
	warn                    io.Writer
	freed                   int64
	entries, files, batches int
	dirs                    map[string]bool // directories files were removed from
}

// cacheEntries removes the recorded cache entries found under cacheRoot
// (pipeline.RemoveEntry: each moved out of the cache in one step, under
// its lock), but not one a running runner uses or writes.
func (c *gcFiles) cacheEntries(recordedDirs []string, cacheRoot, work string) error {
	for _, recorded := range recordedDirs {
		d, ok := rebase(recorded, cacheRoot, "cache", 2)
		if !ok {
			if _, err := os.Stat(recorded); err == nil {
				fmt.Fprintf(c.warn, "gc: keeping %s: not in the cache %s\n", recorded, cacheRoot)
			}
			continue
		}
		n, err := treeSize(d)
		if err != nil {
			if os.IsNotExist(err) {
				continue // removed by a gc that was killed, or never there
			}
			return err
		}
		if !c.dryRun {
			switch err := pipeline.RemoveEntry(work, d); {
			case errors.Is(err, pipeline.ErrEntryInUse):
				fmt.Fprintf(c.warn, "gc: keeping %s: a running runner uses it\n", d)
				continue
			case os.IsNotExist(err):
				continue
			case err != nil:
				return fmt.Errorf("gc: %w", err)
			}
			fault.Point("gc:files")
		}
		c.freed += n
		c.entries++
	}
	return nil
}

// runFiles removes the runs' recorded logs and report files found under
// the workdir's logs or the reports directory.
func (c *gcFiles) runFiles(recordedFiles []string, work, reports string, old []runs.RunInfo) error {
	for _, recorded := range recordedFiles {
		f, ok := rebase(recorded, workdir.Workdir(work).Logs(), "logs", 3)
		if !ok {
			f, ok = rebaseReport(recorded, reports, old)
		}
		if !ok {
			continue
		}
		fi, err := os.Stat(f)
		if err != nil {
			continue
		}
		if !c.dryRun {
			if err := os.Remove(f); err != nil {
				return fmt.Errorf("gc: %w", err)
			}
			c.dirs[filepath.Dir(f)] = true
			fault.Point("gc:files")
		}
		c.freed += fi.Size()
		c.files++
	}
	return nil
}

// batchDirs removes a Slurm run's batch directory (manifest, frozen config,
// task results and logs; docs/slurm.md): it goes with
// its run.
func (c *gcFiles) batchDirs(old []runs.RunInfo, wd string) error {
	for _, r := range old {
		if experiment.CheckName(r.Experiment) != nil {
			continue // a name that would lead outside the workdir
		}
		d := workdir.Workdir(wd).BatchRun(r.Experiment, r.ID)
		n, err := treeSize(d)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return err
		}
		if !c.dryRun {
			if err := os.RemoveAll(d); err != nil {
				return fmt.Errorf("gc: %w", err)
			}
		}
		c.freed += n
		c.batches++
	}
	return nil
}

// rebase maps a recorded path to the current root: as it is when it is
// inside root, else (the directory moved since it was recorded) its last
// depth elements after the last element named mark ("cache" for
// <workdir>/cache/<stage>/<key>, "logs" for
// <workdir>/logs/<experiment>/run-<id>/<file>) joined onto root. ok is
// false when neither gives a path inside root.
func rebase(path, root, mark string, depth int) (string, bool) {
	if within(root, path) && path != root {
		return path, true
	}
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := len(parts) - 1 - depth; i >= 0; i-- {
		if parts[i] == mark {
			if len(parts)-1-i != depth {
				return "", false
			}
			p, err := experiment.Within(root, parts[i+1:]...)
			return p, err == nil && p != root
		}
	}
	return "", false
}

// rebaseReport maps a recorded report file to the current reports
// directory: as it is when it is inside it, else the part from
// <experiment>/run-<id>/ of one of the deleted runs on.
func rebaseReport(path, reports string, old []runs.RunInfo) (string, bool) {
	if within(reports, path) && path != reports {
		return path, true
	}
	slash := filepath.ToSlash(path)
	for _, r := range old {
		mark := "/" + r.Experiment + "/" + fmt.Sprintf("run-%d", r.ID) + "/"
		if i := strings.LastIndex(slash, mark); i >= 0 && experiment.CheckName(r.Experiment) == nil {
			p, err := experiment.Within(reports, strings.Split(slash[i+1:], "/")...)
			return p, err == nil
		}
	}
	return "", false
}

// within reports whether path is root or below it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func treeSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	return n, err
}

// removeEmptyUpTo removes dir and its parents while they are empty, up to
// (not including) root.
func removeEmptyUpTo(dir, root string) {
	for within(root, dir) && dir != root {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// GCCheckpoints is what gc found of the trials' checkpoints under the
// workdir (pipeline.CheckpointsDir, and each Slurm task's own workdir):
// those of nodes that have not ended are kept (the next run resumes them);
// those of a node whose cache entry exists are left over by a runner
// killed between caching the node and removing them, and are removed; so
// are those a pruned search kept for its promotions (pipeline.KeepMark)
// once every run that kept them has ended or is gone (deleted now or
// before).
type GCCheckpoints struct {
	Kept, Stale           int
	KeptBytes, StaleBytes int64
	Removed               []StaleCheckpoint // the stale ones, with why
}

// scanCheckpoints finds the checkpoint directories under the workdir work;
// gone are the runs gc deletes.
func scanCheckpoints(ctx context.Context, st *runs.Store, work string, gone map[int64]bool) (*GCCheckpoints, error) {
	c := &GCCheckpoints{}
	for _, root := range checkpointRoots(work) {
		kept, err := pipeline.KeptCheckpoints(root)
		if err != nil {
			return nil, err
		}
		marks := map[string]pipeline.KeptCheckpoint{}
		for _, k := range kept {
			marks[k.Dir] = k
		}
		dirs, _ := filepath.Glob(filepath.Join(pipeline.CheckpointsDir(root), "*", "*"))
		for _, d := range dirs {
			key := filepath.Base(d)
			stage := filepath.Base(filepath.Dir(d))
			size := dirSize(d)
			stale, why := false, ""
			if k, ok := marks[d]; ok {
				if stale, why, err = keptStale(ctx, st, k, gone); err != nil {
					return nil, err
				}
			} else if _, err := os.Stat(workdir.Workdir(root).CacheEntry(stage, key)); err == nil {
				// A task's cache/ is the shared cache.
				stale, why = true, "its node is cached"
			}
			if stale {
				c.Stale++
				c.StaleBytes += size
				c.Removed = append(c.Removed, StaleCheckpoint{Dir: d, Why: why, Bytes: size, marks: marks[d].Marks})
				continue
			}
			c.Kept++
			c.KeptBytes += size
		}
	}
	return c, nil
}

// remove deletes the stale checkpoint directories: a kept one by
// releasing the marks of its runs (pipeline.ReleaseKept: it goes with the
// last, unless a run marked it since).
func (c *GCCheckpoints) remove() error {
	for _, s := range c.Removed {
		var err error
		if len(s.marks) == 0 {
			err = os.RemoveAll(s.Dir)
		}
		for _, m := range s.marks {
			if _, err = pipeline.ReleaseKept(s.Dir, m); err != nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("gc: remove the checkpoints %s: %w", s.Dir, err)
		}
	}
	return nil
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
