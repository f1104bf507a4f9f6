package stages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/runs"
)

// RunOptions configures Execute.
type RunOptions struct {
	WorkDir     string // stage outputs and caches
	DataDir     string
	Jobs        int // trials (stages) at once
	Cores       int // cores of the machine (0: runtime.NumCPU)
	FailFast    bool
	RetryFailed bool // re-run a finished run's failed trials
	Force       bool // ignore the cache (repro)
	Kind        string
	Log         *slog.Logger
	Observer    pipeline.Observer // extra observer (progress display); optional
	ReportDir   string            // the report's files are copied to ReportDir/<experiment>/run-<id>/ ("" keeps them in the cache only)
	Note        string            // the run's note ("" keeps a resumed run's note)
	Tags        map[string]string // tags added to the run
	Env         map[string]string // environment recorded with the run beyond runs.Environment (see runs.BuildEnv)
	LogDir      string            // per-trial log files go to LogDir/<experiment>/run-<id>/ ("" writes none)
	Lock        *pipeline.Lock    // the caller's lock on WorkDir (nil: Execute takes it)
}

// Outcome is what a run did.
type Outcome struct {
	RunID       int64
	Resumed     bool
	UpToDate    bool
	Trials      int
	Done        int
	Failed      int
	Interrupted int
	Ran, Cached int   // stage counts
	DataErr     error // a non-trial stage (ingest, binning...) failed
	// InfraErr is the first error of the machine (runs.IsInfrastructure:
	// the results database locked past its wait, a full disk) that ended a
	// trial or a stage: the trials it hit are interrupted, not failed, and
	// the same command resumes them.
	InfraErr error
	// ReportErr is why the run's report was not written (its stage
	// failed, copying it failed); the run's report state is then
	// "failed" and 'runner report' rebuilds it.
	ReportErr error
	// ReportRebuilt says why the report of an up-to-date run was written
	// again ("" when it was not): it had failed, was cut short, or files
	// of it are missing.
	ReportRebuilt string
	Failures      map[string]string
	Status        string // the run's status: runs.StatusFinished, StatusFailed or StatusInterrupted
	ReportPath    string // where the report's files were copied
}

// workersPerTrial splits the machine's cores over the trials that run at
// once, so jobs x workers never oversubscribes it.
func workersPerTrial(jobs, cores int) int {
	return max(1, cores/max(1, jobs))
}

// Execute runs an experiment: it creates (or resumes) a run in the store,
// builds the pipeline graph of its trials, runs it with the content cache,
// and records every trial's settings, status, step-wise series and summary
// metrics, and the report's artifacts.
//
// A run whose resolved configuration matches the latest run of the
// experiment is resumed when that run did not end (some trial is pending,
// running or interrupted, e.g. after Ctrl-C, a kill, or a data error that
// stopped it before its trials ran), and left alone when it did ("up to
// date") while the cache holds its done trials' stages under this code's
// keys; a changed configuration, or a changed cache key (a stage's version,
// an input, an entry removed), starts a new run, and stages whose cache
// keys did not change are reused from the cache. A resumed run keeps its
// done trials and, unless RetryFailed, its failed trials with their errors:
// only the others run.
//
// The workdir lock is taken before anything is written to the store, so a
// runner that finds the workdir busy leaves no trace. The run ends
// finished (every trial done), failed (some trial failed, or a data error),
// or interrupted (ctx cancelled).
func Execute(ctx context.Context, st *runs.Store, e *Experiment, opts RunOptions) (*Outcome, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Kind == "" {
		opts.Kind = runs.KindRun
	}
	if err := CheckName(e.Name); err != nil {
		return nil, &ConfigError{File: "experiment", Key: e.Name, Err: err}
	}
	trials, err := e.TrialsContext(ctx)
	if err != nil {
		return nil, err
	}
	cfgJSON, cfgHash := e.Resolved()
	out := &Outcome{Trials: len(trials), Failures: map[string]string{}}

	cores := opts.Cores
	if cores <= 0 {
		cores = runtime.NumCPU()
	}
	// Build before touching the store: a missing data set or a bad sweep
	// leaves no run behind.
	built, err := Build(ctx, e, trials, Env{DataDir: opts.DataDir, Workers: workersPerTrial(opts.Jobs, cores), Fetch: true})
	if err != nil {
		return nil, err
	}
	lock := opts.Lock
	if lock == nil {
		if lock, err = pipeline.LockWorkDir(opts.WorkDir); err != nil {
			return nil, err
		}
		defer lock.Unlock()
	}
	var runID int64
	var keep map[string]string // trials of a resumed run that keep their outcome
	if opts.Kind == runs.KindRun {
		last, err := st.LatestRun(ctx, e.Name, runs.KindRun)
		if err != nil {
			return nil, err
		}
		if last != nil && last.ConfigHash == cfgHash {
			// What its trials say, not only its status: a run stopped by a
			// data error ended "failed" with its trials still pending.
			now, err := st.EndStatus(ctx, last.ID)
			if err != nil {
				return nil, err
			}
			exe, err := st.Executor(ctx, last.ID)
			if err != nil {
				return nil, err
			}
			ended := runs.Ended(last.Status) && now != runs.StatusInterrupted && !(opts.RetryFailed && now == runs.StatusFailed)
			stale := ""
			if ended {
				if stale, err = staleRun(ctx, st, last.ID, built, opts.WorkDir); err != nil {
					return nil, err
				}
			}
			switch {
			case last.Status == runs.StatusRunning && processAlive(last):
				return nil, fmt.Errorf("run %d of %s is in progress (pid %d on %s)", last.ID, e.Name, last.PID, last.Host)
			case ended && stale != "":
				// The same settings, but its results would not come from
				// the cache with this code and data: a new run (below).
				log.Info("new run: a stage's cache key changed since the last run (code, data or cache)", "experiment", e.Name, "last run", last.ID, "stage", stale)
			case ended:
				out.RunID, out.UpToDate, out.Status = last.ID, true, last.Status
				if err := countStatuses(ctx, st, out); err != nil {
					return nil, err
				}
				// Up to date includes the report: one that failed, was
				// cut short or lost files is written again, from the
				// results the run recorded.
				if ok, why, err := ReportCurrent(ctx, st, last, opts.ReportDir); err != nil {
					return nil, err
				} else if !ok {
					log.Info("up to date, but the report is not: rebuilding it", "experiment", e.Name, "run", last.ID, "why", why)
					out.ReportRebuilt = why
					ro, err := RebuildReport(ctx, st, last, built, opts, lock)
					if ro != nil {
						out.ReportPath, out.Ran, out.Cached = ro.ReportPath, ro.Ran, ro.Cached
					}
					if err != nil {
						if ctx.Err() != nil {
							return out, ctx.Err()
						}
						out.ReportErr = err
					}
					return out, nil
				}
				log.Info("up to date: nothing to run", "experiment", e.Name, "run", last.ID, "trials", out.Trials, "failed", out.Failed)
				return out, nil
			case exe == runs.ExecutorSlurm:
				return nil, fmt.Errorf("run %d of %s was submitted to Slurm and has not ended: watch it with 'runner status --run %d', collect it with 'runner collect --run %d', or resume it with --executor slurm", last.ID, e.Name, last.ID, last.ID)
			default:
				runID, out.Resumed = last.ID, true
				if keep, err = st.ResumeTrials(ctx, runID, opts.RetryFailed); err != nil {
					return nil, err
				}
				if err := st.SetRunStatus(ctx, runID, runs.StatusRunning); err != nil {
					return nil, err
				}
				log.Info("resuming run", "experiment", e.Name, "run", runID, "was", last.Status)
			}
		}
	}
	if runID == 0 {
		info := runs.Environment()
		info.Experiment, info.Kind, info.ConfigJSON, info.ConfigHash = e.Name, opts.Kind, cfgJSON, cfgHash
		id, err := st.CreateRun(ctx, info)
		if err != nil {
			return nil, err
		}
		runID = id
		log.Info("new run", "experiment", e.Name, "run", runID, "trials", len(trials), "kind", opts.Kind)
	}
	out.RunID = runID
	if ro, ok := opts.Observer.(RunObserver); ok {
		ro.RunStarted(runID, len(trials), built.trialOfFunc())
	}
	// Stopped (Ctrl-C) before a stage ran: the run is interrupted, not
	// left "running".
	abort := func(err error) (*Outcome, error) {
		if ctx.Err() == nil {
			return nil, err
		}
		if ferr := st.FinishRun(context.WithoutCancel(ctx), runID, runs.StatusInterrupted, ""); ferr != nil {
			log.Error("mark interrupted", "err", ferr)
		}
		out.Status = runs.StatusInterrupted
		return out, ctx.Err()
	}
	if err := recordRunInfo(ctx, st, runID, opts); err != nil {
		return abort(err)
	}

	done := map[string]bool{}
	for id := range keep {
		done[id] = true
	}
	if err := keepFailures(built, ctx, st, runID, keep); err != nil {
		return abort(err)
	}
	pending := make([]runs.Trial, 0, len(trials))
	for _, tr := range trials {
		if !done[tr.ID] {
			pending = append(pending, runs.Trial{RunID: runID, ID: tr.ID, Params: trialParams(tr), Seed: int64(tr.Settings.Int("seed")), Status: runs.StatusPending})
		}
	}
	if err := st.UpsertTrials(ctx, pending); err != nil {
		return abort(err)
	}

	// Trials already done in this run are not recorded again (their nodes
	// stay: the report needs their outputs, which come from the cache);
	// failed ones are not run again (keepFailures).
	rec := &recorder{reportDir: opts.ReportDir, experiment: e.Name, ctx: ctx, st: st, run: runID, built: built, log: log, out: out, skip: done, started: map[string]time.Time{}, finished: map[string]bool{}, extra: opts.Observer,
		logs: &trialLogs{files: map[string]*os.File{}}}
	if opts.LogDir != "" {
		if rec.logs.dir, err = RunDir(opts.LogDir, e.Name, runID); err != nil {
			return nil, err
		}
	}
	defer rec.logs.close()
	// The trials' pools share the machine's cores (NewPool): when job slots
	// stay idle (the end of a sweep, fewer trials than jobs) the running
	// trials get their cores, never more workers in all than the cores.
	budget := optim.NewBudget(min(cores, runtime.GOMAXPROCS(0)))
	_, runErr := pipeline.Run(withBudget(ctx, budget), built.Graph, pipeline.Options{
		Lock:     lock,
		WorkDir:  opts.WorkDir,
		Jobs:     opts.Jobs,
		Force:    opts.Force,
		FailFast: opts.FailFast,
		Workers:  workersPerTrial(opts.Jobs, cores),
		Observer: rec,
		// Spread waits for loops running on the pools it grows: not on
		// the scheduler's goroutine.
		Idle: func(int) { go budget.Spread() },
	})
	if ferr := st.Flush(context.WithoutCancel(ctx)); ferr != nil {
		if !runs.IsInfrastructure(ferr) {
			return nil, ferr
		}
		rec.infra(ferr) // it names the database
	}
	var status string
	switch {
	case ctx.Err() != nil || out.InfraErr != nil:
		status = runs.StatusInterrupted
		ictx := context.WithoutCancel(ctx)
		if err := st.MarkUnended(ictx, runID); err != nil {
			log.Error("mark interrupted", "err", err)
		}
	case out.DataErr != nil:
		status = runs.StatusFailed
	default:
		if status, err = st.EndStatus(context.WithoutCancel(ctx), runID); err != nil {
			return nil, err
		}
	}
	out.Status = status
	if err := countStatuses(context.WithoutCancel(ctx), st, out); err != nil {
		return nil, err
	}
	note := fmt.Sprintf("%d trials: %d done, %d failed, %d interrupted", out.Trials, out.Done, out.Failed, out.Interrupted)
	log.Info("run ended", "run", runID, "status", status, "trials", note)
	if err := st.FinishRun(context.WithoutCancel(ctx), runID, status, ""); runs.IsInfrastructure(err) {
		// The run stays "running" with this process gone: the next run
		// resumes it.
		rec.infra(fmt.Errorf("results %s: %w", st.Path(), err))
		out.Status = runs.StatusInterrupted
	} else if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	if out.InfraErr != nil {
		return out, fmt.Errorf("%w (the run is interrupted: run the same command again to resume it; trials that trained are recorded from the cache)", out.InfraErr)
	}
	if runErr != nil && out.DataErr == nil && out.Failed == 0 {
		return out, runErr
	}
	return out, nil
}

func countStatuses(ctx context.Context, st *runs.Store, out *Outcome) error {
	ts, err := st.TrialStatuses(ctx, out.RunID)
	if err != nil {
		return err
	}
	out.Done, out.Failed, out.Interrupted = 0, 0, 0
	for _, t := range ts {
		switch t.Status {
		case runs.StatusDone, runs.StatusCached:
			out.Done++
		case runs.StatusFailed:
			out.Failed++
			out.Failures[t.ID] = t.Error
		case runs.StatusInterrupted, runs.StatusRunning, runs.StatusPending:
			out.Interrupted++
		}
	}
	return nil
}

// trialParams renders a trial's settings as JSON texts for the store, with
// its variant and its name (variant and grid values: stable across code
// versions that add settings, which change trial ids). A float setting
// keeps a decimal point even when integral (lr = 1 is "1.0"), so that the
// typed columns of the trials view and of exports are REAL/DOUBLE for it.
func trialParams(tr Trial) map[string]string {
	m := make(map[string]string, len(tr.Settings)+2)
	js := func(v any) string {
		switch x := v.(type) {
		case float64:
			return floatJSON(x)
		case []float64:
			parts := make([]string, len(x))
			for i, f := range x {
				parts[i] = floatJSON(f)
			}
			return "[" + strings.Join(parts, ",") + "]"
		}
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	for k, v := range tr.Settings {
		m[k] = js(v)
	}
	if tr.Variant != "" {
		m["variant"] = js(tr.Variant)
	}
	m["name"] = js(tr.Name)
	return m
}

// TrialObserver is told when a trial finishes; a RunOptions.Observer may
// implement it (progress displays do).
type TrialObserver interface {
	TrialFinished(trial, status string)
}

// recorder turns pipeline events into rows of the results store.
type recorder struct {
	reportDir  string
	experiment string
	ctx        context.Context
	st         *runs.Store
	run        int64
	built      *Built
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

func (r *recorder) Event(ev pipeline.Event) {
	if r.extra != nil {
		r.extra.Event(ev)
	}
	ti := r.built.TrialOf(ev.Node)
	ctx := context.WithoutCancel(r.ctx)
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
		if ev.Kind == pipeline.Cached {
			r.out.Cached++
		}
		r.log.Debug("stage finished", "node", ev.Node, "cached", ev.Kind == pipeline.Cached)
		r.recordOutputs(ctx, ev)
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
	case pipeline.Failed, pipeline.Skipped:
		msg := ""
		if ev.Err != nil {
			msg = ev.Err.Error()
		} else {
			msg = ev.Reason
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
		if ti >= 0 {
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
		} else if ev.Node != r.built.Report && ev.Kind == pipeline.Failed {
			// The run's error line says it; no log line of its own, so
			// that with --quiet a data error is one line.
			r.out.DataErr = &DataError{Err: fmt.Errorf("stage %s: %s", ev.Node, msg)}
			r.log.Info("stage failed", "node", ev.Node, "err", msg)
		} else if ev.Kind == pipeline.Failed {
			r.log.Error("report failed", "err", msg)
			r.reportFailed(fmt.Errorf("stage %s: %s", ev.Node, msg))
		}
	}
}

// infra records the first machine error of the run.
func (r *recorder) infra(err error) {
	if r.out.InfraErr == nil {
		r.out.InfraErr = err
	}
}

func (r *recorder) upsert(ctx context.Context, tr Trial, status, errText string, wall float64) {
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
func (r *recorder) row(tr Trial, status, errText string, wall float64) runs.Trial {
	t := runs.Trial{RunID: r.run, ID: tr.ID, Params: trialParams(tr), Seed: int64(tr.Settings.Int("seed")), Status: status, Error: errText, WallSeconds: wall}
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

// recordTrial writes a finished trial's series, summary and "done" status
// into the store in one transaction (runs.Store.RecordTrial): recorded
// whole, or not at all.
func (r *recorder) recordTrial(ctx context.Context, tn TrialNodes, dir string) error {
	if r.finished[tn.Trial.ID] {
		return nil
	}
	sum, err := ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		return err
	}
	ser, err := ReadSeries(filepath.Join(dir, "series.arrow"))
	if err != nil {
		return err
	}
	points := make([]runs.MetricPoint, len(ser.Step))
	for i := range ser.Step {
		points[i] = runs.MetricPoint{Name: ser.Metric[i], Step: int(ser.Step[i]), Value: ser.Value[i]}
	}
	if err := r.st.RecordTrial(ctx, r.row(tn.Trial, runs.StatusDone, "", sum["wall_seconds"]), points, sum); err != nil {
		return err
	}
	r.finished[tn.Trial.ID] = true
	r.trialFinished(tn.Trial.ID, runs.StatusDone)
	return nil
}

// reportFailed records the first error of the run's report.
func (r *recorder) reportFailed(err error) {
	if r.out.ReportErr == nil {
		r.out.ReportErr = err
	}
}

// recordArtifacts records the report node's output files as the run's
// artifacts and copies them to its report directory. The run's report
// state is "writing" from here until the caller ends it (runs.SetReport);
// an error of the copy is the report's error (Outcome.ReportErr).
func (r *recorder) recordArtifacts(ctx context.Context, outputs map[string]string) {
	dst := ""
	if r.reportDir != "" {
		if err := r.st.SetReport(ctx, r.run, runs.ReportWriting, ""); err != nil {
			r.log.Error("report state", "err", err)
		}
		var err error
		if dst, err = RunDir(r.reportDir, r.experiment, r.run); err == nil {
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
			sum, err := fileSHA256(p)
			if err != nil {
				return err
			}
			path := p
			if dst != "" {
				rel, _ := filepath.Rel(dir, p)
				path = filepath.Join(dst, rel)
				if err := CopyFile(p, path); err != nil {
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

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// MarkStaleRuns marks interrupted the runs left "running" by a runner that
// is gone: killed (SIGKILL, a crash, a power cut) before it could say so.
// A run counts as stale when it was started on this host by a process that
// no longer exists; runs of other hosts and runs executed on a Slurm
// cluster (whose trials run without their submitter) are left alone. It
// returns the runs it marked. The run command resumes such a run anyway;
// this is for the others: a killed repro, which no command resumes, and
// gc, which never deletes a running run.
func MarkStaleRuns(ctx context.Context, st *runs.Store) ([]runs.RunInfo, error) {
	all, err := st.Runs(ctx, "")
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	var marked []runs.RunInfo
	for _, ri := range all {
		if ri.Status != runs.StatusRunning || ri.Host != host || processAlive(&ri) {
			continue
		}
		exe, err := st.Executor(ctx, ri.ID)
		if err != nil {
			return marked, err
		}
		if exe == runs.ExecutorSlurm {
			continue
		}
		ok, err := st.MarkRunInterrupted(ctx, ri.ID, fmt.Sprintf("interrupted: its runner (pid %d on %s) is gone", ri.PID, ri.Host))
		if err != nil {
			return marked, err
		}
		if ok {
			marked = append(marked, ri)
		}
	}
	return marked, nil
}

// processAlive reports whether the run's process is still alive on this host.
func processAlive(ri *runs.RunInfo) bool {
	host, _ := os.Hostname()
	if ri.Host != host || ri.PID <= 0 {
		return false
	}
	if ri.PID == os.Getpid() {
		return true
	}
	p, err := os.FindProcess(ri.PID)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// recordRunInfo stores the run's note, tags and environment (runs.BuildEnv
// and opts.Env).
func recordRunInfo(ctx context.Context, st *runs.Store, runID int64, opts RunOptions) error {
	if opts.Note != "" {
		if err := st.SetNote(ctx, runID, opts.Note); err != nil {
			return err
		}
	}
	if len(opts.Tags) > 0 {
		if err := st.SetTags(ctx, runID, opts.Tags); err != nil {
			return err
		}
	}
	env := runs.BuildEnv()
	maps.Copy(env, opts.Env)
	return st.SetEnv(ctx, runID, env)
}

// skipCause returns the node whose failure made a Skipped event's node
// impossible ("upstream X failed"), or "".
func skipCause(ev pipeline.Event) string {
	r, ok := strings.CutPrefix(ev.Reason, "upstream ")
	if !ok {
		return ""
	}
	c, ok := strings.CutSuffix(r, " failed")
	if !ok {
		return ""
	}
	return c
}

// floatJSON is the JSON text of f with a decimal point or exponent, so that
// JSON readers (SQLite's json_extract) read it as a float.
func floatJSON(f float64) string {
	b, err := json.Marshal(f)
	if err != nil {
		panic(err) // settings are finite: checked when decoded
	}
	s := string(b)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// staleRun returns the first node of the trials done in run id (or of the
// stages they share) whose cache entry this code and data would not reuse:
// a stage's version, a setting's encoding or an input changed since, or the
// entry was removed; "" when every one is cached. Failed trials do not
// count: a resumed run keeps them failed.
func staleRun(ctx context.Context, st *runs.Store, id int64, built *Built, workdir string) (string, error) {
	trials, err := st.Trials(ctx, id)
	if err != nil {
		return "", err
	}
	done := map[string]bool{}
	for _, t := range trials {
		if t.Status == runs.StatusDone || t.Status == runs.StatusCached {
			done[t.ID] = true
		}
	}
	items, err := pipeline.Plan(ctx, built.Graph, pipeline.Options{WorkDir: workdir})
	if err != nil {
		return "", err
	}
	for _, it := range items {
		if it.Cached || it.Node == built.Report {
			continue
		}
		if i := built.TrialOf(it.Node); i >= 0 && !done[built.Trials[i].Trial.ID] {
			continue
		}
		return it.Node, nil
	}
	return "", nil
}
