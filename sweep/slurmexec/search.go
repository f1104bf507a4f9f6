package slurmexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"goldstone/experiment"
	"goldstone/internal/atomicfile"
	"goldstone/internal/fault"
	"goldstone/internal/slurm"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/search"
	"goldstone/sweep"
	"goldstone/sweep/batch"
	"goldstone/workdir"
)

// A search on a batch back end (sweep.Search with this executor): the
// search's loop runs on the submitting host; each wave's trials are the
// run's trials so far (the earlier waves' first, with the same indices),
// and the wave is frozen in the manifest (Manifest.Search), which each
// wave rewrites, so that a task rebuilds its trial from the frozen
// experiments file and the wave (loadFrozen). The executor submits the
// trials without a result as a submission of the run (attempt 1, 2, ...:
// one or more per wave, as a grid's resubmissions), WaitWave collects
// them, and the run ends, with its report, only after the last wave.

// frozenWave is a sweep.Wave as the manifest keeps it.
type frozenWave struct {
	Points []map[string]frozenValue `json:"points"`
	Jobs   []experiment.RungJob     `json:"jobs,omitempty"`
	Last   bool                     `json:"last"`
	// First is the index of the wave's first trial: the earlier waves'
	// trials are those before it.
	First int `json:"first"`
}

// frozenValue is one searched setting's value of a point, typed: the
// sampler's int64, float64 (encoding/json writes the shortest text that
// reads back to the same bits), string or bool.
type frozenValue struct {
	Int    *int64   `json:"int,omitempty"`
	Float  *float64 `json:"float,omitempty"`
	String *string  `json:"string,omitempty"`
	Bool   *bool    `json:"bool,omitempty"`
}

func freezeValue(v any) (frozenValue, error) {
	switch x := v.(type) {
	case int64:
		return frozenValue{Int: &x}, nil
	case int:
		n := int64(x)
		return frozenValue{Int: &n}, nil
	case float64:
		return frozenValue{Float: &x}, nil
	case string:
		return frozenValue{String: &x}, nil
	case bool:
		return frozenValue{Bool: &x}, nil
	}
	return frozenValue{}, fmt.Errorf("a search point's value %v (%T) cannot be frozen", v, v)
}

func (f frozenValue) value() (any, error) {
	switch {
	case f.Int != nil:
		return *f.Int, nil
	case f.Float != nil:
		return *f.Float, nil
	case f.String != nil:
		return *f.String, nil
	case f.Bool != nil:
		return *f.Bool, nil
	}
	return nil, errors.New("a frozen search point has a value without a type")
}

// freezeWave is the manifest's text of w, whose trials begin at index
// first (nil for a grid's nil).
func freezeWave(w *sweep.Wave, first int) (json.RawMessage, error) {
	if w == nil {
		return nil, nil
	}
	f := frozenWave{Jobs: w.Jobs, Last: w.Last, First: first}
	for _, pt := range w.Points {
		m := map[string]frozenValue{}
		for k, v := range pt {
			fv, err := freezeValue(v)
			if err != nil {
				return nil, fmt.Errorf("setting %s: %w", k, err)
			}
			m[k] = fv
		}
		f.Points = append(f.Points, m)
	}
	return json.Marshal(f)
}

// thawFrozen reads the manifest's frozen wave; nil for a grid's.
func thawFrozen(m *batch.Manifest) (*frozenWave, error) {
	if len(m.Search) == 0 {
		return nil, nil
	}
	var f frozenWave
	dec := json.NewDecoder(bytes.NewReader(m.Search))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("manifest of run %d: search: %w", m.RunID, err)
	}
	return &f, nil
}

// thawWave reads the wave a manifest froze; nil for a grid's manifest.
func thawWave(m *batch.Manifest) (*sweep.Wave, error) {
	f, err := thawFrozen(m)
	if err != nil || f == nil {
		return nil, err
	}
	w := &sweep.Wave{Jobs: f.Jobs, Last: f.Last}
	for i, pm := range f.Points {
		pt := search.Point{}
		for k, fv := range pm {
			v, err := fv.value()
			if err != nil {
				return nil, fmt.Errorf("manifest of run %d: search point %d, %s: %w", m.RunID, i, k, err)
			}
			pt[k] = v
		}
		w.Points = append(w.Points, pt)
	}
	return w, nil
}

// waveExperiment is e with the manifest's wave (e itself for a grid).
func waveExperiment(e *experiment.Experiment, m *batch.Manifest) (*experiment.Experiment, error) {
	w, err := thawWave(m)
	if err != nil || w == nil {
		return e, err
	}
	return w.Experiment(e)
}

// lastWave reports whether the manifest's trials are a run's last: a
// grid's, or a search's last wave.
func lastWave(m *batch.Manifest) (bool, error) {
	w, err := thawWave(m)
	if err != nil {
		return false, err
	}
	return w == nil || w.Last, nil
}

// keepsCheckpoints reports whether the manifest's trials are a pruned
// search's: their training checkpoints outlive them (a promoted trial
// goes on from them) in the shared work directory.
func keepsCheckpoints(m *batch.Manifest) (bool, error) {
	w, err := thawWave(m)
	return err == nil && w != nil && w.Jobs != nil, err
}

// extendManifest rewrites run m's manifest for a search's next wave: the
// job's trials, which must begin with the manifest's (the same ids at the
// same indices), and the job's wave. It returns the new manifest (m
// itself when the job has the same trials and wave).
func extendManifest(d batch.Dir, m *batch.Manifest, job *sweep.Job, o Options) (*batch.Manifest, error) {
	if job.Wave() == nil {
		return m, nil
	}
	if err := earlierWaves(d, m, job); err != nil {
		return nil, err
	}
	first := len(m.Trials)
	if old, err := thawFrozen(m); err == nil && old != nil && len(job.Trials) == len(m.Trials) {
		first = old.First // no trial added (a pruned search's last wave): the same wave
	}
	wave, err := freezeWave(job.Wave(), first)
	if err != nil {
		return nil, err
	}
	if len(job.Trials) == len(m.Trials) && bytes.Equal(wave, m.Search) {
		return m, nil
	}
	n := *m
	n.Trials, n.Search = slices.Clone(m.Trials), wave
	cpus, mem := 0, 0
	for _, tr := range m.Trials {
		cpus, mem = max(cpus, tr.CPUs), max(mem, tr.MemMB)
	}
	for i := len(m.Trials); i < len(job.Trials); i++ {
		tr := job.Trials[i]
		// The same request as the earlier waves' trials: the same data
		// and model, other settings.
		c, mb := cpus, mem
		if o.CPUs > 0 {
			c = o.CPUs
		}
		if o.MemMB > 0 {
			mb = o.MemMB
		}
		n.Trials = append(n.Trials, batch.Trial{Index: i, ID: tr.ID, Name: tr.Name, Seed: int64(tr.Seed), Params: job.TrialParams(tr), CPUs: c, MemMB: mb})
	}
	if err := n.Check(); err != nil {
		return nil, fmt.Errorf("write manifest of run %d: %w", m.RunID, err)
	}
	b, err := json.MarshalIndent(&n, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(d.Manifest(), append(b, '\n')); err != nil {
		return nil, err
	}
	if err := os.Chmod(d.Manifest(), 0o644); err != nil {
		return nil, err
	}
	o.log().Info("search wave", "run", m.RunID, "trials", len(n.Trials), "new", len(n.Trials)-len(m.Trials))
	return &n, nil
}

// earlierWaves checks that the manifest's trials are the first of the
// job's (a search's next wave adds trials after them).
func earlierWaves(d batch.Dir, m *batch.Manifest, job *sweep.Job) error {
	if len(job.Trials) < len(m.Trials) {
		return fmt.Errorf("%s: run %d has %d trials, this wave of the search %d: the search's suggestions changed (was the runner rebuilt from other code?)", d.Manifest(), m.RunID, len(m.Trials), len(job.Trials))
	}
	for i, tr := range m.Trials {
		if job.Trials[i].ID != tr.ID {
			return fmt.Errorf("%s: trial %d of run %d is %s, this wave of the search has %s there: the search's suggestions changed (was the runner rebuilt from other code?)", d.Manifest(), i, m.RunID, tr.ID, job.Trials[i].ID)
		}
	}
	return nil
}

// endWave ends what a submission found with every trial's result: the
// run (Finish) after a grid's trials or a search's last wave; after an
// earlier wave the run is left unended (interrupted) for the next, and
// Finished is nil.
func endWave(ctx context.Context, st *runs.Store, d batch.Dir, m *batch.Manifest, lock *pipeline.Lock, o Options) (*Finished, error) {
	last, err := lastWave(m)
	if err != nil {
		return nil, err
	}
	if last {
		return Finish(ctx, st, d, m, lock, o)
	}
	ri, err := st.Run(ctx, m.RunID)
	if err != nil {
		return nil, err
	}
	if ri.Status == runs.StatusRunning {
		return nil, st.SetRunStatus(ctx, m.RunID, runs.StatusInterrupted)
	}
	return nil, nil
}

// linkCheckpoints makes a task's private workdir w read and write its
// checkpoints in the shared work directory's (<workdir>/checkpoints): a
// pruned search's promoted trial, another task of a later wave, goes on
// from the checkpoint its shorter trial left there.
func linkCheckpoints(w, shared string) error {
	target := filepath.Join(workdir.Workdir(shared).Root(), "checkpoints")
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	link := pipeline.CheckpointsDir(w)
	if cur, err := os.Readlink(link); err == nil && cur == target {
		return nil
	}
	tmp := fmt.Sprintf("%s.tmp%d", link, os.Getpid())
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("link %s to the shared checkpoints: %w", link, err)
	}
	return nil
}

// WaitWave implements sweep.WaveWaiter: every Options.Poll it collects the
// results that arrived (Collect, on this host) and tells Options.Progress,
// until every trial of the wave has its result and none of the run's
// tasks is queued (the next wave's submission would be refused while one
// is). Each poll that finds the wave unfinished passes the fault point
// "search:waiting". A wave whose trials lack a result with none queued (a lost node, a
// cancelled task) stops the search: the same command resubmits them.
func (x *Executor) WaitWave(ctx context.Context, st *runs.Store, runID int64) (*sweep.WaveEnd, error) {
	o := x.o
	if s := x.Submission; s != nil && s.RunID == runID && s.Finished != nil {
		// Run found every result and ended the run itself (the last
		// wave, resumed after its tasks ended): its report is written.
		return &sweep.WaveEnd{Status: s.Finished.Status, ReportPath: s.Finished.ReportPath}, nil
	}
	p := &slurm.Poller{Client: o.client(), Interval: o.poll()}
	for {
		c, err := Collect(ctx, st, runID, o)
		if err != nil {
			return nil, err
		}
		switch {
		case c.SharedFailed != "":
			return nil, fmt.Errorf("run %d: %s", runID, c.SharedFailed)
		case c.MarkedInterrupted:
			return nil, fmt.Errorf("run %d: %d trial(s) of the search's wave have no result and none is queued (a lost node, a cancelled task): the same command submits them again", runID, len(c.Pending))
		case c.Finished != nil:
			return &sweep.WaveEnd{Status: c.Finished.Status, ReportPath: c.Finished.ReportPath}, nil
		case c.WaveEnded && !queued(ctx, st, runID, o):
			return &sweep.WaveEnd{Status: runs.StatusInterrupted}, nil
		}
		fault.Point("search:waiting")
		if o.Progress != nil {
			if s, err := Status(ctx, st, runID, o.WorkDir, p); err == nil {
				o.Progress(s)
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(o.poll()):
		}
	}
}

// queuedWave is the resumption of a search's wave while the run has
// tasks queued (a runner killed while it waited for them): when the
// manifest holds this wave's trials, its tasks are adopted (Executor.
// adopted: nothing is submitted, WaitWave waits for them); when they are
// the earlier wave's, still leaving the queue, it waits until they have
// left. It then extends the manifest to the wave's trials. For a grid it
// refuses a run with tasks queued (refuseQueued).
func (x *Executor) queuedWave(ctx context.Context, st *runs.Store, d batch.Dir, m *batch.Manifest, job *sweep.Job) (*batch.Manifest, error) {
	if job.Wave() == nil {
		return m, refuseQueued(ctx, st, job.RunID, x.o)
	}
	if err := earlierWaves(d, m, job); err != nil {
		return nil, err
	}
	for {
		err := refuseQueued(ctx, st, job.RunID, x.o)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrAlreadySubmitted) {
			return nil, err
		}
		if len(m.Trials) == len(job.Trials) {
			x.adopted = true
			x.o.log().Info("adopting the search wave's queued tasks", "run", job.RunID, "trials", len(m.Trials))
			return m, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(x.o.poll()):
		}
	}
	return extendManifest(d, m, job, x.o)
}

// PlanArrays are the sbatch --array values of the first submission of n
// trials of a new run (runner plan: a grid's trials, a search's first
// wave): one trial per task, or Options.TrialsPerTask per task, split
// below Options.MaxArraySize (else DefaultMaxArraySize: plan asks no
// cluster), each with the MaxParallel throttle. Several arrays are
// "OFFSET+SPEC", as the run records them.
func PlanArrays(n int, o Options) []string {
	if n <= 0 {
		return nil
	}
	tasks := (n + o.perTask() - 1) / o.perTask()
	idx := make([]int, tasks)
	for i := range idx {
		idx[i] = i
	}
	size := o.MaxArraySize
	if size <= 0 {
		size = DefaultMaxArraySize
	}
	var out []string
	for _, c := range chunks(idx, size) {
		out = append(out, c.recorded(c.spec(o.MaxParallel)))
	}
	return out
}

// SearchWave is a search run's latest wave as its manifest froze it
// (RunStatus.Search; nil for a grid's run).
type SearchWave struct {
	Points int  // points suggested so far
	Jobs   int  // a pruned search's rung jobs so far (0 without a pruner)
	Last   bool // the search's last wave: the run ends with it
	First  int  // index of the wave's first trial; the earlier waves' trials are those before it
}

// searchWave is the manifest's SearchWave.
func searchWave(m *batch.Manifest) (*SearchWave, error) {
	f, err := thawFrozen(m)
	if err != nil || f == nil {
		return nil, err
	}
	return &SearchWave{Points: len(f.Points), Jobs: len(f.Jobs), Last: f.Last, First: f.First}, nil
}

// toSubmit is how many trials a submission of job would queue at most, as
// Check asks sbatch --test-only and the submit limit about them: every
// trial of a grid's run, and of a search's later wave those of its
// trials that have no outcome in the run yet (the earlier waves' ended).
func (x *Executor) toSubmit(ctx context.Context, job *sweep.Job) (int, error) {
	n := len(job.Trials)
	if job.Wave() == nil || job.RunID == 0 {
		return n, nil
	}
	ts, err := job.Store.TrialStatuses(ctx, job.RunID)
	if err != nil {
		return 0, err
	}
	ended := map[string]bool{}
	for _, t := range ts {
		ended[t.ID] = runs.HasResult(t.Status) || (t.Status == runs.StatusFailed && !x.o.RetryFailed)
	}
	for _, tr := range job.Trials {
		if ended[tr.ID] {
			n--
		}
	}
	return n, nil
}
