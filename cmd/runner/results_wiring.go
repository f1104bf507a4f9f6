package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"

	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/stages"
	"goldstone/stages/htmlreport"
)

// resultFlags are the run flags that describe a run for later: its note and
// tags.
var resultFlags struct {
	note string
	tags multiFlag
}

func registerResultFlags(fs *flag.FlagSet) {
	fs.StringVar(&resultFlags.note, "note", "", "a note stored with the run (shown by 'runner runs')")
	fs.Var(&resultFlags.tags, "tag", "a tag stored with the run: key=value (repeatable; 'runner runs --tag' filters)")
}

// withResultOptions fills the run options of note, tags and per-trial log
// files (<workdir>/logs/<experiment>/run-<id>/<trial>.log).
func withResultOptions(g *globalOptions, opts stages.RunOptions) (stages.RunOptions, error) {
	tags, err := parseTags("tag", resultFlags.tags)
	if err != nil {
		return opts, err
	}
	opts.Note, opts.Tags = resultFlags.note, tags
	opts.LogDir = filepath.Join(g.workdir, "logs")
	return opts, nil
}

// writeHTMLReport writes the run's HTML page into its report directory and
// refreshes <reports>/index.html; it returns the page's path.
func writeHTMLReport(ctx context.Context, g *globalOptions, st *runs.Store, e *stages.Experiment, out *stages.Outcome) (string, error) {
	if out == nil || out.ReportPath == "" {
		return "", nil
	}
	defaults := map[string]string{}
	for k, v := range stages.Defaults(e.Pipeline) {
		b, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("html report: default of %s: %w", k, err)
		}
		defaults["settings."+k] = string(b)
	}
	env, err := st.Env(ctx, out.RunID)
	if err != nil {
		return "", err
	}
	p, err := htmlreport.Build(ctx, st, out.RunID, out.ReportPath, htmlreport.Options{Defaults: defaults, Env: envList(env)})
	if err != nil {
		return "", err
	}
	page, err := htmlreport.Write(out.ReportPath, p)
	if err != nil {
		return "", err
	}
	// The page is one of the run's report files (gc removes it with them).
	abs, err := filepath.Abs(page)
	if err != nil {
		return "", err
	}
	sum, err := pipeline.Digest(ctx, abs)
	if err != nil {
		return "", err
	}
	st.Artifact(out.RunID, "", abs, sum, "html")
	if err := st.Flush(ctx); err != nil {
		return "", err
	}
	if _, err := htmlreport.WriteIndex(ctx, st, g.reports); err != nil {
		return "", err
	}
	return page, nil
}

// envList orders a run's environment for the page: command, module, input
// digests, build settings, then dependencies.
func envList(env map[string]string) []htmlreport.KV {
	var out []htmlreport.KV
	rank := func(k string) int {
		switch {
		case k == runs.EnvCommand:
			return 0
		case k == runs.EnvModule:
			return 1
		case len(k) > 6 && k[:6] == "input ":
			return 2
		case len(k) > 6 && k[:6] == runs.EnvBuild:
			return 3
		}
		return 4
	}
	for r := range 5 {
		for _, k := range sortedKeysOf(env) {
			if rank(k) == r {
				out = append(out, htmlreport.KV{Key: k, Value: env[k]})
			}
		}
	}
	return out
}

func sortedKeysOf(m map[string]string) []string {
	set := make(map[string]bool, len(m))
	for k := range m {
		set[k] = true
	}
	return sortedKeys(set)
}

// logOutcome logs how a run ended as one event (with --log-format json, a
// JSON object a script can read instead of the text summary on stdout).
func logOutcome(g *globalOptions, e *stages.Experiment, out *stages.Outcome, page string, err error) {
	if out == nil {
		return
	}
	attrs := []any{"run", out.RunID, "experiment", e.Name, "trials", out.Trials, "done", out.Done,
		"failed", out.Failed, "interrupted", out.Interrupted, "up_to_date", out.UpToDate, "resumed", out.Resumed,
		"stages_ran", out.Ran, "stages_cached", out.Cached, "report", out.ReportPath, "html_report", page}
	if err != nil {
		attrs = append(attrs, "err", err.Error())
	}
	if out.DataErr != nil {
		attrs = append(attrs, "data_err", out.DataErr.Error())
	}
	g.log.Info("run ended", attrs...)
}
