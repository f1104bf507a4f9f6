package sweep

import (
	"context"
	"errors"

	"goldstone/experiment"
	"goldstone/pipeline"
	"goldstone/runs"
)

// recordedFailure stands in for the result node of a trial that failed in
// an earlier attempt of the same run and is kept failed on resume: it fails
// at once with the recorded error, so the trial is not trained again and
// the report (a Tolerant node) still lists it with its error.
type recordedFailure struct {
	Trial string `json:"trial"`
	Error string `json:"error"`
}

func (*recordedFailure) Name() string                              { return "recorded-failure" }
func (*recordedFailure) Version() string                           { return "1" }
func (f *recordedFailure) Params() any                             { return f }
func (f *recordedFailure) Run(context.Context, *pipeline.IO) error { return errors.New(f.Error) }

// keepFailures replaces the nodes of every trial that keep says failed by a
// recordedFailure under the trial's result node ID (the report's inputs
// refer to it).
func keepFailures(ctx context.Context, b *experiment.Built, st *runs.Store, runID int64, keep map[string]string) error {
	failed := map[string]string{}
	for id, s := range keep {
		if s == runs.StatusFailed {
			failed[id] = ""
		}
	}
	if len(failed) == 0 {
		return nil
	}
	ts, err := st.Trials(ctx, runID)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if _, ok := failed[t.ID]; ok {
			failed[t.ID] = t.Error
		}
	}
	drop := map[string]bool{}
	stubs := map[string]*pipeline.Node{}
	for _, tn := range b.Trials {
		msg, ok := failed[tn.Trial.ID]
		if !ok {
			continue
		}
		for _, n := range tn.Nodes {
			drop[n] = true
		}
		drop[tn.Result] = true
		stubs[tn.Result] = &pipeline.Node{ID: tn.Result, Stage: &recordedFailure{Trial: tn.Trial.ID, Error: msg}}
	}
	nodes := b.Graph.Nodes[:0]
	for _, n := range b.Graph.Nodes {
		if stub := stubs[n.ID]; stub != nil {
			stub.Outputs = n.Outputs
			nodes = append(nodes, stub)
			continue
		}
		if !drop[n.ID] {
			nodes = append(nodes, n)
		}
	}
	b.Graph.Nodes = nodes
	return nil
}
