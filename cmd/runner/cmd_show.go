package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
)

func init() {
	commands = append(commands, &command{
		name:    "show",
		summary: "print one experiment resolved (extends, --set, --variant, every setting) as experiments-file TOML",
		run:     runShow,
	})
}

// runShow prints the experiment as loadExperiment resolves it for a run:
// TOML that reads back (--config FILE) as the same experiment.
func runShow(_ context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	e, err := g.loadExperiment()
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "# %s resolved from %s", e.Name, g.config)
	for _, s := range g.sets {
		fmt.Fprintf(g.stdout, " --set %s", s)
	}
	for _, v := range g.variants {
		fmt.Fprintf(g.stdout, " --variant %s", v)
	}
	fmt.Fprintf(g.stdout, "\n# %d trials (%s); a setting commented out has a default no file may give\n", e.Size(), strings.ReplaceAll(e.SizeText(), "×", "x"))
	_, err = fmt.Fprint(g.stdout, e.TOML())
	return err
}
