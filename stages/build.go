package stages

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"goldstone/internal/atomicfile"
	"goldstone/pipeline"
)

// Env is what building a pipeline needs beyond the experiment.
type Env struct {
	DataDir string // data sets (MovieLens releases, corpora)
	Workers int    // cores a trial may use
	// Fetch allows downloading a missing data set whose experiment sets
	// fetch = true (a run does; plan and words only look).
	Fetch bool
}

// TrialNodes ties a trial to the node whose "result" output holds its
// summary.json and series.arrow.
type TrialNodes struct {
	Trial  Trial
	Result string   // node ID
	Nodes  []string // every node of this trial (train, evaluate)
}

// Built is an experiment's pipeline graph.
type Built struct {
	Graph  *pipeline.Graph
	Trials []TrialNodes
	Report string // node ID of the report stage ("" if none)
	byNode map[string]int
}

// TrialOf returns the index of the trial a node belongs to, or -1.
func (b *Built) TrialOf(node string) int {
	if i, ok := b.byNode[node]; ok {
		return i
	}
	return -1
}

// Add adds a node to the graph.
func (b *Built) Add(n *pipeline.Node) { b.Graph.Add(n) }

// AddTrial records the nodes of one trial; result is the node whose
// "result" output holds the trial's summary.json and series.arrow.
func (b *Built) AddTrial(tr Trial, result string, nodes ...string) {
	b.Trials = append(b.Trials, TrialNodes{Trial: tr, Result: result, Nodes: nodes})
}

// ProgressFunc rate-limits a stage's step progress, with the latest loss,
// to a few events a second.
func ProgressFunc(io *pipeline.IO) func(step, total int, loss float64) {
	var last time.Time
	return func(step, total int, loss float64) {
		if step == total || time.Since(last) > 250*time.Millisecond {
			last = time.Now()
			io.ProgressValues(int64(step), int64(total), map[string]float64{"loss": loss})
		}
	}
}

// DataError is a data or configuration problem found while building or
// preparing an experiment's data (a data set that is missing or malformed,
// data settings that vary across a sweep): the user's to fix, not a
// failure of the machine. The command line exits 2 on it.
type DataError struct{ Err error }

func (e *DataError) Error() string { return e.Err.Error() }
func (e *DataError) Unwrap() error { return e.Err }

// Build returns the pipeline graph of an experiment's trials.
// A missing data set is downloaded first when env.Fetch and the experiment
// allow it; ctx bounds that download.
func Build(ctx context.Context, e *Experiment, trials []Trial, env Env) (*Built, error) {
	p, ok := LookupPipeline(e.Pipeline)
	if !ok {
		return nil, fmt.Errorf("unknown pipeline %q", e.Pipeline)
	}
	b := &Built{Graph: &pipeline.Graph{}, byNode: map[string]int{}}
	if err := p.Build(ctx, b, e, trials, env); err != nil {
		return nil, &DataError{Err: err}
	}
	b.prefix(e.Name + "/")
	for i, tn := range b.Trials {
		for _, n := range tn.Nodes {
			b.byNode[n] = i
		}
	}
	return b, nil
}

// prefix puts every node ID under the experiment's name, so experiments
// sharing a work directory never see each other's node state (the cache
// itself is keyed by content and shared).
func (b *Built) prefix(p string) {
	for _, n := range b.Graph.Nodes {
		n.ID = p + n.ID
		in := make(map[string]pipeline.Ref, len(n.Inputs)) // input maps may be shared between nodes
		for k, r := range n.Inputs {
			if !r.External() {
				r.Node = p + r.Node
			}
			in[k] = r
		}
		n.Inputs = in
	}
	for i := range b.Trials {
		b.Trials[i].Result = p + b.Trials[i].Result
		for j := range b.Trials[i].Nodes {
			b.Trials[i].Nodes[j] = p + b.Trials[i].Nodes[j]
		}
	}
	if b.Report != "" {
		b.Report = p + b.Report
	}
}

// Slug names a trial's nodes: its variant and grid values without spaces
// ("goldstone,seed=1"), stable when other settings change, so that plan can
// say which setting changed; "main" for an experiment of one trial.
func (t Trial) Slug() string {
	if t.Name == "" {
		return "main"
	}
	return strings.ReplaceAll(t.Name, " ", ",")
}

// ReportFunc draws an experiment's report from its trials' results (the
// node's inputs, named by trial id) into dir.
type ReportFunc func(ctx context.Context, experiment string, trials []Trial, io *pipeline.IO, dir string) error

// ReportStage is a pipeline's report: it reads every trial's result and
// draws figures and Markdown into its "figures" output.
type ReportStage struct {
	Stage      string // stage name, e.g. "report-artificial"
	Pipeline   string // version of the pipeline whose Draw this is
	Experiment string
	Trials     []Trial
	Draw       ReportFunc
}

func (s *ReportStage) Name() string { return s.Stage }

// Version is the report scaffolding's version and the pipeline's (its Draw
// is the pipeline's code). Scaffolding version 2: the report runs when some
// trials failed, over the others, and lists the failed ones with their
// errors; 3: names and errors in the Markdown are HTML-escaped.
func (s *ReportStage) Version() string { return "3." + s.Pipeline }
func (s *ReportStage) Params() any {
	return map[string]any{"experiment": s.Experiment, "trials": trialNames(s.Trials)}
}

// Run draws the report of the trials that finished, then lists the failed
// ones (their result inputs are missing: the report node is Tolerant) with
// their errors at the end of the Markdown summary.
func (s *ReportStage) Run(ctx context.Context, io *pipeline.IO) error {
	dir := io.Output("figures")
	var ok []Trial
	var failed [][2]string
	for _, t := range s.Trials {
		if msg, bad := io.InputFailure(t.ID); bad {
			failed = append(failed, [2]string{t.Name, msg})
			continue
		}
		ok = append(ok, t)
	}
	if len(ok) > 0 {
		if err := s.Draw(ctx, s.Experiment, ok, io, dir); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	if len(failed) == 0 {
		return nil
	}
	return appendFailures(dir, s.Experiment, failed)
}

// appendFailures adds a "Failed trials" table (name, error) to the report's
// Markdown file: summary.md, else report.md, else a new summary.md.
func appendFailures(dir, experiment string, failed [][2]string) error {
	path := filepath.Join(dir, "summary.md")
	if _, err := os.Stat(path); err != nil {
		if _, err := os.Stat(filepath.Join(dir, "report.md")); err == nil {
			path = filepath.Join(dir, "report.md")
		}
	}
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

// AddReport adds the report node, which reads every trial's result (in, by
// trial id). It is Tolerant: it runs when some trials failed, over the
// others.
func (b *Built) AddReport(e *Experiment, trials []Trial, stage string, in map[string]pipeline.Ref, draw ReportFunc) {
	b.Report = "report"
	b.Graph.Add(&pipeline.Node{
		ID:       "report",
		Tolerant: true,
		Stage:    &ReportStage{Stage: stage, Pipeline: pipelineVersion(e.Pipeline), Experiment: e.Name, Trials: trials, Draw: draw},
		Inputs:   in,
		Outputs:  []string{"figures"},
	})
}

func trialNames(trials []Trial) map[string]string {
	m := make(map[string]string, len(trials))
	for _, t := range trials {
		m[t.ID] = t.Name
	}
	return m
}

func pipelineVersion(name string) string {
	if p, ok := LookupPipeline(name); ok {
		return p.Version()
	}
	return ""
}
