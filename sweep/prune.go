package sweep

import (
	"context"
	"fmt"
	"slices"

	"goldstone/experiment"
	"goldstone/internal/fault"
	"goldstone/runs"
	"goldstone/search"
)

// searchPruned is Search with a pruner (experiment.Pruning): every wave is
// the jobs the pruner's Schedule gives from the results so far (new points
// at their first rung, the best of a rung promoted to the next), each job
// the point's trials with steps at its rung. A promoted point's trials go
// on from the checkpoint its shorter trials left (the train stages are
// pipeline.Resumable and the run keeps their checkpoints), so no step is
// redone, and their values are those of trials run to that length from
// step 0. Once the schedule has no more jobs, the last wave ends the run
// and the trials of every point that stopped short of the last rung are
// marked pruned (runs.StatusPruned) with the rung and its steps, and the
// checkpoints the run kept are removed (ReleaseRunCheckpoints; a search
// left interrupted keeps them for its resume). The jobs
// and the suggestions are a pure function of the search's seed and the
// recorded results: a killed search replays the waves that have results
// and resumes the first that has not.
func searchPruned(ctx context.Context, st *runs.Store, e *experiment.Experiment, x Executor, opts RunOptions, sampler search.Sampler, runID int64, resumed bool) (*Outcome, error) {
	s := e.Search
	sched := PruneSchedule(e)
	opts.keepCheckpoints = true
	fresh := opts.Kind != "" && opts.Kind != runs.KindRun // a repro: a new run of its own (see Search)
	var points []search.Point
	var jobs []experiment.RungJob
	for wave := 0; ; wave++ {
		ps, err := pruneState(ctx, st, runID, e, points, jobs)
		if err != nil {
			return nil, err
		}
		next, nNew := sched.Next(ps)
		if nNew > 0 {
			pts, err := sampler.Suggest(&s.Space, s.Seed, sched.Ranked(ps, points), len(points), nNew)
			if err != nil {
				return nil, fmt.Errorf("search %s, wave %d: %w", e.Name, wave, err)
			}
			if len(pts) < nNew { // a grid that ran out of points
				next = slices.DeleteFunc(next, func(j search.Job) bool { return j.Point >= len(points)+len(pts) })
				sched.Trials = len(points) + len(pts)
			}
			points = append(points, pts...)
		}
		first := len(jobs)
		for _, j := range next {
			jobs = append(jobs, experiment.RungJob{Point: j.Point, Rung: j.Rung})
		}
		last := len(next) == 0
		if !last && runID != 0 {
			done, err := jobsHaveResults(ctx, st, runID, e, points, jobs[first:])
			if err != nil {
				return nil, err
			}
			if done {
				continue // a wave of a resumed search that had ended: replayed
			}
		}
		w, err := e.PrunedWave(points, jobs)
		if err != nil {
			return nil, err
		}
		wopts := opts
		wopts.unended = !last
		if fresh && runID != 0 {
			// A repro's later waves resume its own run; their promotions
			// go on from the checkpoints its earlier waves kept.
			wopts.resume, wopts.Force = runID, false
		}
		wopts.wave = &Wave{Points: points, Jobs: jobs, Last: last}
		if !last {
			wopts.ReportDir = ""
		}
		out, err := executeWave(ctx, st, w, x, wopts)
		if out != nil && !resumed {
			out.Resumed = false
		}
		if err != nil || out.DataErr != nil || out.InfraErr != nil {
			return out, err
		}
		runID = out.RunID
		if last {
			fault.Point("search:pruned")
			if err := markPruned(ctx, st, runID, e, points, sched.Stopped(ps)); err != nil {
				return out, err
			}
			// The search has ended: no promotion needs its checkpoints.
			if n, freed, err := ReleaseRunCheckpoints(opts.WorkDir, e.Name, runID); err != nil {
				return out, err
			} else if n > 0 {
				opts.Log.Info("search ended: its kept checkpoints removed", "experiment", e.Name, "run", runID, "directories", n, "bytes", freed)
			}
			return out, countStatuses(ctx, st, out)
		}
		opts.Log.Info("search wave ended", "experiment", e.Name, "run", runID, "wave", wave, "points", len(points), "of", s.Trials, "jobs", len(jobs))
		fault.Point("search:wave")
	}
}

// PruneSchedule is the pruner of a search that has one
// (experiment.Pruning) as a search.Schedule.
func PruneSchedule(e *experiment.Experiment) search.Schedule {
	s, p := e.Search, e.Search.Pruning
	return search.Schedule{Pruner: p.Pruner, Rungs: len(p.Rungs()), Eta: p.Eta, Brackets: p.Brackets, Trials: s.Trials, Wave: s.Wave}
}

// FirstPrunedWave is the first wave of a pruned search (plan): its points
// and its jobs.
func FirstPrunedWave(e *experiment.Experiment) ([]search.Point, []experiment.RungJob, error) {
	sampler, err := search.Lookup(e.Search.Sampler)
	if err != nil {
		return nil, nil, err
	}
	next, n := PruneSchedule(e).Next(&search.PruneState{Issued: map[search.Job]bool{}, Value: map[search.Job]float64{}})
	pts, err := sampler.Suggest(&e.Search.Space, e.Search.Seed, nil, 0, n)
	if err != nil {
		return nil, nil, err
	}
	var jobs []experiment.RungJob
	for _, j := range next {
		if j.Point < len(pts) {
			jobs = append(jobs, experiment.RungJob{Point: j.Point, Rung: j.Rung})
		}
	}
	return pts, jobs, nil
}

// jobTrials are the trial ids of a job: its point's trials at its rung.
func jobTrials(e *experiment.Experiment, points []search.Point, j experiment.RungJob) ([]string, error) {
	w, err := e.PrunedWave(points, []experiment.RungJob{j})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, tr := range w.Trials() {
		ids = append(ids, tr.ID)
	}
	return ids, nil
}

// pruneState reads the results of the jobs issued so far from run runID:
// a job has a value once each of its trials has a result or failed.
func pruneState(ctx context.Context, st *runs.Store, runID int64, e *experiment.Experiment, points []search.Point, jobs []experiment.RungJob) (*search.PruneState, error) {
	ps := &search.PruneState{Points: len(points), Issued: map[search.Job]bool{}, Value: map[search.Job]float64{}}
	for _, j := range jobs {
		ps.Issued[search.Job{Point: j.Point, Rung: j.Rung}] = true
	}
	if runID == 0 || len(jobs) == 0 {
		return ps, nil
	}
	sums, err := st.Summaries(ctx, runID)
	if err != nil {
		return nil, err
	}
	status, err := trialStatus(ctx, st, runID)
	if err != nil {
		return nil, err
	}
	for id, s := range status {
		if s == runs.StatusPruned {
			// Marked when the search ended: its value is that of the
			// trial as it was done (a replay of an ended search).
			status[id] = runs.StatusDone
		}
	}
	for _, j := range jobs {
		ids, err := jobTrials(e, points, j)
		if err != nil {
			return nil, err
		}
		ended := true
		for _, id := range ids {
			ended = ended && (runs.HasResult(status[id]) || status[id] == runs.StatusFailed)
		}
		if !ended {
			continue
		}
		v, err := objective(e.Search, ids, status, sums)
		if err != nil {
			return nil, fmt.Errorf("search %s, point %d at rung %d: %w", e.Name, j.Point, j.Rung, err)
		}
		ps.Value[search.Job{Point: j.Point, Rung: j.Rung}] = v
	}
	return ps, nil
}

func trialStatus(ctx context.Context, st *runs.Store, runID int64) (map[string]string, error) {
	ts, err := st.TrialStatuses(ctx, runID)
	if err != nil {
		return nil, err
	}
	status := map[string]string{}
	for _, t := range ts {
		status[t.ID] = t.Status
	}
	return status, nil
}

// jobsHaveResults reports whether every trial of the jobs has a result or a
// failure in run runID.
func jobsHaveResults(ctx context.Context, st *runs.Store, runID int64, e *experiment.Experiment, points []search.Point, jobs []experiment.RungJob) (bool, error) {
	status, err := trialStatus(ctx, st, runID)
	if err != nil {
		return false, err
	}
	for _, j := range jobs {
		ids, err := jobTrials(e, points, j)
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

// markPruned marks the trials of every point that stopped short of the
// last rung, at the rung where it stopped (stopped: point -> rung index).
func markPruned(ctx context.Context, st *runs.Store, runID int64, e *experiment.Experiment, points []search.Point, stopped map[int]int) error {
	rs := e.Search.Pruning.Rungs()
	status, err := trialStatus(ctx, st, runID)
	if err != nil {
		return err
	}
	for i := range points {
		k, ok := stopped[i]
		if !ok {
			continue
		}
		ids, err := jobTrials(e, points, experiment.RungJob{Point: i, Rung: k})
		if err != nil {
			return err
		}
		for _, id := range ids {
			if s := status[id]; s != runs.StatusDone && s != runs.StatusCached && s != runs.StatusPruned {
				continue // diverged or failed: it stays so
			}
			if err := st.MarkPruned(ctx, runID, id, k, rs[k]); err != nil {
				return err
			}
		}
	}
	return nil
}
