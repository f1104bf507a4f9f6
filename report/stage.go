package report

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"goldstone/experiment"
	"goldstone/internal/atomicfile"
	"goldstone/pipeline"
	"goldstone/report/figures"
)

// DrawFunc draws a pipeline's figures into dir from the results of the
// trials that finished (in trial order) and returns the Markdown that
// follows the summary table in the report's file. io is the report node's
// (a pipeline may give it inputs of its own, such as movielens's
// "activity").
type DrawFunc func(ctx context.Context, experiment string, results []TrialResult, io *pipeline.IO, dir string) (markdown string, err error)

// Def is what a pipeline says about its report.
type Def struct {
	Stage string // stage name, e.g. "report-artificial"
	// Version is the cache version of Draw, the pipeline's report code:
	// bump it when Draw's output changes for the same results (the golden
	// test of stages/pipelines names the report stage when it does).
	Version string
	File    string // the Markdown file the scaffolding writes; "" is summary.md
	Draw    DrawFunc
}

// Stage is a pipeline's report node: the scaffolding that every report
// shares (its directory, loading the results of the trials that finished,
// the Markdown file with the summary table, the failed trials with their
// errors) around the pipeline's Draw.
type Stage struct {
	Def
	Experiment string
	Trials     []experiment.Trial
}

func (s *Stage) Name() string { return s.Def.Stage }

// Version is the scaffolding's version and Draw's. Scaffolding version 2:
// the report runs when some trials failed, over the others, and lists the
// failed ones with their errors; 3: names and errors in the Markdown are
// HTML-escaped; 4: every figure has an SVG twin and a caption
// (figures.CaptionsFile) that ends with the trials it shows, lines of
// different grid settings differ in dash and marker, never (+Inf) reads
// "never" in the Markdown; 5: the diverged trials are listed with where
// they diverged after the pipeline's Markdown.
func (s *Stage) Version() string { return "5." + s.Def.Version }
func (s *Stage) Params() any {
	return map[string]any{"experiment": s.Experiment, "trials": trialNames(s.Trials)}
}

func (s *Stage) file() string {
	if s.File == "" {
		return "summary.md"
	}
	return s.File
}

// Run draws the report of the trials that finished into the "figures"
// output and writes its Markdown file (the summary table, then Draw's
// Markdown), then lists the failed ones (their result inputs are missing:
// the report node is Tolerant) with their errors at the end of the file.
func (s *Stage) Run(ctx context.Context, io *pipeline.IO) error {
	dir := io.Output("figures")
	var ok []experiment.Trial
	var failed [][2]string
	for _, t := range s.Trials {
		if msg, bad := io.InputFailure(t.ID); bad {
			failed = append(failed, [2]string{t.Name, msg})
			continue
		}
		ok = append(ok, t)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	path := filepath.Join(dir, s.file())
	if len(ok) > 0 {
		results, err := loadResults(ctx, ok, io)
		if err != nil {
			return err
		}
		md, err := s.Draw(ctx, s.Experiment, results, io, dir)
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := captionTrials(dir, ok, len(s.Trials)); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(path, []byte(MarkdownTable(s.Experiment, results)+md+DivergedTable(results))); err != nil {
			return err
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return appendFailures(path, s.Experiment, failed)
}

// captionTrials ends every caption the report's Draw wrote with the
// trials its figures show (TrialsCaption).
func captionTrials(dir string, ok []experiment.Trial, total int) error {
	caps, err := figures.ReadCaptions(dir)
	if err != nil || len(caps) == 0 {
		return err
	}
	tail := TrialsCaption(ok, total)
	for k, v := range caps {
		caps[k] = strings.TrimSpace(v + " " + tail)
	}
	return figures.AddCaptions(dir, caps)
}

// TrialsCaption says which trials a figure shows: how many of the run's,
// the variants, the seeds and the values of every other grid setting.
func TrialsCaption(trials []experiment.Trial, total int) string {
	var variants, seeds []string
	var keys []string
	vals := map[string][]string{}
	for _, t := range trials {
		if v := VariantName(t); v != "" && !slices.Contains(variants, v) {
			variants = append(variants, v)
		}
		for _, f := range strings.Fields(strings.TrimPrefix(t.Name, t.Variant)) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			if k == "seed" {
				if !slices.Contains(seeds, v) {
					seeds = append(seeds, v)
				}
				continue
			}
			if _, seen := vals[k]; !seen {
				keys = append(keys, k)
			}
			if !slices.Contains(vals[k], v) {
				vals[k] = append(vals[k], v)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Trials: %d", len(trials))
	if total > len(trials) {
		fmt.Fprintf(&b, " of %d (the others failed)", total)
	}
	var parts []string
	if len(variants) > 0 {
		parts = append(parts, "variants "+strings.Join(variants, ", "))
	}
	if len(seeds) > 0 {
		parts = append(parts, "seeds "+strings.Join(seeds, ", "))
	}
	for _, k := range keys {
		parts = append(parts, k+" = "+strings.Join(vals[k], ", "))
	}
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, "; ") + ")")
	}
	return b.String() + "."
}

// DivergedTable lists the trials whose training diverged, with where and
// how ("diverged at step 912: psi 3.8e+200 past its bound 1.8e+08"): a
// result of the algorithm, shown in the tables above with the metrics it
// never reached as never (steps) or NaN (final and held-out values). ""
// when none did.
func DivergedTable(results []TrialResult) string {
	var b strings.Builder
	n := 0
	for _, r := range results {
		if d, ok := r.Summary.Divergence(); ok {
			n++
			fmt.Fprintf(&b, "| %s | %s |\n", MarkdownText(r.Trial.Name), MarkdownText(d.String()))
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("\n## Diverged trials (%d)\n\n| trial | divergence |\n|---|---|\n", n) + b.String()
}

// appendFailures adds a "Failed trials" table (name, error) to the report's
// Markdown file at path (a new one when no trial finished).
func appendFailures(path, experiment string, failed [][2]string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var b strings.Builder
	b.Write(old)
	if len(old) == 0 {
		fmt.Fprintf(&b, "# %s\n\nNo trial finished.\n", MarkdownText(experiment))
	}
	fmt.Fprintf(&b, "\n## Failed trials (%d)\n\n| trial | error |\n|---|---|\n", len(failed))
	for _, f := range failed {
		msg := strings.Join(strings.Fields(f[1]), " ")
		fmt.Fprintf(&b, "| %s | %s |\n", MarkdownText(f[0]), MarkdownText(msg))
	}
	return atomicfile.WriteFile(path, []byte(b.String()))
}

// Add adds the report node of d to b: it reads every trial's result (in,
// by trial id) and is Tolerant: it runs when some trials failed, over the
// others.
func Add(b *experiment.Built, e *experiment.Experiment, trials []experiment.Trial, in map[string]pipeline.Ref, d Def) {
	b.AddReport(&pipeline.Node{
		ID:       "report",
		Tolerant: true,
		Stage:    &Stage{Def: d, Experiment: e.Name, Trials: trials},
		Inputs:   in,
		Outputs:  []string{"figures"},
	})
}

func trialNames(trials []experiment.Trial) map[string]string {
	m := make(map[string]string, len(trials))
	for _, t := range trials {
		m[t.ID] = t.Name
	}
	return m
}
