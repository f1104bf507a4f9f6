package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"goldstone/experiment"
	"goldstone/pipeline"
	"goldstone/runs"
)

func init() {
	commands = append(commands, &command{name: "plan", summary: "dry run: list each stage as cached or to run, with the reason", run: runPlan})
}

func runPlan(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	e, err := g.loadExperiment()
	if err != nil {
		return err
	}
	if e.Search != nil {
		if err := checkSearchRun(g, e, runs.ExecutorLocal); err != nil {
			return err
		}
		if e, err = planSearch(g.stdout, e); err != nil {
			return &exitError{exitUsage, err}
		}
	}
	trials := e.Trials()
	built, err := experiment.Build(ctx, e, trials, experiment.Env{DataDir: g.dataDir, Scan: true})
	if err != nil {
		return &exitError{exitUsage, err}
	}
	for _, w := range built.Warnings {
		g.log.Warn(w)
	}
	items, err := pipeline.Plan(ctx, built.Graph, pipeline.Options{WorkDir: g.workdir, Jobs: g.jobs})
	if err != nil {
		return &exitError{exitUsage, err}
	}
	names := map[string]string{}
	for _, tn := range built.Trials {
		for _, n := range tn.Nodes {
			names[n] = tn.Trial.ID
		}
	}
	tw := tabwriter.NewWriter(g.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tNODE\tSTATUS\tREASON\tTRIAL")
	run, corrupt := 0, 0
	for _, it := range items {
		status := "cached"
		switch {
		case it.Corrupt:
			// The entry's outputs no longer match their digests: the run
			// evicts it and runs the stage again.
			status = "corrupt"
			run++
			corrupt++
		case !it.Cached:
			status = "run"
			run++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", it.Stage, it.Node, status, it.Reason, names[it.Node])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "%d stages: %d cached, %d to run", len(items), len(items)-run, run)
	if corrupt > 0 {
		fmt.Fprintf(g.stdout, " (%d corrupt cache entries, evicted when the run reaches them)", corrupt)
	}
	fmt.Fprintln(g.stdout)
	return nil
}
