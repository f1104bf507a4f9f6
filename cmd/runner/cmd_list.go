package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"goldstone/experiment"
)

func init() {
	commands = append(commands, &command{name: "list", summary: "list the experiments of the experiments file (--experiment NAME: that one, with its variants and trials)", run: runList})
}

func runList(_ context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	cfg, err := loadConfig(g.config.list())
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(cfg.Experiments))
	if g.experiment != "" {
		if _, ok := cfg.Experiments[g.experiment]; !ok {
			return usageErr("%s: no experiment %q%s (have: %s)", g.config, g.experiment, didYouMean(g.experiment, names, ""), strings.Join(names, ", "))
		}
		names = []string{g.experiment}
	}
	tw := tabwriter.NewWriter(g.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EXPERIMENT\tPIPELINE\tTRIALS\tDESCRIPTION")
	for _, n := range names {
		e := cfg.Experiments[n]
		if err := e.Override(g.sets); err != nil {
			return &exitError{exitUsage, err}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", n, e.Pipeline, listedTrials(e), e.Description)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if g.experiment != "" {
		return listDetail(g.stdout, cfg.Experiments[g.experiment])
	}
	return nil
}

// listDetail writes one experiment's variants, grid and trial count under
// its row of runner list --experiment NAME.
func listDetail(w io.Writer, e *experiment.Experiment) error {
	var vs []string
	for _, v := range e.Variants {
		if v.Name != "" {
			vs = append(vs, v.Name)
		}
	}
	if len(vs) == 0 {
		vs = []string{"(one, unnamed)"}
	}
	fmt.Fprintf(w, "\nvariants: %s\n", strings.Join(vs, ", "))
	for _, ax := range e.Grid {
		vals := make([]string, len(ax.Values))
		for i, v := range ax.Values {
			vals[i] = fmt.Sprint(v)
		}
		fmt.Fprintf(w, "grid: %s = %s\n", ax.Key, strings.Join(vals, ", "))
	}
	if e.Search != nil {
		_, err := fmt.Fprintf(w, "trials: %d (search: %s sampler, %d points x %d grid trials; objective %s %s)\n",
			listedTrials(e), e.Search.Sampler, e.Search.Trials, len(e.Trials()), e.Search.Direction, e.Search.Objective)
		return err
	}
	_, err := fmt.Fprintf(w, "trials: %d (%s)\n", listedTrials(e), strings.ReplaceAll(e.SizeText(), "×", "x"))
	return err
}
