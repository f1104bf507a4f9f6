package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"goldstone/experiment"
	"goldstone/pipeline"
)

func init() {
	commands = append(commands, &command{name: "plan", summary: "dry run: list each stage as cached or to run, with the reason", run: runPlan,
		// With a batch --executor, the array job of the trials (a
		// search's first wave) as the run would submit it.
		flags: registerSlurmFlags})
}

func runPlan(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	e, err := g.loadExperiment()
	if err != nil {
		return err
	}
	if e.Search != nil {
		if err := checkSearchRun(g, e, slurmFlags.executor); err != nil {
			return err
		}
		if e, err = planSearch(g.stdout, e); err != nil {
			return &exitError{exitUsage, err}
		}
	}
	trials := e.Trials()
	if err := planArrays(g, e, len(trials)); err != nil {
		return err
	}
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
	return printDisk(g.stdout, built, items, g.workdir, e.Name)
}

// printDisk prints what each trial keeps on disk by its keep policy (the
// pipeline's experiment.DiskEstimate) and the total, and how the bytes
// are counted; nothing when the pipeline gives no estimate.
func printDisk(w io.Writer, built *experiment.Built, items []pipeline.PlanItem, workdir, exp string) error {
	byNode := map[string]pipeline.PlanItem{}
	for _, it := range items {
		byNode[it.Node] = it
	}
	cached := func(node, output string) (string, bool) {
		it, ok := byNode[exp+"/"+node]
		if !ok || !it.Cached {
			return "", false
		}
		return pipeline.CachedOutput(workdir, it, output), true
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TRIAL\tNAME\tKEEP\tDISK\tBYTES")
	var total int64
	var hows []string
	unknown, n := 0, 0
	for _, tn := range built.Trials {
		if tn.Disk == nil {
			continue
		}
		n++
		bytes, keep, how := tn.Disk(cached)
		if !slices.Contains(hows, how) {
			hows = append(hows, how)
		}
		size, exact := "unknown", "?"
		if bytes < 0 {
			unknown++
		} else {
			total += bytes
			size, exact = byteText(bytes), strconv.FormatInt(bytes, 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", tn.Trial.ID, tn.Trial.Slug(), keep, size, exact)
	}
	if n == 0 {
		return nil
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "disk kept: %s (%d bytes) in %d trials", byteText(total), total, n-unknown)
	if unknown > 0 {
		fmt.Fprintf(w, " (%d more unknown)", unknown)
	}
	fmt.Fprintf(w, "; estimated as %s\n", strings.Join(hows, "; "))
	return nil
}
