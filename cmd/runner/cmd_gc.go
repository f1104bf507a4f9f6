package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"goldstone/experiment"
	"goldstone/internal/fault"
	"goldstone/pipeline"
	"goldstone/report/htmlreport"
	"goldstone/runs"
	"goldstone/sweep"
	"goldstone/sweep/batch"
)

var gcFlags struct {
	keepLast int
	dryRun   bool
}

func init() {
	commands = append(commands, &command{
		name:    "gc",
		summary: "delete old runs and the cache entries, reports and logs no remaining run uses",
		flags: func(fs *flag.FlagSet) {
			fs.IntVar(&gcFlags.keepLast, "keep-last", -1, "keep the newest N runs of each experiment (and kind); required, except that --dry-run alone shows what each N would free")
			fs.BoolVar(&gcFlags.dryRun, "dry-run", false, "only say what would be deleted")
		},
		run: runGC,
	})
}

// runGC deletes old runs in an order a kill cannot spoil: it plans what
// the runs own (runs.Store.DeleteRuns, dry run), removes the files (each
// cache entry renamed out of the cache in one step, then deleted), and
// deletes the rows last, in one transaction. A gc killed before the rows
// are gone leaves the runs recorded and the next gc plans and finishes the
// same deletion; files already removed are skipped. Recorded paths of a
// workdir or reports directory that has moved since are found under the
// current ones.
func runGC(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	if gcFlags.keepLast < 0 && !gcFlags.dryRun {
		return usageErr("gc: say how many runs of each experiment to keep: --keep-last N (--dry-run alone shows what each N would free)")
	}
	st, err := openResultsRW(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	if gcFlags.keepLast < 0 {
		return gcPolicies(ctx, g, st)
	}
	return gcWith(ctx, g, st, gcFlags.keepLast, gcFlags.dryRun, g.stdout)
}

// gcPolicies says, without deleting anything, what each --keep-last N
// would delete and free: N = 0, 1, 2, 3, 5, 10, ... up to the most runs an
// experiment (and kind) has.
func gcPolicies(ctx context.Context, g *globalOptions, st *runs.Store) error {
	most := 0
	counts := map[string]int{}
	list, err := st.ListRuns(ctx, runs.RunFilter{Experiment: g.experiment})
	if err != nil {
		return err
	}
	for _, r := range list {
		k := r.Experiment + "\x00" + r.Kind
		counts[k]++
		most = max(most, counts[k])
	}
	if most == 0 {
		fmt.Fprintln(g.stdout, "nothing to delete: no runs")
		return nil
	}
	fmt.Fprintln(g.stdout, "what each --keep-last N would delete and free (a dry run: nothing is deleted):")
	for _, n := range []int{0, 1, 2, 3, 5, 10, 20, 50, 100} {
		if n >= most {
			break
		}
		var b strings.Builder
		if err := gcWith(ctx, g, st, n, true, &b); err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "--keep-last %d:\n", n)
		for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			fmt.Fprintf(g.stdout, "  %s\n", line)
		}
	}
	fmt.Fprintf(g.stdout, "--keep-last %d or more: nothing (no experiment has more than %d runs)\n", most, most)
	return nil
}

// gcWith deletes (or with dryRun only measures) the runs beyond the newest
// keepLast of each experiment and what only they use, and says so on w.
func gcWith(ctx context.Context, g *globalOptions, st *runs.Store, keepLast int, dryRun bool, w io.Writer) error {
	if !dryRun {
		recoverStale(ctx, g, st)
	}
	old, err := st.OldRuns(ctx, g.experiment, keepLast)
	if err != nil {
		return err
	}
	verb := "deleted"
	self := runs.Self() // gc as the owner of the runs it deletes
	ckpts := scanCheckpoints(g.workdir)
	if dryRun {
		verb = "would delete"
	} else {
		// Runners share the workdir: gc takes no lock on it. It owns the
		// runs it deletes (none is resumed meanwhile), and removes a cache
		// entry only under that entry's lock (pipeline.RemoveEntry).
		var inUse []runs.RunInfo
		if old, inUse, err = sweep.ClaimForDeletion(ctx, st, old, self); err != nil {
			return err
		}
		for _, r := range inUse {
			fmt.Fprintf(g.stderr, "gc: keeping run %d (%s): a runner resumed it\n", r.ID, termText(r.Experiment))
		}
		if err := ckpts.remove(); err != nil {
			return err
		}
	}
	ids := make([]int64, len(old))
	for i, r := range old {
		ids[i] = r.ID
	}
	plan, err := st.DeleteOwnedRuns(ctx, ids, self, true)
	if err != nil {
		return err
	}
	work, err := filepath.Abs(g.workdir)
	if err != nil {
		return err
	}
	reports, err := filepath.Abs(g.reports)
	if err != nil {
		return err
	}
	cacheRoot := filepath.Join(work, "cache")
	trash := filepath.Join(work, "tmp")
	if !dryRun && len(old) > 0 {
		// What a gc killed while deleting an entry left aside.
		leftovers, _ := filepath.Glob(filepath.Join(trash, "gc-*"))
		for _, d := range leftovers {
			os.RemoveAll(d)
		}
	}
	c := &gcFiles{dryRun: dryRun, stderr: g.stderr, dirs: map[string]bool{}}
	if err := c.cacheEntries(plan.CacheDirs, cacheRoot, work); err != nil {
		return err
	}
	if err := c.runFiles(plan.Files, work, reports, old); err != nil {
		return err
	}
	if err := c.batchDirs(old, g.workdir); err != nil {
		return err
	}
	for d := range c.dirs { // run-<id> directories left empty
		for _, r := range []string{reports, work} {
			removeEmptyUpTo(d, r)
		}
	}
	if !dryRun && len(ids) > 0 {
		// Last: the rows that let a killed gc find all this again.
		fault.Point("gc:rows")
		if _, err := st.DeleteOwnedRuns(ctx, ids, self, false); err != nil {
			return err
		}
	}
	if !gcSay(w, keepLast, verb, old, c, ckpts) {
		return nil
	}
	if !dryRun {
		if fi, err := os.Stat(g.reports); err == nil && fi.IsDir() {
			if _, err := htmlreport.WriteIndex(ctx, st, g.reports, experiment.Headline); err != nil {
				return err
			}
		}
	}
	return nil
}

// gcSay prints what gc did (or would do) on w; false when it deleted no run.
func gcSay(w io.Writer, keepLast int, verb string, old []runs.RunInfo, c *gcFiles, ckpts *gcCheckpoints) bool {
	var idText []string
	for _, r := range old {
		idText = append(idText, fmt.Sprintf("%d (%s)", r.ID, termText(r.Experiment)))
	}
	if t := ckpts.text(verb); t != "" {
		fmt.Fprintln(w, t)
	}
	if len(old) == 0 {
		fmt.Fprintf(w, "nothing to delete: no experiment has more than %d runs\n", keepLast)
		return false
	}
	fmt.Fprintf(w, "%s %d runs: %s\n", verb, len(old), strings.Join(idText, ", "))
	batchText := ""
	if c.batches > 0 {
		batchText = fmt.Sprintf(", %d Slurm batch directories", c.batches)
	}
	fmt.Fprintf(w, "%s %d cache entries%s and %d report and log files no remaining run uses: %s freed\n", verb, c.entries, batchText, c.files, byteText(c.freed))
	return true
}

// gcFiles removes (or, on a dry run, counts) the files of the runs gc
// deletes, and counts what it freed.
type gcFiles struct {
	dryRun                  bool
	stderr                  io.Writer
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
				fmt.Fprintf(c.stderr, "gc: keeping %s: not in the cache %s\n", recorded, cacheRoot)
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
				fmt.Fprintf(c.stderr, "gc: keeping %s: a running runner uses it\n", d)
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
		f, ok := rebase(recorded, filepath.Join(work, "logs"), "logs", 3)
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
func (c *gcFiles) batchDirs(old []runs.RunInfo, workdir string) error {
	for _, r := range old {
		if experiment.CheckName(r.Experiment) != nil {
			continue // a name that would lead outside the workdir
		}
		d := string(batch.RunDir(workdir, r.Experiment, r.ID))
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

func byteText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
