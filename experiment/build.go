package experiment

import (
	"context"
	"fmt"
	"strings"

	"goldstone/optim"
	"goldstone/pipeline"
)

// Env is what building a pipeline needs beyond the experiment.
type Env struct {
	DataDir string // data sets (MovieLens releases, corpora)
	// Fetch allows downloading a missing data set whose experiment sets
	// fetch = true (a run does; plan and words only look).
	Fetch bool
	// Budget is the sweep's core budget (nil outside a sweep): a pipeline
	// hands it to the stages that run parallel loops, which take their
	// pools from it (train.NewPool). It is no cache parameter.
	Budget *optim.Budget
	// Scan allows a pipeline to read its data files whole to check them
	// before anything runs (movielens: can the ratings be binarized?), at a
	// cost of seconds per GB; plan and run set it, the commands that only
	// rebuild a graph (report, words, a Slurm worker) do not.
	Scan bool
}

// TrialNodes ties a trial to the node whose "result" output holds its
// summary.json and series.arrow.
type TrialNodes struct {
	Trial  Trial
	Result string   // node ID
	Nodes  []string // every node of this trial (train, evaluate)
	// Disk estimates what the trial keeps on disk (nil: the pipeline gives
	// no estimate); runner plan prints it.
	Disk DiskEstimate
}

// DiskEstimate estimates the bytes a trial keeps in the cache by its keep
// policy (the trained parameters; its series and summary are not
// counted). cached gives the path of an output of a node (its id as the
// pipeline's Build named it, without the experiment's prefix) when that
// node is cached, for sizes that depend on prepared data. It returns the
// bytes (-1: unknown until that data is prepared), the trial's keep policy
// and how the bytes are counted.
type DiskEstimate func(cached func(node, output string) (string, bool)) (bytes int64, keep, how string)

// SetDisk sets the disk estimate of the trial added last (AddTrial).
func (b *Built) SetDisk(d DiskEstimate) { b.Trials[len(b.Trials)-1].Disk = d }

// Built is an experiment's pipeline graph.
type Built struct {
	Graph  *pipeline.Graph
	Trials []TrialNodes
	Report string // node ID of the report stage ("" if none)
	// Warnings are what the pipeline found worth saying about its data
	// that is no error (a binarization that drops many ratings); the
	// command line prints them as warnings, also with --quiet.
	Warnings []string
	byNode   map[string]int
}

// Warn adds a warning (Built.Warnings).
func (b *Built) Warn(format string, args ...any) {
	b.Warnings = append(b.Warnings, fmt.Sprintf(format, args...))
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

// AddReport adds the experiment's report node (see report): the
// node that reads every trial's result, run when some trials failed
// (Tolerant) and rebuilt from a run's recorded results.
func (b *Built) AddReport(n *pipeline.Node) {
	b.Report = n.ID
	b.Graph.Add(n)
}

// AddTrial records the nodes of one trial; result is the node whose
// "result" output holds the trial's summary.json and series.arrow.
func (b *Built) AddTrial(tr Trial, result string, nodes ...string) {
	b.Trials = append(b.Trials, TrialNodes{Trial: tr, Result: result, Nodes: nodes})
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
