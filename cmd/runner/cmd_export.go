package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"goldstone/experiment"
)

var exportFlags struct {
	run int64
	out string
}

func init() {
	commands = append(commands, &command{
		name:    "export",
		summary: "write a run's trials, parameters, summaries, series and outputs as Parquet files",
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&exportFlags.run, "run", 0, "run id (default: the latest run of --experiment)")
			fs.StringVar(&exportFlags.out, "out", "", "output directory (default: <reports>/<experiment>/run-<id>/export)")
		},
		run: runExport,
	})
}

func runExport(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	if g.experiment == "" && exportFlags.run == 0 {
		return usageErr("missing --experiment NAME or --run ID")
	}
	st, err := openResults(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	ri, err := chosenRun(ctx, st, g, exportFlags.run)
	if err != nil {
		return err
	}
	dir := exportFlags.out
	if dir == "" {
		rd, err := experiment.RunDir(g.reports, ri.Experiment, ri.ID)
		if err != nil {
			return usageErr("run %d: %w", ri.ID, err)
		}
		dir = filepath.Join(rd, "export")
	}
	paths, err := st.ExportParquet(ctx, ri.ID, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "run %d of %s exported:\n", ri.ID, ri.Experiment)
	for _, p := range paths {
		size := int64(0)
		if fi, err := os.Stat(p); err == nil {
			size = fi.Size()
		}
		fmt.Fprintf(g.stdout, "  %s (%s)\n", p, byteText(size))
	}
	return nil
}
