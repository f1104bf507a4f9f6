package stages

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"goldstone/pipeline"
	"goldstone/runs"
)

// What other executors (internal/slurmexec) share with Execute, so that a
// run recorded by one reads exactly like a run recorded by the other.

// TrialParams renders a trial's settings as the results store records
// them: each setting as JSON text, with its variant and name.
func TrialParams(tr Trial) map[string]string { return trialParams(tr) }

// RecordReport records the files of a report node's outputs as run-level
// artifacts of run and copies them to reportDir/<experiment>/run-<id>/
// ("" keeps them in the cache only), as Execute does; it returns where they
// were copied. Problems are logged to log (nil: discarded), as Execute
// logs them, and the store's write error is returned.
func RecordReport(ctx context.Context, st *runs.Store, run int64, experiment, reportDir string, outputs map[string]string, log *slog.Logger) (string, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &recorder{reportDir: reportDir, experiment: experiment, ctx: ctx, st: st, run: run, log: log, out: &Outcome{}}
	r.recordArtifacts(ctx, outputs)
	return r.out.ReportPath, errors.Join(r.out.ReportErr, st.Err())
}

// OutputsObserver records what Execute's recorder records of every node
// that finishes or comes from the cache: its output files (stage, cache
// directory, file, sha256) under its trial, and the digests of its external
// inputs. Other executors pass it to the run that assembles their results.
func OutputsObserver(ctx context.Context, st *runs.Store, run int64, built *Built, log *slog.Logger) pipeline.Observer {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &recorder{ctx: ctx, st: st, run: run, built: built, log: log, out: &Outcome{}}
	return pipeline.ObserverFunc(func(ev pipeline.Event) {
		if ev.Kind == pipeline.Cached || ev.Kind == pipeline.Done {
			r.recordOutputs(ctx, ev)
		}
	})
}

// RecordRunInfo stores a run's note, tags and environment (runs.BuildEnv
// plus env) as Execute does.
func RecordRunInfo(ctx context.Context, st *runs.Store, runID int64, note string, tags, env map[string]string) error {
	return recordRunInfo(ctx, st, runID, RunOptions{Note: note, Tags: tags, Env: env})
}
