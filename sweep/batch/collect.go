package batch

import (
	"context"
	"fmt"

	"goldstone/runs"
)

// Collected is what Collect found.
type Collected struct {
	Trials      int
	Done        int
	Diverged    int // ended with results, their training diverged
	Failed      int
	Interrupted int
	Missing     int               // no result file yet
	Ingested    int               // attempts recorded by this call (0 when collecting again)
	Failures    map[string]string // trial id -> error, of failed trials
	Pending     []int             // indices of trials without a done, diverged or failed result
}

// Collect ingests d's result files into the results store: for every trial
// its latest execution sets the trial's status, error and times and, when
// done or diverged, its series and summary; every execution is recorded in
// trial_attempts, numbered 1, 2, ... in the order they ran (a submission's
// task, then its restarts by Slurm, then the next submission's: see Exec),
// with its job id. An execution already recorded is not ingested again, so
// collecting twice changes nothing, and a requeued task's new result is
// collected as the next attempt. The trials' rows are assumed to exist
// (the submission wrote them as pending).
func Collect(ctx context.Context, st *runs.Store, d Dir, m *Manifest) (*Collected, error) {
	files, err := d.ResultFiles()
	if err != nil {
		return nil, fmt.Errorf("collect run %d: %w", m.RunID, err)
	}
	prev, err := st.Attempts(ctx, m.RunID)
	if err != nil {
		return nil, err
	}
	type key struct {
		trial   string
		attempt int
	}
	have := make(map[key]bool, len(prev))
	for _, a := range prev {
		have[key{a.Trial, a.Attempt}] = true
	}
	out := &Collected{Trials: len(m.Trials), Failures: map[string]string{}}
	for _, tr := range m.Trials {
		as := files[tr.Index]
		if len(as) == 0 {
			out.Missing++
			out.Pending = append(out.Pending, tr.Index)
			continue
		}
		var latest *Result
		for k, ex := range as {
			a := k + 1 // the execution's number
			r, err := ReadResult(d, tr.Index, ex)
			if err != nil {
				return nil, fmt.Errorf("collect run %d: %w", m.RunID, err)
			}
			if r.Trial != tr.ID || r.RunID != m.RunID {
				return nil, fmt.Errorf("collect run %d: %s holds trial %s of run %d, the manifest says trial %s",
					m.RunID, d.Result(tr.Index, ex), r.Trial, r.RunID, tr.ID)
			}
			if have[key{tr.ID, a}] {
				if k == len(as)-1 {
					latest = r
				}
				continue
			}
			if k == len(as)-1 {
				// The latest attempt decides the trial: ingest it before
				// recording the attempt, so a crash in between is redone.
				if err := ingest(ctx, st, m, &tr, r); err != nil {
					return nil, err
				}
				latest = r
			}
			if _, err := st.RecordAttempt(ctx, runs.Attempt{RunID: m.RunID, Trial: tr.ID, Attempt: a, Index: tr.Index,
				JobID: r.JobID, Host: r.Host, Status: attemptStatus(r.Status), Error: r.Error, Started: r.Started, Ended: r.Ended,
				WallSeconds: r.WallSeconds}); err != nil {
				return nil, err
			}
			out.Ingested++
		}
		switch latest.Status {
		case Done:
			out.Done++
		case Diverged:
			out.Diverged++
		case Failed:
			out.Failed++
			out.Failures[tr.ID] = latest.Error
		default:
			out.Interrupted++
			out.Pending = append(out.Pending, tr.Index)
		}
	}
	return out, nil
}

// attemptStatus is how trial_attempts records a task's status: a task
// whose trial diverged ran to its end, "done" (its error says where the
// training diverged; the trial's own status is "diverged").
func attemptStatus(status string) string {
	if status == Diverged {
		return Done
	}
	return status
}

// ingest writes the outcome of a trial's latest attempt.
func ingest(ctx context.Context, st *runs.Store, m *Manifest, tr *Trial, r *Result) error {
	if HasResult(r.Status) {
		for _, c := range r.Series {
			for i, step := range c.Steps {
				st.Metric(m.RunID, tr.ID, c.Metric, step, float64(c.Values[i]))
			}
		}
		for _, k := range r.SortedSummary() {
			st.Summary(m.RunID, tr.ID, k, float64(r.Summary[k]))
		}
		if err := st.Flush(ctx); err != nil {
			return fmt.Errorf("collect trial %s of run %d: %w", tr.ID, m.RunID, err)
		}
	}
	return st.UpsertTrial(ctx, runs.Trial{RunID: m.RunID, ID: tr.ID, Params: tr.Params, Seed: tr.Seed,
		Status: r.Status, Error: r.Error, Started: r.Started, Ended: r.Ended, WallSeconds: r.WallSeconds})
}
