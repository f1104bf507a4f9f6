package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"

	"goldstone/experiment"
	"goldstone/internal/atomicfile"
	"goldstone/internal/fault"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/sweep"
	"goldstone/trialio"
)

var reproFlags struct {
	run    int64
	series bool
}

func init() {
	commands = append(commands, &command{
		name:    "repro",
		summary: "re-run a recorded run from scratch (no cache) and compare every summary metric",
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&reproFlags.run, "run", 0, "run id to check (default: the latest finished run of the experiment)")
			fs.BoolVar(&reproFlags.series, "series", true, "compare every series point too (as recorded, and the series files the figures draw); --series=false compares summary metrics only")
		},
		run: runRepro,
	})
}

func runRepro(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	st, err := g.openDB(ctx, true)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("open results database: %w", err)}
	}
	defer st.Close()
	recoverStale(ctx, g, st)
	ri, err := chosenRun(ctx, st, g, reproFlags.run)
	if err != nil {
		return err
	}
	if !runs.Ended(ri.Status) {
		return usageErr("run %d is %s, not ended: finish it first (run the experiment again to resume)", ri.ID, ri.Status)
	}
	// The recorded configuration is what is reproduced, not today's file.
	e, err := experiment.ExperimentFromResolved(ri.ConfigJSON)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("run %d: recorded configuration: %w", ri.ID, err)}
	}
	recorded, err := st.Summaries(ctx, ri.ID)
	if err != nil {
		return err
	}
	renv, err := st.Env(ctx, ri.ID)
	if err != nil {
		return err
	}
	recOn, hereOn := machine(ri.Host, ri.CPUModel, runs.RecordedTarget(*ri, renv)), currentMachine()
	fmt.Fprintf(g.stdout, "recorded: run %d on %s\n", ri.ID, recOn)
	fmt.Fprintf(g.stdout, "now:      %s\n", hereOn)
	if recOn != hereOn {
		fmt.Fprintf(g.stdout, "(another machine or build: results are the same bits on every machine and build, so any drift below is a change of code, data or settings)\n")
	}
	if err := os.MkdirAll(g.workdir, 0o777); err != nil {
		return err
	}
	// The scratch workdir is locked at once: the next command removes
	// the scratch of a repro that was killed (recoverStale), and only it.
	tmp, err := atomicfile.MkdirTemp(g.workdir, "repro-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	lock, err := pipeline.LockWorkDir(filepath.Join(tmp, "work"))
	if err != nil {
		return err
	}
	defer lock.Unlock()
	prog := newProgress(g, e.Size(), "") // the exact count comes with RunStarted
	opts := sweep.RunOptions{
		WorkDir: filepath.Join(tmp, "work"), DataDir: g.dataDir, Jobs: g.jobs, Force: true,
		Kind: runs.KindRepro, Log: g.log, Observer: prog, Lock: lock,
	}
	run := sweep.Execute
	if e.Search != nil {
		// The search again from scratch: its waves suggested from the
		// repro's own results, which are the recorded ones when they
		// reproduce.
		run = sweep.Search
	}
	out, err := run(ctx, st, e, sweep.Local{}, opts)
	prog.Close()
	fault.Point("repro:ran")
	if err != nil {
		return &exitError{exitUsage, err}
	}
	if out.DataErr != nil {
		return &exitError{exitUsage, out.DataErr}
	}
	if e.Search != nil {
		// Its trials, to name them as the recorded run's are named.
		if e, err = sweep.SearchWave(ctx, st, out.RunID, e); err != nil {
			return err
		}
	}
	return reproCompare(ctx, g, st, e, ri, out, recorded)
}

// reproCompare compares the repro run out with the recorded run ri
// (recorded: its summaries): every trial's status, summary metric and,
// unless --series=false, series point; it prints each drift and returns
// an exitFailed error when any drifted.
func reproCompare(ctx context.Context, g *globalOptions, st *runs.Store, e *experiment.Experiment, ri *runs.RunInfo, out *sweep.Outcome, recorded map[string]map[string]float64) error {
	now, err := st.Summaries(ctx, out.RunID)
	if err != nil {
		return err
	}
	// Match trials by name (variant and grid values): ids hash every
	// setting, so they change when a newer version adds one.
	recParams, err := st.TrialParams(ctx, ri.ID)
	if err != nil {
		return err
	}
	recName, nowName := sweep.TrialNamers(e, recParams)
	recorded, now = sweep.ByName(recorded, recName), sweep.ByName(now, nowName)
	names := map[string]string{}
	for n := range recorded {
		names[n] = n
	}
	drifts := sweep.Compare(recorded, now, names, e.Tolerances)
	statusDrifts, err := compareStatuses(ctx, st, e, ri.ID, out.RunID, recParams)
	if err != nil {
		return err
	}
	for _, d := range statusDrifts {
		fmt.Fprintf(g.stdout, "DRIFT trial %q status: recorded %s, now %s\n", d.Trial, d.Recorded, d.Now)
	}
	pointDrifts, err := searchPointDrifts(ctx, st, e, out.RunID, recParams, recName, nowName)
	if err != nil {
		return err
	}
	for _, l := range pointDrifts {
		fmt.Fprintf(g.stdout, "DRIFT %s\n", l)
	}
	compared := comparedMetrics(recorded)
	for _, d := range drifts {
		fmt.Fprintf(g.stdout, "DRIFT trial %q %s: recorded %s, now %s (tolerance %g)\n", d.Trial, d.Metric, fmtF(d.Recorded), fmtF(d.Now), d.Tolerance)
	}
	var series *seriesCheck
	if reproFlags.series {
		if series, err = compareSeries(ctx, st, e, ri.ID, out.RunID, recName, nowName); err != nil {
			return err
		}
		for _, l := range series.lines {
			fmt.Fprintf(g.stdout, "DRIFT %s\n", l)
		}
	}
	switch {
	case len(statusDrifts) > 0 || len(pointDrifts) > 0 || len(drifts) > 0 || series != nil && series.drifted > 0:
		msg := fmt.Sprintf("%d of %d metrics", len(drifts), compared)
		if len(statusDrifts) > 0 {
			msg = fmt.Sprintf("%d trial status(es) and %s", len(statusDrifts), msg)
		}
		if len(pointDrifts) > 0 {
			msg = fmt.Sprintf("%d searched setting(s) of trials, %s", len(pointDrifts), msg)
		}
		if series != nil {
			msg += fmt.Sprintf(" and %d of %d series points", series.drifted, series.compared)
		}
		return &exitError{exitFailed, fmt.Errorf("repro of run %d (repro run %d): %s drifted", ri.ID, out.RunID, msg)}
	case series != nil:
		fmt.Fprintf(g.stdout, "repro of run %d (repro run %d): all %d summary metrics of %d trials match, and all %d series points\n", ri.ID, out.RunID, compared, len(recorded), series.compared)
	default:
		fmt.Fprintf(g.stdout, "repro of run %d (repro run %d): all %d summary metrics of %d trials match (series not compared: --series=false)\n", ri.ID, out.RunID, compared, len(recorded))
	}
	return nil
}

// searchPointDrifts compares the searched settings of a search run's
// trials (recParams) with its repro's (sweep.PointDrifts); none for a
// grid.
func searchPointDrifts(ctx context.Context, st *runs.Store, e *experiment.Experiment, nowID int64, recParams map[string]map[string]string, recName, nowName func(string) string) ([]string, error) {
	if e.Search == nil {
		return nil, nil
	}
	nowParams, err := st.TrialParams(ctx, nowID)
	if err != nil {
		return nil, err
	}
	return sweep.PointDrifts(e, sweep.ByName(recParams, recName), sweep.ByName(nowParams, nowName)), nil
}

// seriesCheck is what compareSeries found: lines naming each drifted
// trial, metric and step, how many points drifted, how many were compared.
type seriesCheck struct {
	lines             []string
	drifted, compared int
}

// compareSeries compares every series point of the recorded run with the
// repro's (trials matched by name, within the experiment's tolerances):
// as the results database recorded them, and as the series files the
// figures draw, where the recorded run's are still in the cache (the
// database holds one point per step; a file can hold a doubled one).
func compareSeries(ctx context.Context, st *runs.Store, e *experiment.Experiment, recID, nowID int64, recName, nowName func(string) string) (*seriesCheck, error) {
	rec, err := st.RunSeries(ctx, recID)
	if err != nil {
		return nil, err
	}
	now, err := st.RunSeries(ctx, nowID)
	if err != nil {
		return nil, err
	}
	c := &seriesCheck{}
	d, n := sweep.CompareSeries(sweep.ByName(rec, recName), sweep.ByName(now, nowName), e.Tolerances)
	c.lines, c.drifted, c.compared = sweep.DriftLines(d, "recorded", "now", 3), len(d), n
	recFiles, bad, _, err := seriesFiles(ctx, st, recID, runs.Output.Path)
	if err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(bad)) {
		c.lines = append(c.lines, fmt.Sprintf("trial %q: recorded series file: %v", recName(id), bad[id]))
		c.drifted++
	}
	nowFiles, bad, _, err := seriesFiles(ctx, st, nowID, runs.Output.Path)
	if err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(bad)) {
		c.lines = append(c.lines, fmt.Sprintf("trial %q: series file now: %v", nowName(id), bad[id]))
		c.drifted++
	}
	a, b := sweep.ByName(recFiles, recName), sweep.ByName(nowFiles, nowName)
	for t := range a {
		if _, ok := b[t]; !ok {
			delete(a, t) // gone from the cache, or not run now: the database's points were compared
		}
	}
	for t := range b {
		if _, ok := a[t]; !ok {
			delete(b, t)
		}
	}
	d, _ = sweep.CompareSeries(a, b, e.Tolerances)
	for _, l := range sweep.DriftLines(d, "recorded", "now", 3) {
		c.lines = append(c.lines, l+" (series files)")
	}
	c.drifted += len(d)
	return c, nil
}

// seriesFiles reads the series files recorded as outputs of a run's
// trials, each where locate says it is (runs.Output.Path: where the run
// recorded it; verify: this workdir's cache) and still there: trial id ->
// metric -> points, the trials whose file could not be read (damaged) with
// why, and the path of each file read or damaged.
func seriesFiles(ctx context.Context, st *runs.Store, runID int64, locate func(runs.Output) string) (sweep.TrialSeries, map[string]error, map[string]string, error) {
	outs, err := st.Outputs(ctx, runID)
	if err != nil {
		return nil, nil, nil, err
	}
	out, bad, paths := sweep.TrialSeries{}, map[string]error{}, map[string]string{}
	for _, o := range outs {
		if o.Trial == "" || path.Base(o.File) != trialio.SeriesArrow {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		p := locate(o)
		s, err := trialio.ReadSeries(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			bad[o.Trial] = err
		default:
			out[o.Trial] = sweep.SeriesOf(s)
		}
		paths[o.Trial] = p
	}
	return out, bad, paths, nil
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// comparedMetrics counts the summary metrics repro compares (timings are
// not).
func comparedMetrics(sums map[string]map[string]float64) int {
	n := 0
	for _, m := range sums {
		for k := range m {
			if !trialio.IsTiming(k) {
				n++
			}
		}
	}
	return n
}

// compareStatuses compares the statuses of the trials of the recorded run
// rec and of its repro run now, matched by name: a trial that diverged
// must diverge again (where: its summary's diverged_step, which the
// summaries' comparison checks).
func compareStatuses(ctx context.Context, st *runs.Store, e *experiment.Experiment, rec, now int64, recParams map[string]map[string]string) ([]sweep.StatusDrift, error) {
	a, err := trialStatuses(ctx, st, rec)
	if err != nil {
		return nil, err
	}
	b, err := trialStatuses(ctx, st, now)
	if err != nil {
		return nil, err
	}
	a, b = sweep.MatchByName(e, a, b, recParams)
	return sweep.CompareStatus(a, b), nil
}

// trialStatuses is the status of every trial of a run, by trial id.
func trialStatuses(ctx context.Context, st *runs.Store, id int64) (map[string]string, error) {
	ts, err := st.TrialStatuses(ctx, id)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(ts))
	for _, t := range ts {
		m[t.ID] = t.Status
	}
	return m, nil
}

// machine describes where a run ran: host, CPU and build target.
func machine(host, cpu, target string) string {
	if host == "" {
		host = "an unknown host"
	}
	if cpu == "" {
		cpu = "unknown CPU"
	}
	return fmt.Sprintf("%s (%s; %s)", host, cpu, target)
}

// currentMachine describes this process's machine and build.
func currentMachine() string {
	e := runs.Environment()
	return machine(e.Host, e.CPUModel, runs.BuildTarget().String())
}
