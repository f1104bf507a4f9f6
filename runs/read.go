package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

const runColumns = `id, experiment, kind, config_json, config_hash, status, started_at, ended_at,
	git_commit, git_dirty, go_version, os, arch, cpu_model, gomaxprocs, host, pid, note, report_state, report_error,
	owner_started, owner_token`

type scanner interface{ Scan(dst ...any) error }

func scanRun(sc scanner) (RunInfo, error) {
	var (
		r              RunInfo
		started, ended sql.NullString
	)
	if err := sc.Scan(&r.ID, &r.Experiment, &r.Kind, &r.ConfigJSON, &r.ConfigHash, &r.Status, &started, &ended,
		&r.GitCommit, &r.GitDirty, &r.GoVersion, &r.OS, &r.Arch, &r.CPUModel, &r.GOMAXPROCS, &r.Host, &r.PID, &r.Note,
		&r.ReportState, &r.ReportError, &r.OwnerStarted, &r.OwnerToken); err != nil {
		return r, err
	}
	var err error
	if r.Started, err = decodeTime(started); err != nil {
		return r, fmt.Errorf("run %d started_at: %w", r.ID, err)
	}
	if r.Ended, err = decodeTime(ended); err != nil {
		return r, fmt.Errorf("run %d ended_at: %w", r.ID, err)
	}
	return r, nil
}

// Run returns the run with the given id, or an error wrapping ErrNotFound.
func (s *Store) Run(ctx context.Context, id int64) (*RunInfo, error) {
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", id, err)
	}
	return &r, nil
}

// LatestRun returns the most recently created run of experiment with the
// given kind ("" matches any kind), or nil, nil if there is none.
func (s *Store) LatestRun(ctx context.Context, experiment, kind string) (*RunInfo, error) {
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs
		WHERE experiment = ? AND (? = '' OR kind = ?) ORDER BY id DESC LIMIT 1`, experiment, kind, kind))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("latest run of %q: %w", experiment, err)
	}
	return &r, nil
}

// Runs returns the runs of experiment ("" for all) in creation order.
func (s *Store) Runs(ctx context.Context, experiment string) ([]RunInfo, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+runColumns+` FROM runs
		WHERE ? = '' OR experiment = ? ORDER BY id`, experiment, experiment)
	if err != nil {
		return nil, fmt.Errorf("runs of %q: %w", experiment, err)
	}
	defer rows.Close()
	var out []RunInfo
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("runs of %q: %w", experiment, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("runs of %q: %w", experiment, err)
	}
	return out, nil
}

// Trials returns the trials of a run ordered by trial id, each with a
// non-nil Params.
func (s *Store) Trials(ctx context.Context, runID int64) ([]Trial, error) {
	rows, err := s.trialRows(ctx, runID, "trial")
	if err != nil {
		return nil, err
	}
	out := make([]Trial, len(rows))
	for i := range rows {
		out[i] = rows[i].Trial
	}
	return out, nil
}

// TrialStatuses returns a run's trials ordered by id with their status
// and error only (Params nil): what a run's outcome counts, without
// reading every parameter of a large sweep.
func (s *Store) TrialStatuses(ctx context.Context, runID int64) ([]Trial, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT trial, status, error FROM trial_rows WHERE run_id = ? ORDER BY trial`, runID)
	if err != nil {
		return nil, fmt.Errorf("trial statuses of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Trial
	for rows.Next() {
		t := Trial{RunID: runID}
		if err := rows.Scan(&t.ID, &t.Status, &t.Error); err != nil {
			return nil, fmt.Errorf("trial statuses of run %d: %w", runID, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("trial statuses of run %d: %w", runID, err)
	}
	return out, nil
}

// trialRows reads a run's trials with their parameters (Params non-nil),
// enumeration numbers and log paths, in the given ORDER BY clause.
func (s *Store) trialRows(ctx context.Context, runID int64, order string) ([]TrialRow, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq, trial, seed, status, error, started_at, ended_at, wall_seconds, log_path
		FROM trial_rows WHERE run_id = ? ORDER BY `+order, runID)
	if err != nil {
		return nil, fmt.Errorf("trials of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []TrialRow
	for rows.Next() {
		t := TrialRow{Trial: Trial{RunID: runID, Params: map[string]string{}}}
		var started, ended sql.NullString
		if err := rows.Scan(&t.Seq, &t.ID, &t.Seed, &t.Status, &t.Error, &started, &ended, &t.WallSeconds, &t.LogPath); err != nil {
			return nil, fmt.Errorf("trials of run %d: %w", runID, err)
		}
		if t.Started, err = decodeTime(started); err != nil {
			return nil, fmt.Errorf("trials of run %d: trial %q: %w", runID, t.ID, err)
		}
		if t.Ended, err = decodeTime(ended); err != nil {
			return nil, fmt.Errorf("trials of run %d: trial %q: %w", runID, t.ID, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("trials of run %d: %w", runID, err)
	}
	params, err := s.TrialParams(ctx, runID)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if p, ok := params[out[i].ID]; ok {
			out[i].Params = p
		}
	}
	return out, nil
}

// TrialParams returns the parameters of every trial of a run that has any:
// trial id -> key -> JSON value text.
func (s *Store) TrialParams(ctx context.Context, runID int64) (map[string]map[string]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT trial, key, value FROM trial_param_rows WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("params of run %d: %w", runID, err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var trial, key, value string
		if err := rows.Scan(&trial, &key, &value); err != nil {
			return nil, fmt.Errorf("params of run %d: %w", runID, err)
		}
		m := out[trial]
		if m == nil {
			m = map[string]string{}
			out[trial] = m
		}
		m[key] = value
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("params of run %d: %w", runID, err)
	}
	return out, nil
}

// Summaries returns the committed summaries of a run: trial id -> name ->
// value, with NaN, ±Inf and -0 restored exactly.
func (s *Store) Summaries(ctx context.Context, runID int64) (map[string]map[string]float64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT trial, name, value, kind FROM summaries WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("summaries of run %d: %w", runID, err)
	}
	defer rows.Close()
	out := map[string]map[string]float64{}
	for rows.Next() {
		var (
			trial, name, kind string
			v                 sql.NullFloat64
		)
		if err := rows.Scan(&trial, &name, &v, &kind); err != nil {
			return nil, fmt.Errorf("summaries of run %d: %w", runID, err)
		}
		f, err := decodeValue(v, kind)
		if err != nil {
			return nil, fmt.Errorf("summaries of run %d: trial %q name %q: %w", runID, trial, name, err)
		}
		m := out[trial]
		if m == nil {
			m = map[string]float64{}
			out[trial] = m
		}
		m[name] = f
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("summaries of run %d: %w", runID, err)
	}
	return out, nil
}

// Series returns the committed points of one metric of one trial, ordered
// by step, with NaN, ±Inf and -0 restored exactly.
func (s *Store) Series(ctx context.Context, runID int64, trial, name string) ([]Point, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT step, value, kind FROM metrics
		WHERE run_id = ? AND trial = ? AND name = ? ORDER BY step`, runID, trial, name)
	if err != nil {
		return nil, fmt.Errorf("series %q of run %d trial %q: %w", name, runID, trial, err)
	}
	defer rows.Close()
	var out []Point
	for rows.Next() {
		var (
			p    Point
			v    sql.NullFloat64
			kind string
		)
		if err := rows.Scan(&p.Step, &v, &kind); err != nil {
			return nil, fmt.Errorf("series %q of run %d trial %q: %w", name, runID, trial, err)
		}
		if p.Value, err = decodeValue(v, kind); err != nil {
			return nil, fmt.Errorf("series %q of run %d trial %q step %d: %w", name, runID, trial, p.Step, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("series %q of run %d trial %q: %w", name, runID, trial, err)
	}
	return out, nil
}

// Artifacts returns the committed artifacts of a run ordered by trial, path.
func (s *Store) Artifacts(ctx context.Context, runID int64) ([]Artifact, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT trial, path, sha256, kind FROM artifacts
		WHERE run_id = ? ORDER BY trial, path`, runID)
	if err != nil {
		return nil, fmt.Errorf("artifacts of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Artifact
	for rows.Next() {
		a := Artifact{RunID: runID}
		if err := rows.Scan(&a.Trial, &a.Path, &a.SHA256, &a.Kind); err != nil {
			return nil, fmt.Errorf("artifacts of run %d: %w", runID, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("artifacts of run %d: %w", runID, err)
	}
	return out, nil
}

// SeriesNames returns the names of the metric series a run recorded,
// sorted.
func (s *Store) SeriesNames(ctx context.Context, runID int64) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT name FROM metrics WHERE run_id = ? ORDER BY name`, runID)
	if err != nil {
		return nil, fmt.Errorf("series names of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("series names of run %d: %w", runID, err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("series names of run %d: %w", runID, err)
	}
	return out, nil
}

// RunSeries returns every committed series point of a run: trial id ->
// metric -> points ordered by step, with NaN, ±Inf and -0 restored
// exactly; one query, for comparing whole runs (repro, verify).
func (s *Store) RunSeries(ctx context.Context, runID int64) (map[string]map[string][]Point, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT trial, name, step, value, kind FROM metrics
		WHERE run_id = ? ORDER BY trial, name, step`, runID)
	if err != nil {
		return nil, fmt.Errorf("series of run %d: %w", runID, err)
	}
	defer rows.Close()
	out := map[string]map[string][]Point{}
	for rows.Next() {
		var (
			trial, name, kind string
			p                 Point
			v                 sql.NullFloat64
		)
		if err := rows.Scan(&trial, &name, &p.Step, &v, &kind); err != nil {
			return nil, fmt.Errorf("series of run %d: %w", runID, err)
		}
		if p.Value, err = decodeValue(v, kind); err != nil {
			return nil, fmt.Errorf("series %q of run %d trial %q step %d: %w", name, runID, trial, p.Step, err)
		}
		m := out[trial]
		if m == nil {
			m = map[string][]Point{}
			out[trial] = m
		}
		m[name] = append(m[name], p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("series of run %d: %w", runID, err)
	}
	return out, nil
}
