package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"goldstone/experiment"
)

var exampleDataFlags struct{ out string }

// DefaultExamplesDir is where example-data writes, and where the example
// experiments of experiments.toml look (relative to the working directory).
const DefaultExamplesDir = "data/examples"

func init() {
	commands = append(commands, &command{
		name:    "example-data",
		summary: "write the small data files of the example experiments (example-own-ratings, example-explicit-ratings, example-jsonl-corpus) into --out",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&exampleDataFlags.out, "out", DefaultExamplesDir, "directory to write the example files to")
		},
		run: runExampleData,
	})
}

func runExampleData(_ context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	dir := exampleDataFlags.out
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range experiment.ExampleFiles() {
		p := filepath.Join(dir, f.Name)
		if err := f.Write(p); err != nil {
			return fmt.Errorf("example data: %w", err)
		}
		fmt.Fprintf(g.stdout, "wrote %s: %s\n", p, f.What)
	}
	return nil
}
