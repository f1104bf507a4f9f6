package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"goldstone/experiment"
)

// commandGlobals are the global flags each command reads: its help lists
// these and its own flags, no others (every command still accepts every
// global flag, so that flags and the command go in any order). A command
// missing here lists every global flag.
var commandGlobals = map[string][]string{
	"run":          {"experiment", "set", "variant", "config", "db", "workdir", "data-dir", "reports", "jobs", "max-trials", "db-wait", "quiet", "log-format"},
	"list":         {"experiment", "set", "config"},
	"plan":         {"experiment", "set", "variant", "config", "workdir", "data-dir", "jobs", "max-trials"},
	"results":      {"experiment", "db"},
	"runs":         {"experiment", "db"},
	"diff":         {"db"},
	"compare":      {"db", "reports"},
	"export":       {"experiment", "db", "reports"},
	"gc":           {"experiment", "db", "workdir", "reports", "db-wait"},
	"verify":       {"workdir", "db"},
	"serve":        {"db", "reports"},
	"report":       {"experiment", "db", "workdir", "data-dir", "reports", "jobs", "db-wait", "quiet", "log-format"},
	"repro":        {"experiment", "db", "workdir", "data-dir", "jobs", "db-wait", "quiet", "log-format"},
	"claims":       {"config", "db"},
	"words":        {"experiment", "set", "variant", "config", "workdir", "data-dir", "max-trials"},
	"example-data": {},
	"show":         {"experiment", "set", "variant", "config", "max-trials"},
	"completion":   {},
	"pin":          {"db", "db-wait"},
	"unpin":        {"db", "db-wait"},
	"status":       {"experiment", "db", "workdir", "reports", "jobs"},
	"cancel":       {"experiment", "db"},
	"collect":      {"experiment", "db", "workdir", "reports", "jobs", "db-wait", "quiet", "log-format"},
	"worker":       {"experiment", "workdir", "checkpoint-every", "checkpoint-minutes"},
	"best":         {"experiment", "set", "config", "db", "workdir", "data-dir", "reports", "jobs", "db-wait", "quiet", "log-format"},
}

// reads reports whether command name reads the global flag (commandGlobals;
// a command missing there reads every one).
func reads(name, flag string) bool {
	g, ok := commandGlobals[name]
	return !ok || slices.Contains(g, flag)
}

// commandExamples are command lines each command's help shows (a command
// may carry its own in command.examples).
var commandExamples = map[string][]string{
	"run":          {"runner --experiment artificial --set steps=2000 --set seed=1,2", "runner run --experiment movielens-sweep --note \"dim 10\" --tag goal=paper --progress-metric valid_ll"},
	"list":         {"runner list", "runner list --experiment artificial"},
	"plan":         {"runner plan --experiment artificial --set k2=5"},
	"results":      {"runner results --experiment artificial", "runner results --run 3 --format csv > trials.csv"},
	"runs":         {"runner runs", "runner runs --tag goal=paper --format json"},
	"diff":         {"runner diff 3 5", "runner diff 3 5 --format csv"},
	"export":       {"runner export --experiment artificial --out export"},
	"gc":           {"runner gc --dry-run", "runner gc --keep-last 2"},
	"verify":       {"runner verify", "runner verify --evict"},
	"report":       {"runner report --run 3"},
	"repro":        {"runner repro --experiment artificial"},
	"claims":       {"runner claims", "runner claims --readme docs/results.md --db results.db --also-db older.db"},
	"words":        {"runner words --experiment dwe-sotu --age car --to 1800 --k 5"},
	"example-data": {"runner example-data", "runner example-data --out data/examples"},
	"status":       {"runner status --run 7", "runner status --run 7 --watch"},
	"serve":        {"runner serve", "runner serve --addr 127.0.0.1:0 --db results.db --reports reports"},
	"cancel":       {"runner cancel --run 7"},
	"pin":          {"runner pin 3"},
	"unpin":        {"runner unpin 3"},
	"show":         {"runner show --experiment artificial", "runner show --experiment artificial --set variants.goldstone.lr=0.5 --set seed=1..3 --variant goldstone --variant gd"},
	"completion":   {"runner completion bash > ~/.local/share/bash-completion/completions/runner", "runner completion zsh > ~/.zfunc/_runner", "runner completion fish > ~/.config/fish/completions/runner.fish"},
	"collect":      {"runner collect --run 7"},
}

// flagMeta names a flag's value in help (--keep-last N) and gives an
// example of it; flags not listed get a name from their type and their
// default as the example.
var flagMeta = map[string][2]string{
	"config":                 {"FILE", "experiments.toml"},
	"db":                     {"FILE", "results.db"},
	"workdir":                {"DIR", "work"},
	"data-dir":               {"DIR", "../shared/data"},
	"reports":                {"DIR", "reports"},
	"jobs":                   {"N", "2"},
	"set":                    {"KEY=VALUE", "lr=0.5,1"},
	"log-format":             {"text|json", "json"},
	"experiment":             {"NAME", "artificial"},
	"variant":                {"NAME", "goldstone"},
	"max-trials":             {"N", "20000"},
	"db-wait":                {"DURATION", "30s"},
	"note":                   {"TEXT", `"half the learning rate"`},
	"tag":                    {"KEY=VALUE", "goal=paper"},
	"run":                    {"ID", "3"},
	"format":                 {"table|csv|json", "csv"},
	"keep-last":              {"N", "2"},
	"metric":                 {"NAME", "psi"},
	"out":                    {"DIR", "export"},
	"age":                    {"WORDS", "car,war"},
	"to":                     {"YEAR", "1800"},
	"from":                   {"YEAR", "2008"},
	"k":                      {"N", "10"},
	"trial":                  {"ID|VARIANT", "goldstone"},
	"progress-metric":        {"NAME", "valid_ll"},
	"kind":                   {"run|repro", "repro"},
	"readme":                 {"FILE", "README.md"},
	"addr":                   {"HOST:PORT", "127.0.0.1:8080"},
	"executor":               {executorNames(), "slurm"},
	"checkpoint-every":       {"N", "1000"},
	"checkpoint-minutes":     {"MINUTES", "30"},
	"slurm-cpus":             {"N", "8"},
	"slurm-mem":              {"SIZE", "16G"},
	"slurm-poll":             {"DURATION", "1m"},
	"slurm-mem-retry-scale":  {"FACTOR", "2"},
	"slurm-time-retry-scale": {"FACTOR", "2"},
	"slurm-max-array-size":   {"N", "1001"},
	"slurm-shared-cpus":      {"N", "4"},
	"slurm-shared-mem":       {"SIZE", "32G"},
	"slurm-shared-time":      {"HH:MM:SS", "04:00:00"},
}

// printCommandUsage prints a command's synopsis, summary, its flags (its
// own, then the global ones it reads) each with an example, in --flag
// style, and example command lines.
func printCommandUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: runner %s [flags]", c.name)
	if c.args != "" {
		fmt.Fprintf(w, " %s", c.args)
	}
	fmt.Fprintf(w, "\n\n%s\n", c.summary)
	own := flag.NewFlagSet(c.name, flag.ContinueOnError)
	if c.flags != nil {
		c.flags(own)
	}
	global := flag.NewFlagSet("global", flag.ContinueOnError)
	(&globalOptions{}).register(global)
	if n := countFlags(own); n > 0 {
		fmt.Fprintf(w, "\nflags:\n")
		printFlags(w, own, nil)
	}
	names, ok := commandGlobals[c.name]
	if !ok {
		names = nil
		global.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	}
	if len(names) > 0 {
		fmt.Fprintf(w, "\nglobal flags it reads (flags and the command go in any order):\n")
		printFlags(w, global, names)
	}
	ex := c.examples
	if ex == nil {
		ex = commandExamples[c.name]
	}
	if len(ex) > 0 {
		fmt.Fprintf(w, "\nexamples:\n")
		for _, e := range ex {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

func countFlags(fs *flag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n
}

// printFlags prints the flags of fs (only those named in order, when
// order is not nil): "--name VALUE", its usage, its default when it has
// one worth saying, and an example.
func printFlags(w io.Writer, fs *flag.FlagSet, order []string) {
	var fl []*flag.Flag
	if order == nil {
		fs.VisitAll(func(f *flag.Flag) { fl = append(fl, f) })
	} else {
		for _, n := range order {
			if f := fs.Lookup(n); f != nil {
				fl = append(fl, f)
			}
		}
	}
	for _, f := range fl {
		meta, example := flagValueName(f)
		head := "--" + f.Name
		if meta != "" {
			head += " " + meta
		}
		_, usage := flag.UnquoteUsage(f)
		line := usage
		if d := defaultText(f, usage); d != "" {
			line += " (default " + d + ")"
		}
		fmt.Fprintf(w, "  %s\n      %s\n", head, line)
		if meta != "" {
			fmt.Fprintf(w, "      e.g. --%s %s\n", f.Name, example)
		} else if f.DefValue == "true" {
			fmt.Fprintf(w, "      e.g. --%s=false\n", f.Name)
		} else {
			fmt.Fprintf(w, "      e.g. --%s\n", f.Name)
		}
	}
}

// flagValueName returns how help names a flag's value ("" for a boolean
// flag) and an example value.
func flagValueName(f *flag.Flag) (meta, example string) {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "", ""
	}
	if m, ok := flagMeta[f.Name]; ok {
		return m[0], m[1]
	}
	name, _ := flag.UnquoteUsage(f)
	switch name {
	case "int", "uint":
		name = "N"
	case "float":
		name = "X"
	case "duration":
		name = "DURATION"
	case "value", "string", "":
		name = "VALUE"
	}
	ex := f.DefValue
	if ex == "" {
		ex = strings.ToLower(name)
	}
	return strings.ToUpper(name), ex
}

// defaultText is the default of a flag worth printing: none for a
// boolean, an empty string, a NaN or negative sentinel, or when the usage
// says the default (or that the flag is required) in its own words.
func defaultText(f *flag.Flag, usage string) string {
	d := f.DefValue
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	if d == "" || d == "NaN" || strings.HasPrefix(d, "-") || d == "[]" ||
		strings.Contains(usage, "default") || strings.Contains(usage, "required") {
		return ""
	}
	if v, err := parseFloat(d); err == nil && math.IsNaN(v) {
		return ""
	}
	return d
}

func parseFloat(s string) (float64, error) {
	var v float64
	_, err := fmt.Sscan(s, &v)
	return v, err
}

// commandNames are the names of the commands and help.
func commandNames() []string {
	names := []string{"help"}
	for _, c := range commands {
		names = append(names, c.name)
	}
	return names
}

// didYouMean is " (did you mean X?)" for the candidate nearest to word
// (experiment.Suggest), "" when none is near.
func didYouMean(word string, candidates []string, prefix string) string {
	if s := experiment.Suggest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %s%s?)", prefix, s)
	}
	return ""
}

// flagNames are the flags a command accepts.
func flagNames(fs *flag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f.Name) })
	slices.Sort(out)
	return out
}

// undefinedFlag is the name in a flag package error about a flag that
// does not exist ("flag provided but not defined: -experimnt").
func undefinedFlag(err error) (string, bool) {
	const p = "flag provided but not defined: "
	msg := err.Error()
	if !strings.HasPrefix(msg, p) {
		return "", false
	}
	return strings.TrimLeft(strings.TrimPrefix(msg, p), "-"), true
}
