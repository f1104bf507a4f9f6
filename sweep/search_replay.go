package sweep

import (
	"context"
	"fmt"

	"goldstone/experiment"
	"goldstone/runs"
	"goldstone/search"
)

// SearchWave rebuilds the trials of search run runID of e (e as the run
// recorded it: experiment.ExperimentFromResolved): the sampler is replayed
// wave by wave over the results the run recorded, as Search suggested them
// (a pure function of the seed and the results), and the experiment of all
// the points is returned (Experiment.Wave from 0), whose graph is the
// run's: what 'runner report --run' rebuilds the report from and repro
// compares by. Every trial of the replayed points must be one the run
// recorded, and every recorded trial one of theirs: otherwise the sampler,
// the trials' settings or the run's results changed since, and the error
// says which point.
func SearchWave(ctx context.Context, st *runs.Store, runID int64, e *experiment.Experiment) (*experiment.Experiment, error) {
	s := e.Search
	if s == nil {
		return nil, fmt.Errorf("experiment %s has no search table", e.Name)
	}
	if s.Pruning != nil {
		return prunedSearchWave(ctx, st, runID, e)
	}
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
	var points []search.Point
	n := 0 // trials of the points
	for len(points) < s.Trials {
		history, err := Observations(ctx, st, runID, e, points)
		if err != nil {
			return nil, err
		}
		next, err := sampler.Suggest(&s.Space, s.Seed, history, len(points), min(s.Wave, s.Trials-len(points)))
		if err != nil {
			return nil, fmt.Errorf("search %s, replaying run %d: %w", e.Name, runID, err)
		}
		if len(next) == 0 {
			break
		}
		for i, pt := range next {
			ids, err := pointTrials(e, len(points)+i, pt)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				if !recorded[id] {
					return nil, fmt.Errorf("run %d of %s: its search, replayed over its results, suggests point %s (%v), whose trial %s the run did not record: the sampler, the trials' settings or the run's results changed since it ran",
						runID, e.Name, experiment.PointVariant(len(points)+i, ""), pt, id)
				}
			}
			n += len(ids)
		}
		points = append(points, next...)
	}
	if n != len(ts) {
		return nil, fmt.Errorf("run %d of %s: %d trials recorded, but its search replayed over its results has %d (%d points)", runID, e.Name, len(ts), n, len(points))
	}
	return e.Wave(0, points)
}

// PointDrifts compares the searched settings (e's space) of the trials of
// a recorded search run with those of its repro, both keyed by trial name
// (ByName over runs.Store TrialParams): a repro suggests its waves from
// its own results, so a point it suggested otherwise shows here, as
// `trial "s3 seed=1" lr: recorded 0.5, now 0.6`. A trial missing from the
// repro is left to the statuses' comparison.
func PointDrifts(e *experiment.Experiment, recorded, now map[string]map[string]string) []string {
	if e.Search == nil {
		return nil
	}
	var out []string
	for _, name := range unionKeys(recorded, now) {
		a, okA := recorded[name]
		b, okB := now[name]
		if !okA || !okB {
			continue
		}
		for _, p := range e.Search.Space.Params {
			if a[p.Key] != b[p.Key] {
				out = append(out, fmt.Sprintf("trial %q %s: recorded %s, now %s", name, p.Key, orNone(a[p.Key]), orNone(b[p.Key])))
			}
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
