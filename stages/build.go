package stages

import (
	"context"
	"fmt"
	"strings"
	"time"

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

// funcStage adapts a function to pipeline.Stage.
type funcStage struct {
	name, version string
	params        map[string]any
	run           func(ctx context.Context, io *pipeline.IO) error
}

func (s *funcStage) Name() string    { return s.name }
func (s *funcStage) Version() string { return s.version }
func (s *funcStage) Params() any     { return s.params }
func (s *funcStage) Run(ctx context.Context, io *pipeline.IO) error {
	return s.run(ctx, io)
}

// progressFunc rate-limits a stage's step progress to a few events a second.
func progressFunc(io *pipeline.IO) func(step, total int) {
	var last time.Time
	return func(step, total int) {
		if step == total || time.Since(last) > 250*time.Millisecond {
			last = time.Now()
			io.Progress(int64(step), int64(total))
		}
	}
}

// Build returns the pipeline graph of an experiment's trials.
// A missing data set is downloaded first when env.Fetch and the experiment
// allow it; ctx bounds that download.
func Build(ctx context.Context, e *Experiment, trials []Trial, env Env) (*Built, error) {
	b := &Built{Graph: &pipeline.Graph{}, byNode: map[string]int{}}
	var err error
	switch e.Pipeline {
	case "artificial":
		err = buildArtificial(b, e, trials, env)
	case "movielens":
		err = buildMovieLens(ctx, b, e, trials, env)
	case "dwe":
		err = buildDWE(b, e, trials, env)
	default:
		err = fmt.Errorf("unknown pipeline %q", e.Pipeline)
	}
	if err != nil {
		return nil, err
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

func buildArtificial(b *Built, e *Experiment, trials []Trial, env Env) error {
	reportIn := map[string]pipeline.Ref{}
	for _, tr := range trials {
		s := tr.Settings
		id := "train/" + tr.Slug()
		b.Graph.Add(&pipeline.Node{
			ID: id,
			Stage: &funcStage{name: "train-artificial", version: "1", params: s.Params(artificialKeys...),
				run: func(ctx context.Context, io *pipeline.IO) error {
					return TrainArtificial(ctx, s, io.Workers(), io.Output("result"), progressFunc(io))
				}},
			Outputs: []string{"result"},
		})
		b.Trials = append(b.Trials, TrialNodes{Trial: tr, Result: id, Nodes: []string{id}})
		reportIn[tr.ID] = pipeline.Out(id, "result")
	}
	addReport(b, e, trials, "report-artificial", reportIn, ReportArtificial)
	return nil
}

// reportFunc draws an experiment's report from its trials' results (the
// node's inputs, named by trial id) into dir.
type reportFunc func(ctx context.Context, experiment string, trials []Trial, io *pipeline.IO, dir string) error

// addReport adds the report node, which reads every trial's result.
func addReport(b *Built, e *Experiment, trials []Trial, stage string, in map[string]pipeline.Ref, report reportFunc) {
	b.Report = "report"
	b.Graph.Add(&pipeline.Node{
		ID: "report",
		Stage: &funcStage{name: stage, version: "1", params: map[string]any{"experiment": e.Name, "trials": trialNames(trials)},
			run: func(ctx context.Context, io *pipeline.IO) error {
				return report(ctx, e.Name, trials, io, io.Output("figures"))
			}},
		Inputs:  in,
		Outputs: []string{"figures"},
	})
}

func trialNames(trials []Trial) map[string]string {
	m := make(map[string]string, len(trials))
	for _, t := range trials {
		m[t.ID] = t.Name
	}
	return m
}
