package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"goldstone/experiment"
	"goldstone/runs"
	"goldstone/search"
	"goldstone/sweep"
)

// execute runs an experiment: its search (sweep.Search) when it has a
// search table, its waves here or on the batch --executor (the search's
// loop runs here, each wave an array job of the back end), else its grid
// here.
func execute(ctx context.Context, g *globalOptions, st *runs.Store, e *experiment.Experiment, opts sweep.RunOptions) (*sweep.Outcome, error) {
	if e.Search != nil {
		if err := checkSearchRun(g, e, slurmFlags.executor); err != nil {
			return nil, err
		}
		x, err := searchExecutor(g, e, runFlags.retryFailed)
		if err != nil {
			return nil, err
		}
		return sweep.Search(ctx, st, e, x, opts)
	}
	return sweep.Execute(ctx, st, e, sweep.Local{}, opts)
}

// checkSearchRun refuses what a search does not support: --detach (its
// loop runs on this host: it waits for each wave to suggest the next), and
// --set of a searched setting (the search would override it).
func checkSearchRun(g *globalOptions, e *experiment.Experiment, executor string) error {
	if e.Search == nil {
		return nil
	}
	if sweep.Detached(executor) && slurmFlags.detach {
		return usageErr("experiment %s is a search: it has no --detach (its loop runs on this host, submits each wave to %s and waits for it to suggest the next; Ctrl-C stops waiting, not the wave's tasks, and the same command goes on)", e.Name, executor)
	}
	for _, kv := range g.sets {
		k, _, _ := strings.Cut(kv, "=")
		for _, p := range e.Search.Space.Params {
			if strings.TrimSpace(k) == p.Key {
				return usageErr("--set %s: %s is searched by experiment %s (its [search.space]); edit the space to fix it", kv, p.Key, e.Name)
			}
		}
	}
	return nil
}

// planSearch prints a search's space and first wave, and returns the
// experiment of that wave, whose stages plan lists.
func planSearch(w io.Writer, e *experiment.Experiment) (*experiment.Experiment, error) {
	s := e.Search
	fmt.Fprintf(w, "search: sampler %s, %d points in waves of %d, seed %d, %s %s; each point runs %s (%s)\n",
		s.Sampler, s.Trials, s.Wave, s.Seed, s.Direction, s.Objective, plural(e.Size(), "trial"), e.SizeText())
	for _, p := range s.Space.Params {
		fmt.Fprintf(w, "  %s: %s\n", p.Key, p.String())
	}
	if p := s.Pruning; p != nil {
		return planPruned(w, e)
	}
	sampler, err := search.Lookup(s.Sampler)
	if err != nil {
		return nil, err
	}
	pts, err := sampler.Suggest(&s.Space, s.Seed, nil, 0, min(s.Wave, s.Trials))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "first wave (%d points):\n", len(pts))
	for i, pt := range pts {
		fmt.Fprintf(w, "  %s %s\n", experiment.PointVariant(i, ""), pointText(pt))
	}
	return e.Wave(0, pts)
}

// planPruned prints a pruned search's pruner, its rungs and its first
// wave's jobs (points at their first rung).
func planPruned(w io.Writer, e *experiment.Experiment) (*experiment.Experiment, error) {
	p := e.Search.Pruning
	fmt.Fprintf(w, "%s (the best 1/%d of a rung go on from their checkpoints)\n", p.String(), p.Eta)
	pts, jobs, err := sweep.FirstPrunedWave(e)
	if err != nil {
		return nil, err
	}
	rs := p.Rungs()
	fmt.Fprintf(w, "first wave (%d points):\n", len(jobs))
	for _, j := range jobs {
		fmt.Fprintf(w, "  %s %s (to step %d)\n", p.RungVariant(j.Point, "", j.Rung), pointText(pts[j.Point]), rs[j.Rung])
	}
	return e.PrunedWave(pts, jobs)
}

// listedTrials is the number of trials runner list shows: the sweep's, or
// for a search its points times each point's trials.
func listedTrials(e *experiment.Experiment) int {
	if e.Search != nil {
		return e.Search.Trials * len(e.Trials())
	}
	return len(e.Trials())
}

func pointText(pt search.Point) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(pt)) {
		parts = append(parts, k+"="+fmt.Sprint(pt[k]))
	}
	return strings.Join(parts, " ")
}

var bestFlags struct {
	rerun bool
	seeds int
	run   int64
}

func init() {
	commands = append(commands, &command{
		name:    "best",
		summary: "a search's best configuration by its validation objective (mean, sd and interval over its seeds); --rerun-best --seeds N runs it with N seeds",
		examples: []string{"runner best --experiment artificial-search",
			"runner best --experiment artificial-search --rerun-best --seeds 5"},
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&bestFlags.rerun, "rerun-best", false, "run the best configuration with --seeds seeds as a new run (experiment NAME-best) linked to the search by its tags")
			fs.IntVar(&bestFlags.seeds, "seeds", 10, "seeds 1..N of --rerun-best")
			fs.Int64Var(&bestFlags.run, "run", 0, "the search's run (default: the latest run of --experiment)")
		},
		run: runBest,
	})
}

func runBest(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	e, err := g.loadExperiment()
	if err != nil {
		return err
	}
	if e.Search == nil {
		return usageErr("experiment %s has no [search] table: 'runner results --experiment %s' lists its trials", e.Name, e.Name)
	}
	st, err := g.openDB(ctx, true)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("open results database: %w", err)}
	}
	defer st.Close()
	ri, err := chosenRun(ctx, st, g, bestFlags.run)
	if err != nil {
		return err
	}
	points, err := sweep.SearchPoints(ctx, st, ri.ID, e)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	best, ok := sweep.BestPoint(points, e.Search.Maximize())
	if !ok {
		return &exitError{exitFailed, fmt.Errorf("run %d of %s: none of its %d points has a finite %s on every trial", ri.ID, e.Name, len(points), e.Search.Objective)}
	}
	fmt.Fprintf(g.stdout, "%s: run %d (%s), %d points; best by %s (%s; a search never chooses on a test metric):\n", e.Name, ri.ID, ri.Status, len(points), e.Search.Objective, e.Search.Direction)
	fmt.Fprintf(g.stdout, "  point %s: %s\n", experiment.PointVariant(best.Index, ""), settingsText(best.Settings))
	fmt.Fprintf(g.stdout, "  %s = %s\n", e.Search.Objective, statsText(sweep.MeanStats(best.Values)))
	if !bestFlags.rerun {
		return nil
	}
	return rerunBest(ctx, g, st, e, ri.ID, best)
}

// rerunBest runs the best point with --seeds seeds as a new run, tagged
// with the search's experiment, run and point.
func rerunBest(ctx context.Context, g *globalOptions, st *runs.Store, e *experiment.Experiment, searchRun int64, best sweep.PointResult) error {
	r, err := e.Rerun(best.Settings, bestFlags.seeds)
	if err != nil {
		return usageErr("%v", err)
	}
	opts, err := withResultOptions(g, sweep.RunOptions{WorkDir: g.workdir, DataDir: g.dataDir, Jobs: g.jobs, Log: g.log, ReportDir: g.reports, Checkpoint: g.checkpointPolicy()})
	if err != nil {
		return err
	}
	// The link to the search: tags of the new run (runner runs --tag
	// search_run=ID lists the reruns of a search).
	opts.Tags = map[string]string{"search_experiment": e.Name, "search_run": strconv.FormatInt(searchRun, 10), "search_point": experiment.PointVariant(best.Index, "")}
	out, err := sweep.Execute(ctx, st, r, sweep.Local{}, opts)
	if err != nil {
		return &exitError{exitFailed, err}
	}
	page, rerr := finishReport(ctx, g, st, r, out)
	fmt.Fprintf(g.stdout, "%s: run %d (%s, %s), tagged search_run=%d search_point=%s\n", r.Name, out.RunID, out.Status, out.Counts(), searchRun, experiment.PointVariant(best.Index, ""))
	sums, err := st.Summaries(ctx, out.RunID)
	if err != nil {
		return err
	}
	var vals []float64
	for _, id := range slices.Sorted(maps.Keys(sums)) {
		if v, ok := sums[id][e.Search.Objective]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, v)
		}
	}
	fmt.Fprintf(g.stdout, "  %s over %d seeds = %s\n", e.Search.Objective, bestFlags.seeds, statsText(sweep.MeanStats(vals)))
	if page != "" {
		fmt.Fprintf(g.stdout, "html report: %s\n", page)
	}
	if rerr != nil {
		return &exitError{exitFailed, rerr}
	}
	if out.Failed > 0 {
		return &exitError{exitFailed, fmt.Errorf("%d of %d trials failed", out.Failed, out.Trials)}
	}
	return nil
}

func settingsText(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}

func statsText(s sweep.Stats) string {
	if s.N < 2 {
		return fmt.Sprintf("%.6g (1 trial)", s.Mean)
	}
	return fmt.Sprintf("%.6g (mean of %d trials; sd %.3g; 95%% interval [%.6g, %.6g])", s.Mean, s.N, s.SD, s.Low, s.High)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
