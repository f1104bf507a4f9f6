package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"
)

func init() {
	commands = append(commands, &command{name: "list", summary: "list the experiments of the experiments file", run: runList})
}

func runList(_ context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	cfg, err := loadConfig(g.config.list())
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(g.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EXPERIMENT\tPIPELINE\tTRIALS\tDESCRIPTION")
	for _, n := range slices.Sorted(maps.Keys(cfg.Experiments)) {
		e := cfg.Experiments[n]
		if err := e.Override(g.sets); err != nil {
			return &exitError{exitUsage, err}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", n, e.Pipeline, listedTrials(e), e.Description)
	}
	return tw.Flush()
}
