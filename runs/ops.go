package runs

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"goldstone/internal/fault"
)

// CreateRun inserts a run and returns its id. Empty Kind and Status default
// to KindRun and StatusRunning, a zero Started to now; info.ID is ignored.
// Its owner is info's Host, PID, OwnerStarted and OwnerToken (SetOwner).
func (s *Store) CreateRun(ctx context.Context, info RunInfo) (int64, error) {
	return s.createRun(ctx, info, nil)
}

// createRun is CreateRun with a check that runs first in the same
// transaction (nil: none).
func (s *Store) createRun(ctx context.Context, info RunInfo, check func(ctx context.Context, tx *sql.Tx) error) (int64, error) {
	if info.Kind == "" {
		info.Kind = KindRun
	}
	if info.Status == "" {
		info.Status = StatusRunning
	}
	if info.Started.IsZero() {
		info.Started = time.Now()
	}
	if info.Kind != KindRun && info.Kind != KindRepro {
		return 0, fmt.Errorf("create run %q: invalid kind %q", info.Experiment, info.Kind)
	}
	if !validRunStatus(info.Status) {
		return 0, fmt.Errorf("create run %q: invalid status %q", info.Experiment, info.Status)
	}
	var id int64
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if check != nil {
			if err := check(ctx, tx); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO runs (experiment, kind, config_json, config_hash, status,
			started_at, ended_at, git_commit, git_dirty, go_version, os, arch, cpu_model, gomaxprocs, host, pid, note,
			owner_started, owner_token)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			info.Experiment, info.Kind, info.ConfigJSON, info.ConfigHash, info.Status,
			encodeTime(info.Started), encodeTime(info.Ended), info.GitCommit, info.GitDirty,
			info.GoVersion, info.OS, info.Arch, info.CPUModel, info.GOMAXPROCS, info.Host, info.PID, info.Note,
			info.OwnerStarted, info.OwnerToken)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	var oe *OwnedError
	if errors.As(err, &oe) {
		return 0, oe // it names the run
	}
	if err != nil {
		return 0, fmt.Errorf("create run %q: %w", info.Experiment, err)
	}
	return id, nil
}

// FinishRun sets a run's final status and end time (now). A non-empty note
// replaces the run's note; "" keeps it.
func (s *Store) FinishRun(ctx context.Context, id int64, status, note string) error {
	if !validRunStatus(status) {
		return fmt.Errorf("finish run %d: invalid status %q", id, status)
	}
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, ended_at = ?,
			note = CASE WHEN ? = '' THEN note ELSE ? END WHERE id = ?`,
			status, encodeTime(time.Now()), note, note, id)
		return affected(res, err)
	})
	if err != nil {
		return fmt.Errorf("finish run %d: %w", id, err)
	}
	return nil
}

// SetRunStatus changes a run's status. Setting StatusRunning (on resume)
// clears the end time; other statuses leave it as is.
func (s *Store) SetRunStatus(ctx context.Context, id int64, status string) error {
	if !validRunStatus(status) {
		return fmt.Errorf("set run %d status: invalid status %q", id, status)
	}
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?,
			ended_at = CASE WHEN ? = 'running' THEN NULL ELSE ended_at END WHERE id = ?`, status, status, id)
		return affected(res, err)
	})
	if err != nil {
		return fmt.Errorf("set run %d status: %w", id, err)
	}
	return nil
}

// SetReport records the state of a run's report: ReportWriting when it
// begins, ReportDone or ReportFailed (with the error's text) when it ends;
// "" clears it.
func (s *Store) SetReport(ctx context.Context, id int64, state, errText string) error {
	switch state {
	case "", ReportWriting, ReportDone, ReportFailed:
	default:
		return fmt.Errorf("set report of run %d: invalid state %q", id, state)
	}
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET report_state = ?, report_error = ? WHERE id = ?`, state, errText, id)
		return affected(res, err)
	})
	if err != nil {
		return fmt.Errorf("set report of run %d: %w", id, err)
	}
	return nil
}

func affected(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// UpsertTrial inserts or fully replaces the trial (t.RunID, t.ID), except
// that a nil Params leaves the stored parameters unchanged (none for a new
// trial). Each Params value must be valid JSON; it is stored compacted.
func (s *Store) UpsertTrial(ctx context.Context, t Trial) error {
	u, err := prepareTrial(t)
	if err != nil {
		return err
	}
	err = s.do(ctx, func(ctx context.Context, tx *sql.Tx) error { return s.upsertTrialTx(ctx, tx, u) })
	if err != nil {
		return fmt.Errorf("upsert trial %q of run %d: %w", t.ID, t.RunID, err)
	}
	return nil
}

// UpsertTrials is UpsertTrial for many trials, in one transaction with
// its statements prepared once: recording the 10,000 trials of a large
// sweep as pending takes one transaction, not 10,000.
func (s *Store) UpsertTrials(ctx context.Context, ts []Trial) error {
	us := make([]*trialUpsert, len(ts))
	for i, t := range ts {
		u, err := prepareTrial(t)
		if err != nil {
			return err
		}
		us[i] = u
	}
	if len(us) == 0 {
		return nil
	}
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// seq numbers a run's new trials after its others, in order.
		next := map[int64]int64{}
		have := map[int64]map[string]bool{}
		for _, u := range us {
			id := u.t.RunID
			if have[id] != nil {
				continue
			}
			set := map[string]bool{}
			if err := collect(ctx, tx, set, `SELECT trial FROM trial_rows WHERE run_id = ?`, id); err != nil {
				return err
			}
			have[id] = set
			var n int64
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM trial_rows WHERE run_id = ?`, id).Scan(&n); err != nil {
				return err
			}
			next[id] = n + 1
		}
		ins, err := tx.PrepareContext(ctx, `INSERT INTO trial_rows (run_id, trial, params_json, seed, status, error,
			started_at, ended_at, wall_seconds, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id, trial) DO UPDATE SET
				params_json = CASE WHEN ? THEN excluded.params_json ELSE params_json END,
				seed = excluded.seed, status = excluded.status, error = excluded.error,
				started_at = excluded.started_at, ended_at = excluded.ended_at,
				wall_seconds = excluded.wall_seconds`)
		if err != nil {
			return err
		}
		defer ins.Close()
		del, err := tx.PrepareContext(ctx, `DELETE FROM trial_param_rows WHERE run_id = ? AND trial = ?`)
		if err != nil {
			return err
		}
		defer del.Close()
		par, err := tx.PrepareContext(ctx, `INSERT INTO trial_param_rows (run_id, trial, key, value) VALUES (?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer par.Close()
		var keys []string
		for _, u := range us {
			t := u.t
			var pj any = "{}"
			if t.Params != nil {
				pj = u.params
			}
			seq := next[t.RunID]
			existed := have[t.RunID][t.ID]
			if !existed {
				next[t.RunID]++
				have[t.RunID][t.ID] = true
			}
			if _, err := ins.ExecContext(ctx, t.RunID, t.ID, pj, t.Seed, t.Status, t.Error,
				encodeTime(t.Started), encodeTime(t.Ended), t.WallSeconds, seq, t.Params != nil); err != nil {
				return fmt.Errorf("trial %q: %w", t.ID, err)
			}
			if t.Params == nil {
				continue
			}
			if existed {
				if _, err := del.ExecContext(ctx, t.RunID, t.ID); err != nil {
					return err
				}
			}
			for i, k := range u.keys {
				if _, err := par.ExecContext(ctx, t.RunID, t.ID, k, u.vals[i]); err != nil {
					return fmt.Errorf("trial %q: param %q: %w", t.ID, k, err)
				}
			}
			keys = append(keys, u.keys...)
		}
		if s.view.newParams(keys) {
			return refreshTrialsView(ctx, tx, &s.view)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("upsert %d trials of run %d: %w", len(ts), ts[0].RunID, err)
	}
	return nil
}

// trialUpsert is a Trial checked and with its parameters compacted, ready
// for upsertTrialTx.
type trialUpsert struct {
	t      Trial
	keys   []string // parameter keys, sorted
	vals   []string // their compacted JSON values
	params string   // the params_json object
}

func prepareTrial(t Trial) (*trialUpsert, error) {
	if t.ID == "" {
		return nil, fmt.Errorf("upsert trial of run %d: empty trial id", t.RunID)
	}
	if !validTrialStatus(t.Status) {
		return nil, fmt.Errorf("upsert trial %q of run %d: invalid status %q", t.ID, t.RunID, t.Status)
	}
	u := &trialUpsert{t: t}
	if t.Params != nil {
		u.keys = make([]string, 0, len(t.Params))
		for k := range t.Params {
			u.keys = append(u.keys, k)
		}
		slices.Sort(u.keys)
		u.vals = make([]string, len(u.keys))
		obj := make(map[string]json.RawMessage, len(u.keys))
		for i, k := range u.keys {
			var buf bytes.Buffer
			if err := json.Compact(&buf, []byte(t.Params[k])); err != nil {
				return nil, fmt.Errorf("upsert trial %q of run %d: param %q: value %q is not JSON: %w", t.ID, t.RunID, k, t.Params[k], err)
			}
			u.vals[i] = buf.String()
			obj[k] = buf.Bytes()
		}
		b, err := json.Marshal(obj) // encoding/json sorts map keys
		if err != nil {
			return nil, fmt.Errorf("upsert trial %q of run %d: params: %w", t.ID, t.RunID, err)
		}
		u.params = string(b)
	}
	return u, nil
}

// upsertTrialTx writes a prepared trial inside tx.
func (s *Store) upsertTrialTx(ctx context.Context, tx *sql.Tx, u *trialUpsert) error {
	t := u.t
	var pj any = "{}"
	if t.Params != nil {
		pj = u.params
	}
	// seq numbers a new trial after the run's others; an update keeps it.
	if _, err := tx.ExecContext(ctx, `INSERT INTO trial_rows (run_id, trial, params_json, seed, status, error,
		started_at, ended_at, wall_seconds, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,
		(SELECT count(*) + 1 FROM trial_rows WHERE run_id = ?1))
		ON CONFLICT (run_id, trial) DO UPDATE SET
			params_json = CASE WHEN ? THEN excluded.params_json ELSE params_json END,
			seed = excluded.seed, status = excluded.status, error = excluded.error,
			started_at = excluded.started_at, ended_at = excluded.ended_at,
			wall_seconds = excluded.wall_seconds`,
		t.RunID, t.ID, pj, t.Seed, t.Status, t.Error,
		encodeTime(t.Started), encodeTime(t.Ended), t.WallSeconds, t.Params != nil); err != nil {
		return err
	}
	if t.Params == nil {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM trial_param_rows WHERE run_id = ? AND trial = ?`, t.RunID, t.ID); err != nil {
		return err
	}
	if len(u.keys) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO trial_param_rows (run_id, trial, key, value) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for i, k := range u.keys {
		if _, err := st.ExecContext(ctx, t.RunID, t.ID, k, u.vals[i]); err != nil {
			return fmt.Errorf("param %q: %w", k, err)
		}
	}
	if s.view.newParams(u.keys) {
		return refreshTrialsView(ctx, tx, &s.view)
	}
	return nil
}

// MetricPoint is one point of a trial's step-wise series (RecordTrial).
type MetricPoint struct {
	Name  string
	Step  int
	Value float64
}

// RecordTrial records a finished trial whole, in one transaction: its
// series (replacing any points recorded before for it), its summary
// values and its row t (usually StatusDone). Either all of it is committed
// or, when it fails, nothing: a trial is never left "done" with half its
// series, nor with its series and no status. Like every write it is tried
// again while the database is locked or its disk full (OpenOptions.Wait).
func (s *Store) RecordTrial(ctx context.Context, t Trial, series []MetricPoint, summary map[string]float64) error {
	u, err := prepareTrial(t)
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(summary))
	err = s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM metrics WHERE run_id = ? AND trial = ?`, `DELETE FROM summaries WHERE run_id = ? AND trial = ?`} {
			if _, err := tx.ExecContext(ctx, q, t.RunID, t.ID); err != nil {
				return err
			}
		}
		many, one := tx.StmtContext(ctx, s.stmtMetrics), tx.StmtContext(ctx, s.stmtMetric)
		args := make([]any, 0, 6*metricChunk)
		i := 0
		for ; i+metricChunk <= len(series); i += metricChunk {
			args = args[:0]
			for _, p := range series[i : i+metricChunk] {
				v, k := encodeValue(p.Value)
				args = append(args, t.RunID, t.ID, p.Name, p.Step, v, k)
			}
			if _, err := many.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("series: %w", err)
			}
		}
		for _, p := range series[i:] {
			v, k := encodeValue(p.Value)
			if _, err := one.ExecContext(ctx, t.RunID, t.ID, p.Name, p.Step, v, k); err != nil {
				return fmt.Errorf("series %s step %d: %w", p.Name, p.Step, err)
			}
		}
		sum := tx.StmtContext(ctx, s.stmtSummary)
		newMetric := false
		for _, n := range names {
			v, k := encodeValue(summary[n])
			if _, err := sum.ExecContext(ctx, t.RunID, t.ID, n, v, k); err != nil {
				return fmt.Errorf("summary %s: %w", n, err)
			}
			newMetric = newMetric || !s.view.metrics[n]
		}
		if newMetric {
			if err := refreshTrialsView(ctx, tx, &s.view); err != nil {
				return err
			}
		}
		if err := s.upsertTrialTx(ctx, tx, u); err != nil {
			return err
		}
		fault.Point("runs:trial")
		return nil
	})
	if err != nil {
		return fmt.Errorf("record trial %q of run %d: %w", t.ID, t.RunID, err)
	}
	return nil
}

// MarkStale marks the run's trials still "running" as "interrupted" (with
// an error text if they had none). Call it when resuming a run whose
// process died, before rescheduling its trials.
func (s *Store) MarkStale(ctx context.Context, runID int64) error {
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE trial_rows SET status = 'interrupted',
			error = CASE WHEN error = '' THEN 'interrupted: still running when its run stopped' ELSE error END
			WHERE run_id = ? AND status = 'running'`, runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("mark stale trials of run %d: %w", runID, err)
	}
	return nil
}

// MarkUnended marks the trials of a run that stops before they ended
// (Ctrl-C) "interrupted", in one statement: those still "running" and
// those "pending" without a reason, which never started. (A sweep of
// 10,000 trials must not take 10,000 transactions to stop.)
func (s *Store) MarkUnended(ctx context.Context, runID int64) error {
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE trial_rows SET status = 'interrupted',
			error = CASE WHEN status = 'pending' THEN 'interrupted'
				WHEN error = '' THEN 'interrupted: still running when its run stopped' ELSE error END
			WHERE run_id = ? AND (status = 'running' OR (status = 'pending' AND error = ''))`, runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("mark the unended trials of run %d: %w", runID, err)
	}
	return nil
}

// MarkRunInterrupted marks a run that is still "running" under owner
// interrupted, in one transaction with its trials still running (they
// become interrupted, with errText as their error if they had none): for a
// run whose owner's process is gone (Owner.Liveness). It reports whether
// the run was marked; a run that ended meanwhile, or that another runner
// claimed since the caller read its owner, is left as it is.
func (s *Store) MarkRunInterrupted(ctx context.Context, runID int64, owner Owner, errText string) (bool, error) {
	var changed bool
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'interrupted', ended_at = ?
			WHERE id = ? AND status = 'running' AND host = ? AND pid = ? AND owner_token = ?`,
			encodeTime(time.Now()), runID, owner.Host, owner.PID, owner.Token)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if changed = n > 0; err != nil || !changed {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE trial_rows SET status = 'interrupted',
			error = CASE WHEN error = '' THEN ? ELSE error END
			WHERE run_id = ? AND status = 'running'`, errText, runID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("mark run %d interrupted: %w", runID, err)
	}
	return changed, nil
}

// EndStatus is the status a run ends with when it was not interrupted and
// no data error stopped it, from its trials: finished if every trial is
// done (or cached) or diverged (a result of the algorithm, not a failure of
// the run), failed if some failed and the others ended so, interrupted if
// some never ended (they are resumed by the next run).
func (s *Store) EndStatus(ctx context.Context, runID int64) (string, error) {
	var total, ok, failed int
	err := s.r.QueryRowContext(ctx, `SELECT count(*),
		coalesce(sum(status IN ('done', 'cached', 'diverged', 'pruned')), 0), coalesce(sum(status = 'failed'), 0)
		FROM trial_rows WHERE run_id = ?`, runID).Scan(&total, &ok, &failed)
	if err != nil {
		return "", fmt.Errorf("end status of run %d: %w", runID, err)
	}
	switch {
	case ok+failed < total:
		return StatusInterrupted, nil
	case failed > 0:
		return StatusFailed, nil
	}
	return StatusFinished, nil
}

// ResumeTrials prepares the trials of a run that is resumed, in one
// transaction: trials still "running" (their process died) become
// "interrupted"; with retryFailed, failed trials become "pending" and lose
// their error. It returns the trials that keep their outcome and must not
// run again: the done (or cached) and diverged ones (a divergence is
// deterministic: retrying it gives it again), and the failed ones unless
// retryFailed.
func (s *Store) ResumeTrials(ctx context.Context, runID int64, retryFailed bool) (keep map[string]string, err error) {
	keep = map[string]string{}
	err = s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		clear(keep) // a retried transaction starts afresh
		if _, err := tx.ExecContext(ctx, `UPDATE trial_rows SET status = 'interrupted',
			error = CASE WHEN error = '' THEN 'interrupted: still running when its run stopped' ELSE error END
			WHERE run_id = ? AND status = 'running'`, runID); err != nil {
			return err
		}
		if retryFailed {
			if _, err := tx.ExecContext(ctx, `UPDATE trial_rows SET status = 'pending', error = '', ended_at = NULL
				WHERE run_id = ? AND status = 'failed'`, runID); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, `SELECT trial, status FROM trial_rows
			WHERE run_id = ? AND status IN ('done', 'cached', 'diverged', 'pruned', 'failed')`, runID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, st string
			if err := rows.Scan(&id, &st); err != nil {
				return err
			}
			keep[id] = st
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("resume trials of run %d: %w", runID, err)
	}
	return keep, nil
}
