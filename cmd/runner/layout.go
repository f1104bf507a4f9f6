package main

import (
	"goldstone/workdir"
	"path/filepath"
	"slices"
	"strings"
)

// workdirAreas are the entries the runner keeps at the top of --workdir
// (the stage cache, scratch space, state, trial logs, Slurm batches,
// checkpoints, the lock; a repro's scratch is repro-*). The reports of an
// experiment go to <reports>/<experiment>/: were --reports the workdir, an
// experiment named after one of these would have its reports in it, and
// the next run's clean-up of tmp/ (or of a killed repro's scratch) would
// remove them.
var workdirAreas = workdir.Areas

// checkReportsDir refuses a --reports that is --workdir, or lies inside one
// of the workdir's own areas (workdirAreas, repro-*), where the runner's
// clean-ups would remove reports: a usage error naming both.
func checkReportsDir(reports, workdir string) error {
	if reports == "" || workdir == "" {
		return nil
	}
	r, w := resolvedPath(reports), resolvedPath(workdir)
	if r == w {
		return usageErr("--reports %s is the --workdir: the reports of an experiment named tmp (or %s) would be the workdir's own folders, which the runner empties (tmp, by the next run): give the reports a directory of their own, e.g. --reports reports",
			reports, strings.Join(slices.DeleteFunc(slices.Clone(workdirAreas), func(a string) bool { return a == "tmp" || a == "lock" }), ", "))
	}
	rel, err := filepath.Rel(w, r)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil // not inside the workdir
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	if slices.Contains(workdirAreas, first) || strings.HasPrefix(first, "repro-") {
		return usageErr("--reports %s is inside %s, which the runner manages (its clean-ups would remove the reports): give the reports a directory of their own, e.g. --reports reports",
			reports, filepath.Join(workdir, first))
	}
	return nil
}

// resolvedPath is path made absolute and clean, with the symbolic links of
// its longest existing prefix resolved, so that two spellings of one
// directory compare equal.
func resolvedPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	var rest []string
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		if filepath.Dir(p) == p {
			return abs
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}
