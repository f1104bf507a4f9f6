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
//	runner help [COMMAND]             the commands, or one command's flags
//	runner --version                  module version and VCS revision
//
// Flags and the command name may come in any order (runner --experiment X
// plan). Exit codes: 0 success; 1 a runtime failure (a trial failed, repro
// drifted, an I/O or SQLite error); 2 a usage, configuration or data error;
// 130 interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"goldstone/experiment"
	"goldstone/internal/checkpoint"
	"goldstone/pipeline"
	"goldstone/runs"
	_ "goldstone/stages/pipelines" // registers every pipeline
	_ "goldstone/sweep/procexec"   // registers the process back end (--executor process)
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

// usageError is an error in how the runner was called.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// usageErr is a usage error (exit 2).
func usageErr(format string, args ...any) error {
	return &exitError{exitUsage, usageError{fmt.Errorf(format, args...)}}
}

// exitCode maps an error to the exit status. An exitError with another code
// than exitUsage keeps it. Exit 2 is only for usage, configuration and data
// errors: a usageErr, a experiment.ConfigError, a experiment.DataError, a run or
// database that does not exist, a database a writing command cannot write
// (runs.ErrReadOnlyDatabase), a work directory or a run held by another
// runner;
// so wrapping any error in exitError{exitUsage, err} means "2 if it is one
// of those". Everything else is a runtime failure (exit 1): SQLite and
// other I/O errors, failed trials.
func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) && ee.code != exitUsage {
		return ee.code
	}
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	var (
		ue usageError
		ce *experiment.ConfigError
		de *experiment.DataError
		oe *runs.OwnedError
	)
	if errors.As(err, &ue) || errors.As(err, &ce) || errors.As(err, &de) || errors.As(err, &oe) ||
		errors.Is(err, runs.ErrNotFound) || errors.Is(err, runs.ErrNoDatabase) || errors.Is(err, runs.ErrReadOnlyDatabase) ||
		errors.Is(err, pipeline.ErrBusy) {
		return exitUsage
	}
	return exitFailed
}

// configList is --config: one experiments file by default, or the files
// given, in order (repeatable).
type configList struct {
	paths []string
}

func (c configList) String() string { return strings.Join(c.list(), ", ") }

func (c *configList) Set(v string) error { c.paths = append(c.paths, v); return nil }

// list is the files: those given, else experiments.toml.
func (c configList) list() []string {
	if len(c.paths) == 0 {
		return []string{"experiments.toml"}
	}
	return c.paths
}

// multiFlag is a repeatable string flag (--set).
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// globalOptions are the flags every sub-command takes.
type globalOptions struct {
	config     configList
	variants   multiFlag
	db         string
	workdir    string
	dataDir    string
	jobs       int
	sets       multiFlag
	quiet      bool
	logFormat  string
	experiment string
	reports    string
	dbWait     time.Duration
	maxTrials  int
	version    bool
	ckEvery    int
	ckMinutes  float64
	stdout     io.Writer
	stderr     io.Writer
	log        *slog.Logger
}

func (g *globalOptions) register(fs *flag.FlagSet) {
	fs.Var(&g.config, "config", "experiments file; repeat to merge several in order (an experiment defined in two of them is an error; one may extend another's)")
	fs.StringVar(&g.db, "db", "results.db", "SQLite results database")
	fs.StringVar(&g.workdir, "workdir", "work", "directory for stage outputs and caches")
	fs.StringVar(&g.dataDir, "data-dir", defaultDataDir(), "directory of data sets: $GOLDSTONE_DATA, else ./data, else ../shared/data if it exists")
	fs.StringVar(&g.reports, "reports", "reports", "directory the figures and Markdown reports are copied to (<dir>/<experiment>/run-<id>/)")
	fs.IntVar(&g.jobs, "jobs", runtime.NumCPU(), "trials (stages) run at once; each gets NumCPU/jobs cores")
	fs.Var(&g.sets, "set", "override a setting: key=value (repeatable; an array value makes it a grid)")
	fs.BoolVar(&g.quiet, "quiet", false, "print only warnings, errors and the final result")
	fs.StringVar(&g.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&g.experiment, "experiment", "", "experiment name from the experiments file")
	fs.Var(&g.variants, "variant", "run only this variant of the experiment (repeatable; the default: every variant)")
	fs.BoolVar(&g.version, "version", false, "print the module version and VCS revision and exit")
	fs.IntVar(&g.maxTrials, "max-trials", defaultMaxTrials, "the most trials an experiment's sweep (variants × grid) may have; a larger one is an error before anything is enumerated")
	fs.IntVar(&g.ckEvery, "checkpoint-every", 0, "a trial saves a checkpoint every this many steps (0: by time only; see --checkpoint-minutes)")
	fs.Float64Var(&g.ckMinutes, "checkpoint-minutes", checkpoint.DefaultInterval.Minutes(), "a trial saves a checkpoint when this many minutes have passed since its last one; 0 with --checkpoint-every 0: no checkpoints")
	fs.DurationVar(&g.dbWait, "db-wait", runs.DefaultWait, "how long a write to the results database keeps trying while another process locks it or its disk is full, before the run stops (interrupted, resumable)")
}

// checkpointPolicy is when trials save checkpoints (--checkpoint-every,
// --checkpoint-minutes).
func (g *globalOptions) checkpointPolicy() checkpoint.Policy {
	if g.ckEvery <= 0 && g.ckMinutes <= 0 {
		return checkpoint.Policy{Off: true}
	}
	p := checkpoint.Policy{Every: max(g.ckEvery, 0)}
	if g.ckMinutes > 0 {
		p.Interval = time.Duration(g.ckMinutes * float64(time.Minute))
	}
	return p
}

// checkpointArgs are the checkpoint flags that give p to another runner
// (a Slurm task's worker).
func checkpointArgs(p checkpoint.Policy) []string {
	if p.Off {
		return []string{"--checkpoint-every", "0", "--checkpoint-minutes", "0"}
	}
	return []string{"--checkpoint-every", strconv.Itoa(p.Every), "--checkpoint-minutes", strconv.FormatFloat(p.Interval.Minutes(), 'g', -1, 64)}
}

// openDB opens the results database for writing, with --db-wait; with
// mustExist a missing file is an error (runs.ErrNoDatabase) instead of a
// new database.
func (g *globalOptions) openDB(ctx context.Context, mustExist bool) (*runs.Store, error) {
	o := runs.OpenOptions{Wait: g.dbWait}
	if mustExist {
		return runs.OpenExistingWith(ctx, g.db, o)
	}
	return runs.OpenWith(ctx, g.db, o)
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
	if g.ckEvery < 0 || g.ckMinutes < 0 || math.IsNaN(g.ckMinutes) || math.IsInf(g.ckMinutes, 0) {
		return usageErr("--checkpoint-every %d, --checkpoint-minutes %v: want >= 0", g.ckEvery, g.ckMinutes)
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

// defaultMaxTrials bounds a sweep unless --max-trials says otherwise: ten
// times the largest experiment of experiments.toml, and a plan that takes
// seconds, not minutes, to enumerate and record.
const defaultMaxTrials = 10000

// loadExperiment reads the config and resolves --experiment with --set.
func (g *globalOptions) loadExperiment() (*experiment.Experiment, error) {
	if g.experiment == "" {
		return nil, usageErr("missing --experiment NAME (see 'runner list')")
	}
	cfg, err := loadConfig(g.config.list())
	if err != nil {
		return nil, err
	}
	e, ok := cfg.Experiments[g.experiment]
	if !ok {
		names := slices.Sorted(maps.Keys(cfg.Experiments))
		return nil, usageErr("%s: no experiment %q%s (have: %s)", g.config, g.experiment, didYouMean(g.experiment, names, ""), strings.Join(names, ", "))
	}
	if err := e.Override(g.sets); err != nil {
		return nil, &exitError{exitUsage, err}
	}
	if err := e.SelectVariants(g.variants); err != nil {
		return nil, &exitError{exitUsage, err}
	}
	if n := e.Size(); n > g.maxTrials {
		return nil, usageErr("%s: the sweep of %s has %d trials (%s), more than --max-trials %d: narrow the grid or raise --max-trials", g.config, e.Name, n, e.SizeText(), g.maxTrials)
	}
	return e, nil
}

type command struct {
	name, summary string
	args          string   // positional arguments, e.g. "RUN_A RUN_B" (usage text)
	nargs         int      // number of positional arguments (flags may come before, between and after them)
	variadic      bool     // nargs is the least number of positional arguments
	examples      []string // command lines shown by its help
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
	name, args, explicit := findCommand(args)
	if name == "help" {
		return help(args, stdout, stderr)
	}
	cmd := lookupCommand(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "runner: unknown command %q%s; the commands are: %s (see 'runner help')\n",
			termText(name), didYouMean(name, commandNames(), ""), strings.Join(commandNames(), ", "))
		return exitUsage
	}
	if !explicit && slices.ContainsFunc(args, isHelpFlag) {
		printUsage(stdout) // runner --help: the commands, not only run's flags
		return exitOK
	}
	g := &globalOptions{stdout: stdout, stderr: stderr}
	fs := cmd.flagSet(g, io.Discard) // errors are said below, in one line
	fs.Usage = func() {}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printCommandUsage(stdout, cmd)
				return exitOK
			}
			msg := err.Error()
			if bad, ok := undefinedFlag(err); ok {
				msg = "unknown flag --" + bad + didYouMean(bad, flagNames(fs), "--")
			}
			fmt.Fprintf(stderr, "runner %s: %s (see 'runner help %s')\n", name, termText(msg), name)
			return exitUsage
		}
		if fs.NArg() == 0 || (!cmd.variadic && len(pos) == cmd.nargs) {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	if g.version {
		fmt.Fprintln(stdout, versionString())
		return exitOK
	}
	if len(pos) < cmd.nargs {
		fmt.Fprintf(stderr, "runner %s: want %s (see 'runner help %s')\n", name, cmd.args, name)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "runner %s: unexpected argument %q (see 'runner help %s')\n", name, fs.Arg(0), name)
		return exitUsage
	}
	err := g.setup()
	if err == nil && reads(name, "reports") && reads(name, "workdir") {
		err = checkReportsDir(g.reports, g.workdir)
	}
	if err == nil {
		err = cmd.run(ctx, g, fs, pos)
	}
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	if code == exitInterrupted {
		fmt.Fprintln(stderr, "runner: interrupted")
	} else {
		fmt.Fprintf(stderr, "runner: %s\n", oneLine(err.Error()))
	}
	return code
}

func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// flagSet returns the command's flags: the global ones and its own.
func (c *command) flagSet(g *globalOptions, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("runner "+c.name, flag.ContinueOnError)
	fs.SetOutput(out)
	g.register(fs)
	if c.flags != nil {
		c.flags(fs)
	}
	return fs
}

func isHelpFlag(a string) bool {
	switch a {
	case "-h", "-help", "--help", "-h=true", "--help=true":
		return true
	}
	return false
}

// findCommand finds the command name among args, wherever it is: the first
// argument that is neither a flag nor a flag's value. It returns the name
// ("run" when there is none), the other arguments in order, and whether the
// name was given. Whether a flag takes a value is looked up in the flags of
// every command (a boolean flag takes none).
func findCommand(args []string) (name string, rest []string, explicit bool) {
	boolFlag := map[string]bool{}
	for _, c := range commands {
		c.flagSet(&globalOptions{}, io.Discard).VisitAll(func(f *flag.Flag) {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				boolFlag[f.Name] = true
			}
		})
	}
	boolFlag["h"], boolFlag["help"] = true, true
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) > 1 && a[0] == '-' {
			f := strings.TrimLeft(a, "-")
			if !strings.Contains(f, "=") && !boolFlag[f] {
				i++ // the flag's value
			}
			continue
		}
		if lookupCommand(a) != nil || a == "help" || i == 0 {
			return a, append(slices.Clip(args[:i]), args[i+1:]...), true
		}
		break // a positional argument of the default command
	}
	return "run", args, false
}

// help prints the commands (runner help) or one command's usage (runner
// help COMMAND).
func help(args []string, stdout, stderr io.Writer) int {
	var names []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			names = append(names, a)
		}
	}
	if len(names) == 0 {
		printUsage(stdout)
		return exitOK
	}
	cmd := lookupCommand(names[0])
	if cmd == nil {
		fmt.Fprintf(stderr, "runner help: unknown command %q%s; the commands are: %s\n",
			termText(names[0]), didYouMean(names[0], commandNames(), ""), strings.Join(commandNames(), ", "))
		return exitUsage
	}
	printCommandUsage(stdout, cmd)
	return exitOK
}

// versionString is the module version and the VCS revision the binary was
// built from (runtime/debug.ReadBuildInfo).
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "runner: no build information"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	out := fmt.Sprintf("runner %s %s", bi.Main.Path, v)
	if rev := settings["vcs.revision"]; rev != "" {
		out += " revision " + rev
		if settings["vcs.modified"] == "true" {
			out += " (modified)"
		}
		if t := settings["vcs.time"]; t != "" {
			out += " " + t
		}
	} else {
		out += " (no VCS revision: built outside a checkout or with -buildvcs=false)"
	}
	return out + " " + bi.GoVersion
}

// oneLine joins the lines of s with "; ", collapses white space and
// escapes what a terminal would act on (termText).
func oneLine(s string) string {
	return termText(strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " "))
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: runner [command] [flags]   (flags and command in any order; the default command is run)")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-20s %s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
	fmt.Fprintf(w, "  %-20s %s\n", "help [COMMAND]", "the commands, or a command's flags")
	fmt.Fprintln(w, "\nglobal flags (each command's help lists those it reads: runner help COMMAND):")
	fs := flag.NewFlagSet("runner", flag.ContinueOnError)
	(&globalOptions{}).register(fs)
	printFlags(w, fs, nil)
	fmt.Fprintln(w, "\nexit codes: 0 ok; 1 a runtime failure (a trial failed, repro drifted, an I/O or SQLite error); 2 a usage, configuration or data error; 130 interrupted")
}
