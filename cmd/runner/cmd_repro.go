package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"goldstone/internal/atomicfile"
	"goldstone/internal/fault"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/stages"
	"goldstone/stages/trialio"
	"goldstone/sweep"
)

var reproFlags struct {
	run int64
}

func init() {
	commands = append(commands, &command{
		name:    "repro",
		summary: "re-run a recorded run from scratch (no cache) and compare every summary metric",
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&reproFlags.run, "run", 0, "run id to check (default: the latest finished run of the experiment)")
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
	e, err := stages.ExperimentFromResolved(ri.ConfigJSON)
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
	out, err := sweep.Execute(ctx, st, e, sweep.Local{}, sweep.RunOptions{
		WorkDir: filepath.Join(tmp, "work"), DataDir: g.dataDir, Jobs: g.jobs, Force: true,
		Kind: runs.KindRepro, Log: g.log, Observer: prog, Lock: lock,
	})
	prog.Close()
	fault.Point("repro:ran")
	if err != nil {
		return &exitError{exitUsage, err}
	}
	if out.DataErr != nil {
		return &exitError{exitUsage, out.DataErr}
	}
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
	recorded, now = sweep.MatchByName(e, recorded, now, recParams)
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
	compared := comparedMetrics(recorded)
	for _, d := range drifts {
		fmt.Fprintf(g.stdout, "DRIFT trial %q %s: recorded %s, now %s (tolerance %g)\n", d.Trial, d.Metric, fmtF(d.Recorded), fmtF(d.Now), d.Tolerance)
	}
	if len(statusDrifts) > 0 {
		return &exitError{exitFailed, fmt.Errorf("repro of run %d (repro run %d): %d trial status(es) and %d of %d metrics drifted", ri.ID, out.RunID, len(statusDrifts), len(drifts), compared)}
	}
	if len(drifts) > 0 {
		return &exitError{exitFailed, fmt.Errorf("repro of run %d (repro run %d): %d of %d metrics drifted", ri.ID, out.RunID, len(drifts), compared)}
	}
	fmt.Fprintf(g.stdout, "repro of run %d (repro run %d): all %d summary metrics of %d trials match\n", ri.ID, out.RunID, compared, len(recorded))
	return nil
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
func compareStatuses(ctx context.Context, st *runs.Store, e *stages.Experiment, rec, now int64, recParams map[string]map[string]string) ([]sweep.StatusDrift, error) {
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
