package sweep

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"

	"goldstone/experiment"
	"goldstone/internal/fault"
	"goldstone/runs"
	"goldstone/search"
)

// Search runs an experiment's search (its [search] table) through x in
// waves: the sampler suggests Search.Wave points from the results recorded
// so far, the wave's trials (each point times the experiment's variants and
// grid) run through Execute as ordinary trials of one run, and the next
// wave is suggested from their results, until Search.Trials points ran.
// Between waves the run is left unended ("interrupted"), so that a killed
// search resumes it: the waves whose trials all have results are replayed
// from the store (the sampler is a pure function of the seed and the
// results, so it suggests the same points) and the first that does not is
// resumed, with no finished trial run twice. The returned outcome is the
// last wave's, whose run holds every trial. A search of another kind than
// runs.KindRun (repro) starts a new run and suggests every wave from its
// own results; opts.Force holds for its first wave (a later one reads the
// stages its earlier waves wrote).
func Search(ctx context.Context, st *runs.Store, e *experiment.Experiment, x Executor, opts RunOptions) (*Outcome, error) {
	s := e.Search
	if s == nil {
		return nil, fmt.Errorf("experiment %s has no search table", e.Name)
	}
	if err := searchExecutor(e, x); err != nil {
		return nil, err
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	sampler, err := search.Lookup(s.Sampler)
	if err != nil {
		return nil, err
	}
	// A repro (another kind than a run) is a new run of its own: it
	// replays nothing, and its later waves resume it by its id.
	fresh := opts.Kind != "" && opts.Kind != runs.KindRun
	var prior *runs.RunInfo
	if !fresh {
		_, hash := e.Resolved()
		var err error
		if prior, err = searchRun(ctx, st, e.Name, hash); err != nil {
			return nil, err
		}
	}
	var runID int64
	resumed := false // an unended run of this search was there before this call
	if prior != nil {
		runID, resumed = prior.ID, !runs.Ended(prior.Status)
	}
	if s.Pruning != nil {
		return searchPruned(ctx, st, e, x, opts, sampler, runID, resumed)
	}
	var points []search.Point
	for wave := 0; ; wave++ {
		history, err := Observations(ctx, st, runID, e, points)
		if err != nil {
			return nil, err
		}
		next, err := sampler.Suggest(&s.Space, s.Seed, history, len(points), min(s.Wave, s.Trials-len(points)))
		if err != nil {
			return nil, fmt.Errorf("search %s, wave %d: %w", e.Name, wave, err)
		}
		first := len(points)
		points = append(points, next...)
		last := len(points) >= s.Trials || len(next) == 0
		if !last && runID != 0 {
			done, err := haveResults(ctx, st, runID, e, first, next)
			if err != nil {
				return nil, err
			}
			if done {
				continue // a wave of a resumed search that had ended: replayed
			}
		}
		w, err := e.Wave(0, points)
		if err != nil {
			return nil, err
		}
		wopts := opts
		wopts.unended = !last
		wopts.wave = &Wave{Points: points, Last: last}
		if fresh && runID != 0 {
			// The earlier waves' trials ran in this call: kept, and the
			// stages they share come from the cache they just wrote.
			wopts.resume, wopts.Force = runID, false
		}
		if !last {
			wopts.ReportDir = "" // the report is copied out once, by the last wave
		}
		out, err := executeWave(ctx, st, w, x, wopts)
		if out != nil && !resumed {
			out.Resumed = false // the waves after the first resume this call's own run
		}
		if err != nil || out.DataErr != nil || out.InfraErr != nil || last {
			return out, err
		}
		runID = out.RunID
		opts.Log.Info("search wave ended", "experiment", e.Name, "run", runID, "wave", wave, "points", len(points), "of", s.Trials)
		fault.Point("search:wave")
	}
}

// searchRun is the run of an earlier search of the same configuration
// whose results a resumed search replays (the latest one of that hash), or
// nil.
func searchRun(ctx context.Context, st *runs.Store, experiment, hash string) (*runs.RunInfo, error) {
	last, err := st.LatestRun(ctx, experiment, runs.KindRun)
	if err != nil || last == nil || last.ConfigHash != hash {
		return nil, err
	}
	return last, nil
}

// pointTrials are the trial ids of suggestion index of a search: the point
// times the experiment's variants and grid.
func pointTrials(e *experiment.Experiment, index int, pt search.Point) ([]string, error) {
	w, err := e.Wave(index, []search.Point{pt})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, tr := range w.Trials() {
		ids = append(ids, tr.ID)
	}
	return ids, nil
}

// haveResults reports whether every trial of the points (suggestions first,
// first+1, ...) has a result or a failure in run runID.
func haveResults(ctx context.Context, st *runs.Store, runID int64, e *experiment.Experiment, first int, pts []search.Point) (bool, error) {
	ts, err := st.TrialStatuses(ctx, runID)
	if err != nil {
		return false, err
	}
	status := map[string]string{}
	for _, t := range ts {
		status[t.ID] = t.Status
	}
	for i, pt := range pts {
		ids, err := pointTrials(e, first+i, pt)
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			if s := status[id]; !runs.HasResult(s) && s != runs.StatusFailed {
				return false, nil
			}
		}
	}
	return true, nil
}

// Observations are the search's points with the objective their trials
// recorded in run runID, signed so that lower is better: the mean over
// the point's trials (its seeds and variants), +Inf when one of them
// failed, diverged or has a value that is not finite. A trial with a
// result but without the objective is an error naming the metrics it has.
func Observations(ctx context.Context, st *runs.Store, runID int64, e *experiment.Experiment, points []search.Point) ([]search.Observation, error) {
	if len(points) == 0 {
		return nil, nil
	}
	sums, err := st.Summaries(ctx, runID)
	if err != nil {
		return nil, err
	}
	ts, err := st.TrialStatuses(ctx, runID)
	if err != nil {
		return nil, err
	}
	status := map[string]string{}
	for _, t := range ts {
		status[t.ID] = t.Status
	}
	out := make([]search.Observation, len(points))
	for i, pt := range points {
		ids, err := pointTrials(e, i, pt)
		if err != nil {
			return nil, err
		}
		v, err := objective(e.Search, ids, status, sums)
		if err != nil {
			return nil, fmt.Errorf("search %s, point %d: %w", e.Name, i, err)
		}
		out[i] = search.Observation{Point: pt, Value: v}
	}
	return out, nil
}

// objective is the signed mean objective of a point's trials (see
// Observations).
func objective(s *experiment.Search, ids []string, status map[string]string, sums map[string]map[string]float64) (float64, error) {
	sum := 0.0
	for _, id := range ids {
		if status[id] != runs.StatusDone && status[id] != runs.StatusCached {
			return math.Inf(1), nil
		}
		v, ok := sums[id][s.Objective]
		if !ok {
			names := slices.Sorted(maps.Keys(sums[id]))
			return 0, fmt.Errorf("objective %q is not a summary metric of trial %s (it records %s)", s.Objective, id, strings.Join(names, ", "))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.Inf(1), nil
		}
		sum += v
	}
	mean := sum / float64(len(ids))
	if s.Maximize() {
		mean = -mean
	}
	return mean, nil
}
