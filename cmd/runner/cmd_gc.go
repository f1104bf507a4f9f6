package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"goldstone/internal/batch"
	"goldstone/pipeline"
	"goldstone/stages/htmlreport"
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
			fs.IntVar(&gcFlags.keepLast, "keep-last", -1, "keep the newest N runs of each experiment (and kind); required")
			fs.BoolVar(&gcFlags.dryRun, "dry-run", false, "only say what would be deleted")
		},
		run: runGC,
	})
}

func runGC(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	if gcFlags.keepLast < 0 {
		return usageErr("gc: say how many runs of each experiment to keep: --keep-last N")
	}
	st, err := openResultsRW(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	if !gcFlags.dryRun {
		recoverStale(ctx, g, st)
	}
	old, err := st.OldRuns(ctx, g.experiment, gcFlags.keepLast)
	if err != nil {
		return err
	}
	verb := "deleted"
	if gcFlags.dryRun {
		verb = "would delete"
	} else if len(old) > 0 {
		// No runner may use the cache while its entries are removed.
		lock, err := pipeline.LockWorkDir(g.workdir)
		if err != nil {
			return &exitError{exitUsage, fmt.Errorf("gc: lock %s: %w", g.workdir, err)}
		}
		defer lock.Unlock()
	}
	ids := make([]int64, len(old))
	for i, r := range old {
		ids[i] = r.ID
	}
	res, err := st.DeleteRuns(ctx, ids, gcFlags.dryRun)
	if err != nil {
		return err
	}
	cacheRoot, err := filepath.Abs(filepath.Join(g.workdir, "cache"))
	if err != nil {
		return err
	}
	var roots []string
	for _, d := range []string{g.reports, g.workdir} {
		if a, err := filepath.Abs(d); err == nil {
			roots = append(roots, a)
		}
	}
	var freed int64
	entries, files, batchDirs := 0, 0, 0
	for _, d := range res.CacheDirs {
		if !within(cacheRoot, d) {
			fmt.Fprintf(g.stderr, "gc: keeping %s: not in the cache %s\n", d, cacheRoot)
			continue
		}
		n, err := treeSize(d)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return err
		}
		if !gcFlags.dryRun {
			if err := os.RemoveAll(d); err != nil {
				return fmt.Errorf("gc: %w", err)
			}
		}
		freed += n
		entries++
	}
	dirs := map[string]bool{}
	for _, f := range res.Files {
		ok := false
		for _, r := range roots {
			ok = ok || within(r, f)
		}
		if !ok {
			continue
		}
		fi, err := os.Stat(f)
		if err != nil {
			continue
		}
		if !gcFlags.dryRun {
			if err := os.Remove(f); err != nil {
				return fmt.Errorf("gc: %w", err)
			}
			dirs[filepath.Dir(f)] = true
		}
		freed += fi.Size()
		files++
	}
	// A Slurm run's batch directory (manifest, frozen config, task results
	// and logs; README "Running on a Slurm cluster") goes with its run.
	for _, r := range old {
		d := string(batch.RunDir(g.workdir, r.Experiment, r.ID))
		n, err := treeSize(d)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return err
		}
		if !gcFlags.dryRun {
			if err := os.RemoveAll(d); err != nil {
				return fmt.Errorf("gc: %w", err)
			}
		}
		freed += n
		batchDirs++
	}
	for d := range dirs { // run-<id> directories left empty
		for _, r := range roots {
			removeEmptyUpTo(d, r)
		}
	}
	var idText []string
	for _, r := range old {
		idText = append(idText, fmt.Sprintf("%d (%s)", r.ID, r.Experiment))
	}
	if len(old) == 0 {
		fmt.Fprintf(g.stdout, "nothing to delete: no experiment has more than %d runs\n", gcFlags.keepLast)
		return nil
	}
	fmt.Fprintf(g.stdout, "%s %d runs: %s\n", verb, len(old), strings.Join(idText, ", "))
	batchText := ""
	if batchDirs > 0 {
		batchText = fmt.Sprintf(", %d Slurm batch directories", batchDirs)
	}
	fmt.Fprintf(g.stdout, "%s %d cache entries%s and %d report and log files no remaining run uses: %s freed\n", verb, entries, batchText, files, byteText(freed))
	if !gcFlags.dryRun {
		if fi, err := os.Stat(g.reports); err == nil && fi.IsDir() {
			if _, err := htmlreport.WriteIndex(ctx, st, g.reports); err != nil {
				return err
			}
		}
	}
	return nil
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
