package sweep

import (
	"context"
	"fmt"
	"slices"

	"goldstone/experiment"
	"goldstone/runs"
	"goldstone/search"
)

// prunedSearchWave is SearchWave for a pruned search: the pruner's
// schedule and the sampler are replayed wave by wave over the results run
// runID recorded, as searchPruned issued them (a pure function of the seed
// and the results; a trial marked pruned counts with its value), and the
// experiment of every job (each point's trials at each rung it reached:
// Experiment.PrunedWave) is returned. Every trial of the replayed jobs
// must be one the run recorded, and every recorded trial one of theirs.
func prunedSearchWave(ctx context.Context, st *runs.Store, runID int64, e *experiment.Experiment) (*experiment.Experiment, error) {
	s := e.Search
	sampler, err := search.Lookup(s.Sampler)
	if err != nil {
		return nil, err
	}
	ts, err := st.TrialStatuses(ctx, runID)
	if err != nil {
		return nil, err
	}
	recorded := map[string]bool{}
	for _, t := range ts {
		recorded[t.ID] = true
	}
	sched := PruneSchedule(e)
	var points []search.Point
	var jobs []experiment.RungJob
	n := 0 // trials of the jobs
	for {
		ps, err := pruneState(ctx, st, runID, e, points, jobs)
		if err != nil {
			return nil, err
		}
		next, nNew := sched.Next(ps)
		if nNew > 0 {
			pts, err := sampler.Suggest(&s.Space, s.Seed, sched.Ranked(ps, points), len(points), nNew)
			if err != nil {
				return nil, fmt.Errorf("search %s, replaying run %d: %w", e.Name, runID, err)
			}
			if len(pts) < nNew {
				next = slices.DeleteFunc(next, func(j search.Job) bool { return j.Point >= len(points)+len(pts) })
				sched.Trials = len(points) + len(pts)
			}
			points = append(points, pts...)
		}
		if len(next) == 0 {
			break
		}
		for _, j := range next {
			rj := experiment.RungJob{Point: j.Point, Rung: j.Rung}
			ids, err := jobTrials(e, points, rj)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				if !recorded[id] {
					return nil, fmt.Errorf("run %d of %s: its pruned search, replayed over its results, runs point %s (%v) to rung %d, whose trial %s the run did not record: the sampler, the pruner, the trials' settings or the run's results changed since it ran",
						runID, e.Name, experiment.PointVariant(j.Point, ""), points[j.Point], j.Rung, id)
				}
			}
			n += len(ids)
			jobs = append(jobs, rj)
		}
	}
	if n != len(ts) {
		return nil, fmt.Errorf("run %d of %s: %d trials recorded, but its pruned search replayed over its results has %d (%d points, %d jobs)", runID, e.Name, len(ts), n, len(points), len(jobs))
	}
	return e.PrunedWave(points, jobs)
}
