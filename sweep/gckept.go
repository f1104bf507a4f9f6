package sweep

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/workdir"
)

// KeepMark is the mark a run's kept checkpoints carry (pipeline
// Options.KeepMark): "run-<id>.<experiment>", so that the run's end
// (ReleaseRunCheckpoints) and gc (GC) find the checkpoints it kept.
func KeepMark(experiment string, runID int64) string {
	return fmt.Sprintf("run-%d.%s", runID, experiment)
}

// parseKeepMark is KeepMark's inverse; ok is false for a mark of another
// form.
func parseKeepMark(m string) (experiment string, runID int64, ok bool) {
	rest, ok := strings.CutPrefix(m, "run-")
	if !ok {
		return "", 0, false
	}
	id, name, ok := strings.Cut(rest, ".")
	n, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil || n <= 0 || name == "" {
		return "", 0, false
	}
	return name, n, true
}

// checkpointRoots are the workdirs whose checkpoints a run may have kept:
// work, and each Slurm task's own workdir under it.
func checkpointRoots(work string) []string {
	roots := []string{work}
	tasks, _ := filepath.Glob(workdir.Workdir(work).BatchTasks())
	return append(roots, tasks...)
}

// ReleaseRunCheckpoints removes the checkpoints that run runID of
// experiment kept under work (a pruned search's, for its promotions), once
// the run has ended and no promotion can need them: the run's mark goes
// from each, and a directory with no other run's mark goes with it.
// removed counts the directories removed, freed their bytes.
func ReleaseRunCheckpoints(work, experiment string, runID int64) (removed int, freed int64, err error) {
	mark := KeepMark(experiment, runID)
	for _, root := range checkpointRoots(work) {
		kept, err := pipeline.KeptCheckpoints(root)
		if err != nil {
			return removed, freed, err
		}
		for _, k := range kept {
			gone, err := pipeline.ReleaseKept(k.Dir, mark)
			if err != nil {
				return removed, freed, fmt.Errorf("remove the checkpoints %s: %w", k.Dir, err)
			}
			if gone {
				removed++
				freed += k.Bytes
			}
		}
	}
	return removed, freed, nil
}

// StaleCheckpoint is a checkpoint directory gc removes (or would): Why
// says why no run can resume from it.
type StaleCheckpoint struct {
	Dir   string
	Why   string
	Bytes int64
	marks []string // the marks to release (a kept directory's)
}

// keptStale classifies a kept checkpoint directory by the runs that
// marked it: it is stale when every one of them has ended, is gone from
// the store, or is among the runs gc deletes (gone); why names them. A
// directory without a mark is not stale (an interrupted trial's, or one
// kept by a runner older than the marks).
func keptStale(ctx context.Context, st *runs.Store, k pipeline.KeptCheckpoint, gone map[int64]bool) (stale bool, why string, err error) {
	if len(k.Marks) == 0 {
		return false, "", nil
	}
	var whys []string
	for _, m := range k.Marks {
		exp, id, ok := parseKeepMark(m)
		if !ok {
			return false, "", nil // not a run's mark: kept
		}
		if gone[id] {
			whys = append(whys, fmt.Sprintf("run %d of %s is deleted", id, exp))
			continue
		}
		r, err := st.Run(ctx, id)
		switch {
		case errors.Is(err, runs.ErrNotFound):
			whys = append(whys, fmt.Sprintf("run %d of %s is gone", id, exp))
			continue
		case err != nil:
			return false, "", err
		case r.Experiment != exp:
			whys = append(whys, fmt.Sprintf("run %d of %s is gone", id, exp))
			continue
		case !runs.Ended(r.Status):
			return false, "", nil // a resume needs them
		}
		whys = append(whys, fmt.Sprintf("run %d of %s %s", id, exp, r.Status))
	}
	return true, strings.Join(whys, "; "), nil
}
