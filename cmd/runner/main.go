// Command runner is goldstone's command line: it runs named experiments from
// experiments.toml through the cached stage pipeline, records everything in
// a SQLite results database, and checks that recorded runs reproduce.
//
//	runner --experiment NAME          run (or resume) an experiment
//	runner list                       list the experiments
//	runner plan --experiment NAME     show which stages are cached or would run, and why
//	runner results --experiment NAME  one row per trial of the latest run
//	runner repro --experiment NAME    re-run from scratch and compare with the recorded run
//	runner words --experiment NAME --age WORD   word aging (dynamic word embeddings)
//
// Exit codes: 0 success; 1 a trial failed or repro drifted; 2 a usage,
// configuration or data error; 130 interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"goldstone/stages"
	_ "goldstone/stages/pipelines" // registers every pipeline
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// exitError carries an exit code to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, args...)}
}

// multiFlag is a repeatable string flag (--set).
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// globalOptions are the flags every sub-command takes.
type globalOptions struct {
	config     string
	db         string
	workdir    string
	dataDir    string
	jobs       int
	sets       multiFlag
	quiet      bool
	logFormat  string
	experiment string
	reports    string
	stdout     io.Writer
	stderr     io.Writer
	log        *slog.Logger
}

func (g *globalOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&g.config, "config", "experiments.toml", "experiments file")
	fs.StringVar(&g.db, "db", "results.db", "SQLite results database")
	fs.StringVar(&g.workdir, "workdir", "work", "directory for stage outputs and caches")
	fs.StringVar(&g.dataDir, "data-dir", defaultDataDir(), "directory of data sets (default: $GOLDSTONE_DATA, else ./data, else ../shared/data if it exists)")
	fs.StringVar(&g.reports, "reports", "reports", "directory the figures and Markdown reports are copied to (<dir>/<experiment>/run-<id>/)")
	fs.IntVar(&g.jobs, "jobs", runtime.NumCPU(), "trials (stages) run at once; each gets NumCPU/jobs cores")
	fs.Var(&g.sets, "set", "override a setting: key=value (repeatable; an array value makes it a grid)")
	fs.BoolVar(&g.quiet, "quiet", false, "print only warnings, errors and the final result")
	fs.StringVar(&g.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&g.experiment, "experiment", "", "experiment name from the experiments file")
}

// defaultDataDir is $GOLDSTONE_DATA, else ./data, else ../shared/data (the
// layout of a checkout beside a shared data folder) when it exists, else ./data.
func defaultDataDir() string {
	if d := os.Getenv("GOLDSTONE_DATA"); d != "" {
		return d
	}
	for _, d := range []string{"data", filepath.Join("..", "shared", "data")} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return "data"
}

func (g *globalOptions) setup() error {
	if g.jobs < 1 {
		return usageErr("--jobs must be >= 1, got %d", g.jobs)
	}
	level := slog.LevelInfo
	if g.quiet {
		level = slog.LevelWarn
	}
	hopts := &slog.HandlerOptions{Level: level}
	switch g.logFormat {
	case "text":
		g.log = slog.New(slog.NewTextHandler(g.stderr, hopts))
	case "json":
		g.log = slog.New(slog.NewJSONHandler(g.stderr, hopts))
	default:
		return usageErr("--log-format must be text or json, got %q", g.logFormat)
	}
	return nil
}

// loadExperiment reads the config and resolves --experiment with --set.
func (g *globalOptions) loadExperiment() (*stages.Experiment, error) {
	if g.experiment == "" {
		return nil, usageErr("missing --experiment NAME (see 'runner list')")
	}
	cfg, err := stages.LoadConfig(g.config)
	if err != nil {
		return nil, &exitError{exitUsage, err}
	}
	e, ok := cfg.Experiments[g.experiment]
	if !ok {
		names := slices.Sorted(maps.Keys(cfg.Experiments))
		return nil, usageErr("%s: no experiment %q (have: %s)", g.config, g.experiment, strings.Join(names, ", "))
	}
	if err := e.Override(g.sets); err != nil {
		return nil, &exitError{exitUsage, err}
	}
	return e, nil
}

type command struct {
	name, summary string
	args          string // positional arguments, e.g. "RUN_A RUN_B" (usage text)
	nargs         int    // number of positional arguments (flags may come before, between and after them)
	run           func(ctx context.Context, g *globalOptions, fs *flag.FlagSet, args []string) error
	flags         func(fs *flag.FlagSet)
}

var commands []*command

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	name := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	var cmd *command
	for _, c := range commands {
		if c.name == name {
			cmd = c
		}
	}
	if name == "help" {
		printUsage(stdout)
		return exitOK
	}
	if cmd == nil {
		fmt.Fprintf(stderr, "runner: unknown command %q\n", name)
		printUsage(stderr)
		return exitUsage
	}
	fs := flag.NewFlagSet("runner "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	g := &globalOptions{stdout: stdout, stderr: stderr}
	g.register(fs)
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			return exitUsage
		}
		if fs.NArg() == 0 || len(pos) == cmd.nargs {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	if len(pos) < cmd.nargs {
		fmt.Fprintf(stderr, "runner %s: want %s\n", name, cmd.args)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "runner %s: unexpected argument %q\n", name, fs.Arg(0))
		return exitUsage
	}
	err := g.setup()
	if err == nil {
		err = cmd.run(ctx, g, fs, pos)
	}
	if err == nil {
		return exitOK
	}
	code := exitFailed
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	} else if errors.Is(err, context.Canceled) {
		code = exitInterrupted
	}
	if code == exitInterrupted {
		fmt.Fprintln(stderr, "runner: interrupted")
	} else {
		fmt.Fprintf(stderr, "runner: %s\n", oneLine(err.Error()))
	}
	return code
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: runner [command] [flags]")
	fmt.Fprintln(w, "commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
	fmt.Fprintln(w, "global flags: --config --db --workdir --data-dir --jobs --set key=value --quiet --log-format text|json --experiment NAME")
	fmt.Fprintln(w, "exit codes: 0 ok; 1 a trial failed or repro drifted; 2 usage, configuration or data error; 130 interrupted")
}
