package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
)

func init() {
	for _, pin := range []bool{true, false} {
		c := &command{
			name:    "pin",
			summary: "pin a run: gc never deletes it nor counts it among the runs --keep-last keeps",
			args:    "RUN",
			nargs:   1,
			run: func(ctx context.Context, g *globalOptions, _ *flag.FlagSet, args []string) error {
				return runPin(ctx, g, args[0], pin)
			},
		}
		if !pin {
			c.name, c.summary = "unpin", "unpin a run (runner pin): gc treats it as any other run again"
		}
		commands = append(commands, c)
	}
}

func runPin(ctx context.Context, g *globalOptions, arg string, pin bool) error {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return usageErr("want a run id (a positive integer, see 'runner runs'), got %q", termText(arg))
	}
	st, err := openResultsRW(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := st.Run(ctx, id)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	if err := st.Pin(ctx, id, pin); err != nil {
		return err
	}
	if pin {
		fmt.Fprintf(g.stdout, "pinned run %d (%s): gc keeps it\n", id, termText(r.Experiment))
	} else {
		fmt.Fprintf(g.stdout, "unpinned run %d (%s)\n", id, termText(r.Experiment))
	}
	return nil
}
