package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"goldstone/experiment"
	"goldstone/pipeline"
	"goldstone/runs"
)

// ReportCurrent reports whether the report of run ri is complete in
// reportDir ("" asks for none: always current): its state is
// runs.ReportDone and every file recorded under its directory there
// exists. It says why not otherwise.
func ReportCurrent(ctx context.Context, st *runs.Store, ri *runs.RunInfo, reportDir string) (bool, string, error) {
	if reportDir == "" {
		return true, "", nil
	}
	switch ri.ReportState {
	case runs.ReportDone:
	case "":
		return false, "no report recorded", nil
	case runs.ReportFailed:
		return false, "its report failed: " + ri.ReportError, nil
	default:
		return false, "its report was not finished (" + ri.ReportState + ")", nil
	}
	dir, err := experiment.RunDir(reportDir, ri.Experiment, ri.ID)
	if err != nil {
		return false, "", err
	}
	arts, err := st.Artifacts(ctx, ri.ID)
	if err != nil {
		return false, "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, "", err
	}
	n := 0
	for _, a := range arts {
		if !strings.HasPrefix(a.Path, abs+string(filepath.Separator)) {
			continue // in the cache, or in another reports directory
		}
		n++
		if _, err := os.Stat(a.Path); err != nil {
			return false, "report file " + a.Path + " is missing", nil
		}
	}
	if n == 0 {
		return false, "no report in " + dir, nil
	}
	return true, "", nil
}

// RebuildReport writes the report of an ended run again, from the trial
// results the run recorded (runs.Output rows: the cache entries of its
// trials' stages) rather than from whatever the current code would compute,
// so that it needs no training and works after an upgrade that changed a
// stage's version: the report node of built (the run's experiment, built
// with this code) runs with the recorded result directories as its inputs
// (its cache entry is reused when its key did not change), the trials the
// run recorded as failed are listed as such, and the files are copied to
// opts.ReportDir/<experiment>/run-<id>/ and recorded as the run's
// artifacts, as Execute does; the outputs of the nodes it reads from the
// cache are recorded as the run's. It writes the first report of a run
// whose trials ran elsewhere (the Slurm executor's, when they are
// collected) the same way. lock is the caller's lock on opts.WorkDir
// (nil: RebuildReport takes it). A trial without a recorded result whose
// stage is not cached either is an error naming it.
func RebuildReport(ctx context.Context, st *runs.Store, ri *runs.RunInfo, built *experiment.Built, opts RunOptions, lock *pipeline.Lock) (*Outcome, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if built.Report == "" {
		return nil, fmt.Errorf("report of run %d: experiment %s has no report stage", ri.ID, ri.Experiment)
	}
	fail := func(err error) (*Outcome, error) { return nil, fmt.Errorf("report of run %d: %w", ri.ID, err) }
	g, rep, err := reportGraph(ctx, st, ri, built)
	if err != nil {
		return fail(err)
	}
	if err := checkCached(ctx, g, rep, pipeline.Options{WorkDir: opts.WorkDir, Jobs: max(1, opts.Jobs), Lock: lock}); err != nil {
		return fail(err)
	}
	out := &Outcome{RunID: ri.ID, Status: ri.Status, Failures: map[string]string{}}
	rec := &recorder{reportDir: opts.ReportDir, experiment: ri.Experiment, st: st, run: ri.ID, built: built, log: log, out: out}
	wctx := context.WithoutCancel(ctx)
	res, err := pipeline.Run(ctx, g, pipeline.Options{WorkDir: opts.WorkDir, Jobs: max(1, opts.Jobs), Lock: lock,
		Observer: pipeline.ObserverFunc(func(ev pipeline.Event) {
			if opts.Observer != nil {
				opts.Observer.Event(ev)
			}
			switch ev.Kind {
			case pipeline.Started:
				out.Ran++
			case pipeline.Cached:
				out.Cached++
			}
			// The outputs of what the report read from the cache (a run
			// whose trials ran elsewhere has none recorded yet) and its
			// own, as a run records them.
			if (ev.Kind == pipeline.Cached || ev.Kind == pipeline.Done) && !isFailed(g, ev.Node) {
				rec.recordOutputs(wctx, ev)
			}
		})})
	if res == nil {
		return fail(err)
	}
	r := res.Nodes[rep.ID]
	if r.Err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return fail(r.Err)
	}
	rec.recordArtifacts(ctx, r.Outputs)
	if out.ReportErr != nil {
		return out, out.ReportErr
	}
	return out, nil
}

// reportGraph returns the graph that writes run ri's report: its report
// node (rep) reading each trial's result from the cache entry the run
// recorded when it is still sound, else from its node under this code's
// keys (with the nodes it needs); a trial the run recorded as failed stands
// as a node that fails with its error, which the report lists.
func reportGraph(ctx context.Context, st *runs.Store, ri *runs.RunInfo, built *experiment.Built) (*pipeline.Graph, *reportNode, error) {
	outs, err := st.Outputs(ctx, ri.ID)
	if err != nil {
		return nil, nil, err
	}
	cacheDir := map[string]string{} // node id -> its recorded cache entry
	for _, o := range outs {
		cacheDir[o.Stage] = o.CacheDir
	}
	rows, err := st.TrialTable(ctx, ri.ID)
	if err != nil {
		return nil, nil, err
	}
	recorded := recordedTrials(rows, built)
	nodes := map[string]*pipeline.Node{}
	for _, n := range built.Graph.Nodes {
		nodes[n.ID] = n
	}
	rep := &reportNode{Node: *nodes[built.Report], why: map[string]string{}}
	rep.Inputs = map[string]pipeline.Ref{}
	g := &pipeline.Graph{}
	for name, ref := range nodes[built.Report].Inputs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if ref.External() {
			rep.Inputs[name] = ref
			continue
		}
		if ti := built.TrialOf(ref.Node); ti >= 0 {
			tr := built.Trials[ti].Trial
			rec, ok := recorded[tr.ID]
			switch {
			case ok && rec.Status == runs.StatusFailed:
				// It stands for the trial's failure, which the report lists.
				msg := strings.TrimPrefix(rec.Error, ref.Node+": ")
				u := nodes[ref.Node]
				g.Add(&pipeline.Node{ID: u.ID, Stage: failedStage{u.Stage, msg}, Outputs: u.Outputs})
				rep.Inputs[name] = ref
				continue
			case !ok || !runs.HasResult(rec.Status):
				status := rec.Status
				if !ok {
					status = "not recorded"
				}
				return nil, nil, fmt.Errorf("trial %s (%s) has no result in run %d (status %s): run the experiment to finish it", tr.ID, trialLabel(tr), ri.ID, status)
			}
		}
		if d, ok := cacheDir[ref.Node]; ok {
			// The recorded entry, if it is still there and sound (a run
			// checks an entry's digests before it reuses it; so does this).
			sound, problem, err := pipeline.CheckEntry(ctx, d)
			if err != nil {
				return nil, nil, err
			}
			if sound {
				rep.Inputs[name] = pipeline.File(filepath.Join(d, ref.Output))
				continue
			}
			rep.why[ref.Node] = fmt.Sprintf("its recorded output %s: %s", d, problem)
		} else {
			rep.why[ref.Node] = "no output of it is recorded"
		}
		rep.Inputs[name] = ref
		rep.fromCache = append(rep.fromCache, ref.Node)
	}
	have := map[string]bool{}
	for _, n := range g.Nodes {
		have[n.ID] = true
	}
	for _, n := range subgraph(built.Graph, rep.fromCache...) {
		if !have[n.ID] {
			g.Add(n)
		}
	}
	g.Add(&rep.Node)
	return g, rep, nil
}

// recordedTrials pairs the trials of built with the rows run recorded, by
// trial id: the one key every trial has (a run of one trial, or a grid
// narrowed to one point, names its trial ""; TrialTable names it by its
// id). A trial whose id the run did not record (a newer version added a
// setting, which changes ids) is paired by its name, variant and grid
// values, when it has one and it is unique, or, when both hold one trial,
// with the run's only trial.
func recordedTrials(rows []runs.TrialRow, built *experiment.Built) map[string]runs.TrialRow {
	out := make(map[string]runs.TrialRow, len(rows))
	byName := map[string][]runs.TrialRow{}
	for _, t := range rows {
		out[t.ID] = t
		byName[t.Name] = append(byName[t.Name], t)
	}
	for _, tn := range built.Trials {
		tr := tn.Trial
		if _, ok := out[tr.ID]; ok {
			continue
		}
		switch {
		case tr.Name != "" && len(byName[tr.Name]) == 1:
			out[tr.ID] = byName[tr.Name][0]
		case len(built.Trials) == 1 && len(rows) == 1:
			out[tr.ID] = rows[0]
		}
	}
	return out
}

// trialLabel is how an error names a trial: its name, or "the only trial".
func trialLabel(tr experiment.Trial) string {
	if tr.Name == "" {
		return "the only trial"
	}
	return tr.Name
}

// reportNode is the report node of a rebuilt report and what it reads
// from the cache under this code's keys (fromCache), with why not from
// what the run recorded.
type reportNode struct {
	pipeline.Node
	fromCache []string
	why       map[string]string
}

// checkCached fails, naming the node, when a node the report reads from
// the cache is not cached: rebuilding a report never trains.
func checkCached(ctx context.Context, g *pipeline.Graph, rep *reportNode, popts pipeline.Options) error {
	if len(rep.fromCache) == 0 {
		return nil
	}
	items, err := pipeline.Plan(ctx, g, popts)
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.Node != rep.ID && !it.Cached && !isFailed(g, it.Node) {
			w := rep.why[it.Node]
			if w == "" {
				w = "an input of the report needs it"
			}
			return fmt.Errorf("%s: %s, and it is not cached under this code's keys (%s): run the experiment again", it.Node, w, it.Reason)
		}
	}
	return nil
}

func isFailed(g *pipeline.Graph, id string) bool {
	for _, n := range g.Nodes {
		if n.ID == id {
			_, ok := n.Stage.(failedStage)
			return ok
		}
	}
	return false
}

// failedStage stands for a trial's stage that failed in the run whose
// report is rebuilt: it fails with the recorded error, which the report
// (Tolerant) lists.
type failedStage struct {
	stage pipeline.Stage
	msg   string
}

func (f failedStage) Name() string    { return f.stage.Name() }
func (f failedStage) Version() string { return f.stage.Version() }
func (f failedStage) Params() any     { return f.stage.Params() }
func (f failedStage) Run(context.Context, *pipeline.IO) error {
	return errors.New(f.msg)
}

// subgraph returns the nodes of g that targets need (themselves and their
// upstream nodes), in g's order.
func subgraph(g *pipeline.Graph, targets ...string) []*pipeline.Node {
	byID := make(map[string]*pipeline.Node, len(g.Nodes))
	for _, n := range g.Nodes {
		byID[n.ID] = n
	}
	keep := map[string]bool{}
	var visit func(id string)
	visit = func(id string) {
		n, ok := byID[id]
		if keep[id] || !ok {
			return
		}
		keep[id] = true
		for _, r := range n.Inputs {
			if !r.External() {
				visit(r.Node)
			}
		}
	}
	for _, t := range targets {
		visit(t)
	}
	var out []*pipeline.Node
	for _, n := range g.Nodes {
		if keep[n.ID] {
			out = append(out, n)
		}
	}
	return out
}
