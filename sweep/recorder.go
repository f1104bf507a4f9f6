package sweep

import (
	"context"
	"errors"
	"fmt"
	"goldstone/experiment"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/trialio"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TrialObserver is told when a trial finishes; a RunOptions.Observer may
// implement it (progress displays do).
type TrialObserver interface {
	TrialFinished(trial, status string)
}

// recorder turns pipeline events into rows of the results store.
type recorder struct {
	reportDir  string
	experiment string
	st         *runs.Store
	run        int64
	built      *experiment.Built
	log        *slog.Logger
	out        *Outcome
	skip       map[string]bool
	started    map[string]time.Time
	finished   map[string]bool
	extra      pipeline.Observer
	logs       *trialLogs
	nodes      map[string]*pipeline.Node
	infraNodes map[string]bool // shared stages stopped by a machine error
}

// newRecorder returns the recorder of a run's trials: those job keeps are
// not recorded again. Per-trial log files go under Options.LogDir.
func newRecorder(job *Job) (*recorder, error) {
	opts := job.Options
	r := &recorder{reportDir: opts.ReportDir, experiment: job.Experiment.Name, st: job.Store, run: job.RunID, built: job.Built,
		log: job.Log, out: job.Outcome, skip: map[string]bool{}, started: map[string]time.Time{}, finished: map[string]bool{},
		extra: opts.Observer, logs: &trialLogs{files: map[string]*os.File{}}}
	for id := range job.Keep {
		r.skip[id] = true
	}
	if opts.LogDir != "" {
		var err error
		if r.logs.dir, err = experiment.RunDir(opts.LogDir, job.Experiment.Name, job.RunID); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// observer is the recorder as the pipeline's observer: its store writes
// outlive a cancelled ctx (an interruption is recorded too).
func (r *recorder) observer(ctx context.Context) pipeline.Observer {
	wctx := context.WithoutCancel(ctx)
	return pipeline.ObserverFunc(func(ev pipeline.Event) { r.event(wctx, ev) })
}

func (r *recorder) event(ctx context.Context, ev pipeline.Event) {
	if r.extra != nil {
		r.extra.Event(ev)
	}
	ti := r.built.TrialOf(ev.Node)
	r.logTrial(ctx, ev)
	if ev.Kind == pipeline.Corrupt {
		r.log.Warn("corrupt cache entry evicted; running the stage again", "node", ev.Node, "problem", ev.Reason)
		return
	}
	if ti >= 0 && r.skip[r.built.Trials[ti].Trial.ID] {
		// Kept from an earlier attempt of this run: its record stands.
		if ev.Kind == pipeline.Cached {
			r.out.Cached++
		}
		return
	}
	switch ev.Kind {
	case pipeline.Started:
		r.out.Ran++
		r.log.Debug("stage started", "node", ev.Node)
		if ti >= 0 {
			tn := r.built.Trials[ti]
			r.started[tn.Trial.ID] = time.Now()
			r.upsert(ctx, tn.Trial, runs.StatusRunning, "", 0)
		}
	case pipeline.Cached, pipeline.Done:
		r.ended(ctx, ev, ti)
	case pipeline.Failed, pipeline.Skipped:
		r.stopped(ctx, ev, ti)
	}
}

// ended records a node that ended with outputs: its outputs, its
// trial's results when it is the trial's result node, the report's files.
func (r *recorder) ended(ctx context.Context, ev pipeline.Event, ti int) {
	if ev.Kind == pipeline.Cached {
		r.out.Cached++
	}
	r.log.Debug("stage finished", "node", ev.Node, "cached", ev.Kind == pipeline.Cached)
	r.recordOutputs(ctx, ev)
	if ti >= 0 {
		// A trial taken whole from the cache has no Started event: it
		// starts when its first stage is taken (its started_at is then
		// its ended_at, give or take the recording).
		if id := r.built.Trials[ti].Trial.ID; r.started[id].IsZero() {
			r.started[id] = time.Now()
		}
	}
	if ti >= 0 && r.built.Trials[ti].Result == ev.Node {
		tn := r.built.Trials[ti]
		if err := r.recordTrial(ctx, tn, ev.Outputs["result"]); runs.IsInfrastructure(err) {
			// The trial trained and its result is in the cache: it is
			// interrupted, and the next run records it from there.
			r.infra(fmt.Errorf("results %s: %w", r.st.Path(), err))
			r.log.Error("record trial: the results database is unavailable; the trial is interrupted and recorded from the cache by the next run", "trial", tn.Trial.ID, "err", err)
			r.upsert(ctx, tn.Trial, runs.StatusInterrupted, "interrupted: record results: "+err.Error(), 0)
		} else if err != nil {
			r.log.Error("record trial", "trial", tn.Trial.ID, "err", err)
			r.upsert(ctx, tn.Trial, runs.StatusFailed, "record results: "+err.Error(), 0)
		}
	}
	if ev.Node == r.built.Report {
		r.recordArtifacts(ctx, ev.Outputs)
	}
}

// stopped records a node that failed or was skipped: its trial's status
// (interrupted by a cancellation or the machine, pending when a shared
// stage stopped it, else failed), a data error, or the report's failure.
func (r *recorder) stopped(ctx context.Context, ev pipeline.Event, ti int) {
	msg := ev.Reason
	if ev.Err != nil {
		msg = ev.Err.Error()
	}
	if errors.Is(ev.Err, context.Canceled) {
		// A trial that had started is interrupted now; one that never
		// started is marked with the others in one statement when
		// the run ends (runs.MarkUnended): a cancelled sweep of 10,000
		// trials must not take 10,000 transactions to stop.
		if tr := r.built.Trials; ti >= 0 && !r.started[tr[ti].Trial.ID].IsZero() {
			r.upsert(ctx, tr[ti].Trial, runs.StatusInterrupted, "interrupted", 0)
		}
		return
	}
	if runs.IsInfrastructure(ev.Err) {
		// The machine failed (a full disk), not the stage: what it
		// hit is interrupted and runs again on the next run.
		r.infra(fmt.Errorf("stage %s: %w", ev.Node, ev.Err))
		r.log.Error("stage stopped by the machine; it runs again on the next run", "node", ev.Node, "err", msg)
		if ti >= 0 {
			r.upsert(ctx, r.built.Trials[ti].Trial, runs.StatusInterrupted, "interrupted: "+ev.Node+": "+msg, 0)
		} else {
			if r.infraNodes == nil {
				r.infraNodes = map[string]bool{}
			}
			r.infraNodes[ev.Node] = true
		}
		return
	}
	switch {
	case ti >= 0:
		tn := r.built.Trials[ti]
		if c := skipCause(ev); ev.Kind == pipeline.Skipped && c != "" && r.built.TrialOf(c) < 0 && r.infraNodes[c] {
			// Not run because a shared stage hit a machine error.
			r.upsert(ctx, tn.Trial, runs.StatusPending, "not run: stage "+c+" was interrupted", 0)
			return
		} else if ev.Kind == pipeline.Skipped && c != "" && r.built.TrialOf(c) < 0 {
			// Not run because a data stage failed: not a failure of
			// the trial, which stays pending and runs on the next run.
			r.upsert(ctx, tn.Trial, runs.StatusPending, "not run: stage "+c+" failed", 0)
			return
		}
		r.log.Warn("trial failed", "trial", tn.Trial.ID, "name", tn.Trial.Name, "stage", ev.Node, "err", msg)
		r.upsert(ctx, tn.Trial, runs.StatusFailed, ev.Node+": "+msg, 0)
	case ev.Node != r.built.Report && ev.Kind == pipeline.Failed:
		// The run's error line says it; no log line of its own, so
		// that with --quiet a data error is one line.
		r.out.DataErr = &experiment.DataError{Err: fmt.Errorf("stage %s: %s", ev.Node, msg)}
		r.log.Info("stage failed", "node", ev.Node, "err", msg)
	case ev.Kind == pipeline.Failed:
		r.log.Error("report failed", "err", msg)
		r.reportFailed(fmt.Errorf("stage %s: %s", ev.Node, msg))
	}
}

// infra records the first machine error of the run.
func (r *recorder) infra(err error) { r.out.infra(err) }

func (r *recorder) upsert(ctx context.Context, tr experiment.Trial, status, errText string, wall float64) {
	terminal := status != runs.StatusRunning && status != runs.StatusPending
	if r.finished[tr.ID] {
		return // the first outcome of a trial is its outcome (a failure, not the skips after it)
	}
	if terminal {
		r.finished[tr.ID] = true
	}
	t := r.row(tr, status, errText, wall)
	if status != runs.StatusRunning && status != runs.StatusPending {
		r.trialFinished(tr.ID, status)
	}
	if err := r.st.UpsertTrial(ctx, t); err != nil {
		r.log.Error("record trial status", "trial", tr.ID, "err", err)
	}
}

// row is the results row of a trial with the given status.
func (r *recorder) row(tr experiment.Trial, status, errText string, wall float64) runs.Trial {
	t := runs.Trial{RunID: r.run, ID: tr.ID, Params: trialParams(tr), Seed: int64(tr.Seed), Status: status, Error: errText, WallSeconds: wall}
	if s, ok := r.started[tr.ID]; ok {
		t.Started = s
	}
	if status != runs.StatusRunning {
		t.Ended = time.Now()
	}
	return t
}

func (r *recorder) trialFinished(id, status string) {
	if to, ok := r.extra.(TrialObserver); ok {
		to.TrialFinished(id, status)
	}
}

// recordTrial writes a finished trial's series, summary and status into
// the store in one transaction (runs.Store.RecordTrial): recorded whole,
// or not at all. The status is "done", or "diverged" (with the divergence
// as its error text, TrialOutcome) when its training diverged.
func (r *recorder) recordTrial(ctx context.Context, tn experiment.TrialNodes, dir string) error {
	if r.finished[tn.Trial.ID] {
		return nil
	}
	sum, err := trialio.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		return err
	}
	ser, err := trialio.ReadSeries(filepath.Join(dir, "series.arrow"))
	if err != nil {
		return err
	}
	points := make([]runs.MetricPoint, len(ser.Step))
	for i := range ser.Step {
		points[i] = runs.MetricPoint{Name: ser.Metric[i], Step: int(ser.Step[i]), Value: ser.Value[i]}
	}
	status, notice := TrialOutcome(sum)
	if err := r.st.RecordTrial(ctx, r.row(tn.Trial, status, notice, sum["wall_seconds"]), points, sum); err != nil {
		return err
	}
	if status == runs.StatusDiverged {
		r.log.Info("trial diverged", "trial", tn.Trial.ID, "name", tn.Trial.Name, "at", notice)
	}
	r.finished[tn.Trial.ID] = true
	r.trialFinished(tn.Trial.ID, status)
	return nil
}

// TrialOutcome is the status of a trial whose result is sum, and its
// error text: "done" and "", or "diverged" and where ("diverged at step
// 912: psi 3.8e+200 past its bound 1.8e+08") when its training diverged.
// Every executor records a trial's result with it.
func TrialOutcome(sum trialio.Summary) (status, notice string) {
	if d, ok := sum.Divergence(); ok {
		return runs.StatusDiverged, d.String()
	}
	return runs.StatusDone, ""
}

// reportFailed records the first error of the run's report.
func (r *recorder) reportFailed(err error) {
	if r.out.ReportErr == nil {
		r.out.ReportErr = err
	}
}

// recordArtifacts records the report node's output files as the run's
// artifacts and copies them to its report directory (none after a failed
// data stage). The run's report state is "writing" from here until the
// caller ends it (runs.SetReport); an error of the copy is the report's
// error (Outcome.ReportErr).
func (r *recorder) recordArtifacts(ctx context.Context, outputs map[string]string) {
	if r.out.DataErr != nil {
		// A data stage failed: no trial ran, and the report has nothing
		// to show but that error, which the run's outcome says; no
		// report folder is left behind (issue 21).
		return
	}
	dst := ""
	if r.reportDir != "" {
		if err := r.st.SetReport(ctx, r.run, runs.ReportWriting, ""); err != nil {
			r.log.Error("report state", "err", err)
		}
		var err error
		if dst, err = experiment.RunDir(r.reportDir, r.experiment, r.run); err == nil {
			err = os.MkdirAll(dst, 0o777)
		}
		if err != nil {
			r.log.Error("report directory", "err", err)
			r.reportFailed(fmt.Errorf("report directory: %w", err))
			return
		}
	}
	for _, dir := range outputs {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == "manifest.json" {
				return err
			}
			sum, err := pipeline.Digest(ctx, p)
			if err != nil {
				return err
			}
			path := p
			if dst != "" {
				rel, _ := filepath.Rel(dir, p)
				path = filepath.Join(dst, rel)
				if err := trialio.CopyFile(p, path); err != nil {
					return err
				}
				if abs, err := filepath.Abs(path); err == nil {
					path = abs
				}
			}
			kind := strings.TrimPrefix(filepath.Ext(p), ".")
			r.st.Artifact(r.run, "", path, sum, kind)
			return nil
		})
		if err != nil {
			r.log.Error("record artifacts", "err", err)
			r.reportFailed(fmt.Errorf("copy the report: %w", err))
		}
	}
	if dst != "" {
		r.out.ReportPath = dst
	}
	if err := r.st.Flush(ctx); err != nil {
		r.log.Error("record artifacts", "err", err)
		r.reportFailed(fmt.Errorf("record the report's files: %w", err))
	}
}
