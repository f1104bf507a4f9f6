package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// SetNote replaces a run's note (the user's free text, shown by `runs`).
func (s *Store) SetNote(ctx context.Context, runID int64, note string) error {
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET note = ? WHERE id = ?`, note, runID)
		return affected(res, err)
	})
	if err != nil {
		return fmt.Errorf("set note of run %d: %w", runID, err)
	}
	return nil
}

// SetTags adds tags to a run, replacing the value of a key it already has.
// Keys must be non-empty.
func (s *Store) SetTags(ctx context.Context, runID int64, tags map[string]string) error {
	keys := slices.Sorted(maps.Keys(tags))
	for _, k := range keys {
		if k == "" {
			return fmt.Errorf("tag run %d: empty tag key", runID)
		}
	}
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ?`, runID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		for _, k := range keys {
			if _, err := tx.ExecContext(ctx, `INSERT INTO run_tags (run_id, key, value) VALUES (?, ?, ?)
				ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value`, runID, k, tags[k]); err != nil {
				return fmt.Errorf("tag %q: %w", k, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tag run %d: %w", runID, err)
	}
	return nil
}

// Tags returns a run's tags.
func (s *Store) Tags(ctx context.Context, runID int64) (map[string]string, error) {
	all, err := s.tags(ctx, `WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("tags of run %d: %w", runID, err)
	}
	if all[runID] == nil {
		return map[string]string{}, nil
	}
	return all[runID], nil
}

func (s *Store) tags(ctx context.Context, where string, args ...any) (map[int64]map[string]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT run_id, key, value FROM run_tags `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]map[string]string{}
	for rows.Next() {
		var (
			id   int64
			k, v string
		)
		if err := rows.Scan(&id, &k, &v); err != nil {
			return nil, err
		}
		if out[id] == nil {
			out[id] = map[string]string{}
		}
		out[id][k] = v
	}
	return out, rows.Err()
}

// RunFilter selects runs; zero fields match everything.
type RunFilter struct {
	Experiment string
	Kind       string
	Tags       map[string]string // every tag must be present with this value
}

// RunListing is a run with its tags and the number of its trials in each
// status.
type RunListing struct {
	RunInfo
	Tags   map[string]string
	Counts map[string]int // trial status -> count
	Trials int
}

// Duration is the run's wall time: end minus start, or now minus start
// while it has no end time.
func (r *RunListing) Duration(now time.Time) time.Duration {
	if r.Started.IsZero() {
		return 0
	}
	end := r.Ended
	if end.IsZero() {
		end = now
	}
	return end.Sub(r.Started)
}

// ListRuns returns the runs matching f in creation order, with tags and
// trial counts.
func (s *Store) ListRuns(ctx context.Context, f RunFilter) ([]RunListing, error) {
	runs, err := s.Runs(ctx, f.Experiment)
	if err != nil {
		return nil, err
	}
	tags, err := s.tags(ctx, ``)
	if err != nil {
		return nil, fmt.Errorf("list runs: tags: %w", err)
	}
	counts := map[int64]map[string]int{}
	rows, err := s.r.QueryContext(ctx, `SELECT run_id, status, count(*) FROM trial_rows GROUP BY run_id, status`)
	if err != nil {
		return nil, fmt.Errorf("list runs: trial counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id     int64
			status string
			n      int
		)
		if err := rows.Scan(&id, &status, &n); err != nil {
			return nil, fmt.Errorf("list runs: trial counts: %w", err)
		}
		if counts[id] == nil {
			counts[id] = map[string]int{}
		}
		counts[id][status] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: trial counts: %w", err)
	}
	var out []RunListing
	for _, r := range runs {
		if f.Kind != "" && r.Kind != f.Kind {
			continue
		}
		t := tags[r.ID]
		if t == nil {
			t = map[string]string{}
		}
		match := true
		for k, v := range f.Tags {
			if got, ok := t[k]; !ok || got != v {
				match = false
			}
		}
		if !match {
			continue
		}
		l := RunListing{RunInfo: r, Tags: t, Counts: counts[r.ID]}
		if l.Counts == nil {
			l.Counts = map[string]int{}
		}
		for _, n := range l.Counts {
			l.Trials += n
		}
		out = append(out, l)
	}
	return out, nil
}

// Output is one file a trial's stage wrote into its cache entry. Trial ""
// marks outputs of stages shared by the run's trials (data preparation).
type Output struct {
	RunID    int64
	Trial    string
	Stage    string // pipeline node id
	CacheDir string // the cache entry directory
	File     string // slash-separated path relative to CacheDir
	SHA256   string
	Bytes    int64
}

// Path returns the output's file path.
func (o Output) Path() string { return o.CacheDir + "/" + o.File }

// RecordOutputs records output files in one transaction, replacing earlier
// records of the same (run, trial, stage, file).
func (s *Store) RecordOutputs(ctx context.Context, outs []Output) error {
	if len(outs) == 0 {
		return nil
	}
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO trial_output_rows (run_id, trial, stage, cache_dir, file, sha256, bytes)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, trial, stage, file) DO UPDATE SET
			cache_dir = excluded.cache_dir, sha256 = excluded.sha256, bytes = excluded.bytes`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, o := range outs {
			if o.Stage == "" || o.CacheDir == "" || o.File == "" {
				return fmt.Errorf("output %+v: empty stage, cache dir or file", o)
			}
			if _, err := st.ExecContext(ctx, o.RunID, o.Trial, o.Stage, o.CacheDir, o.File, o.SHA256, o.Bytes); err != nil {
				return fmt.Errorf("output %s of trial %q: %w", o.Path(), o.Trial, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record outputs of run %d: %w", outs[0].RunID, err)
	}
	return nil
}

// Outputs returns the recorded output files of a run ordered by trial,
// stage and file.
func (s *Store) Outputs(ctx context.Context, runID int64) ([]Output, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT trial, stage, cache_dir, file, sha256, bytes FROM trial_output_rows
		WHERE run_id = ? ORDER BY trial, stage, file`, runID)
	if err != nil {
		return nil, fmt.Errorf("outputs of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Output
	for rows.Next() {
		o := Output{RunID: runID}
		if err := rows.Scan(&o.Trial, &o.Stage, &o.CacheDir, &o.File, &o.SHA256, &o.Bytes); err != nil {
			return nil, fmt.Errorf("outputs of run %d: %w", runID, err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outputs of run %d: %w", runID, err)
	}
	return out, nil
}

// MarkPruned records that a pruned search stopped trial's point at rung
// (index) after step steps: its status becomes pruned (runs.StatusPruned),
// with rung and pruned_at_step. Marking it again is a no-op.
func (s *Store) MarkPruned(ctx context.Context, runID int64, trial string, rung, step int) error {
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE trial_rows SET status = 'pruned', rung = ?, pruned_at_step = ?
			WHERE run_id = ? AND trial = ? AND status IN ('done', 'cached', 'pruned')`, rung, step, runID, trial)
		return err
	})
	if err != nil {
		return fmt.Errorf("mark trial %q of run %d pruned: %w", trial, runID, err)
	}
	return nil
}

// Pruned is where a pruned search stopped a trial's point.
type Pruned struct {
	Rung int // the rung's index (0: the first)
	Step int // the rung's steps: pruned_at_step
}

// PrunedTrials returns run runID's pruned trials (runs.StatusPruned), by id.
func (s *Store) PrunedTrials(ctx context.Context, runID int64) (map[string]Pruned, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT trial, rung, pruned_at_step FROM trial_rows
		WHERE run_id = ? AND status = 'pruned' AND rung IS NOT NULL AND pruned_at_step IS NOT NULL`, runID)
	if err != nil {
		return nil, fmt.Errorf("pruned trials of run %d: %w", runID, err)
	}
	defer rows.Close()
	out := map[string]Pruned{}
	for rows.Next() {
		var id string
		var p Pruned
		if err := rows.Scan(&id, &p.Rung, &p.Step); err != nil {
			return nil, fmt.Errorf("pruned trials of run %d: %w", runID, err)
		}
		out[id] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pruned trials of run %d: %w", runID, err)
	}
	return out, nil
}

// SetTrialLog records the path of a trial's log file.
func (s *Store) SetTrialLog(ctx context.Context, runID int64, trial, path string) error {
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE trial_rows SET log_path = ? WHERE run_id = ? AND trial = ?`, path, runID, trial)
		return affected(res, err)
	})
	if err != nil {
		return fmt.Errorf("set log of trial %q of run %d: %w", trial, runID, err)
	}
	return nil
}

// TrialRow is a trial with everything recorded about it.
type TrialRow struct {
	Trial
	Seq     int64  // 1, 2, ... in enumeration order within the run (first recorded first)
	Name    string // the "name" parameter (variant and grid values), or the id
	LogPath string
	Summary map[string]float64
}

// TrialTable returns a run's trials in enumeration order (the order in
// which the run first recorded them), each with its summary metrics.
func (s *Store) TrialTable(ctx context.Context, runID int64) ([]TrialRow, error) {
	out, err := s.trialRows(ctx, runID, "seq, rowid")
	if err != nil {
		return nil, err
	}
	sums, err := s.Summaries(ctx, runID)
	if err != nil {
		return nil, err
	}
	for i := range out {
		t := &out[i]
		t.Summary = map[string]float64{}
		if m, ok := sums[t.ID]; ok {
			t.Summary = m
		}
		t.Name = trialName(t.ID, t.Params)
	}
	return out, nil
}

// trialName is the trial's "name" parameter when it is a JSON string, else
// its id.
func trialName(id string, params map[string]string) string {
	if v, ok := params["name"]; ok {
		var s string
		if err := jsonUnmarshalString(v, &s); err == nil && s != "" {
			return s
		}
	}
	return id
}

// DeleteResult is what deleting runs removed (or, on a dry run, would
// remove).
type DeleteResult struct {
	Runs []RunInfo
	// CacheDirs are the cache entries recorded as outputs of the deleted
	// runs that no remaining run records: the caller may remove them.
	// Entries are content-addressed, so an entry is known by its last two
	// path elements (<stage>/<key>), wherever its workdir was: a remaining
	// run that recorded the same entry elsewhere (a repro's scratch, a
	// workdir that moved) keeps it.
	CacheDirs []string
	// Files are the artifacts and trial logs of the deleted runs that no
	// remaining run records.
	Files []string
}

var errDryRun = errors.New("dry run")

// DeleteRuns deletes runs with everything recorded about them, in one
// transaction, and returns the cache entries and files that no remaining
// run uses. A running run is not deleted: it is an error. With dryRun the
// database is left unchanged and the result says what would go.
func (s *Store) DeleteRuns(ctx context.Context, ids []int64, dryRun bool) (*DeleteResult, error) {
	return s.DeleteOwnedRuns(ctx, ids, Owner{}, dryRun)
}

// DeleteOwnedRuns is DeleteRuns for a gc that owns the runs it deletes
// (it claimed them, so that no runner resumes one meanwhile): a run
// running under o (its token) is deleted; one running under any other
// owner is an error, and nothing is deleted.
func (s *Store) DeleteOwnedRuns(ctx context.Context, ids []int64, o Owner, dryRun bool) (*DeleteResult, error) {
	res := &DeleteResult{}
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		*res = DeleteResult{} // a retried transaction starts afresh
		dirs := map[string]bool{}
		files := map[string]bool{}
		for _, id := range ids {
			r, err := scanRun(tx.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("run %d: %w", id, ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("run %d: %w", id, err)
			}
			if r.Status == StatusRunning && (o.Token == "" || r.OwnerToken != o.Token) {
				return fmt.Errorf("run %d is running", id)
			}
			res.Runs = append(res.Runs, r)
			for q, set := range map[string]map[string]bool{
				`SELECT DISTINCT cache_dir FROM trial_output_rows WHERE run_id = ?`:   dirs,
				`SELECT path FROM artifacts WHERE run_id = ?`:                         files,
				`SELECT log_path FROM trial_rows WHERE run_id = ? AND log_path <> ''`: files,
			} {
				if err := collect(ctx, tx, set, q, id); err != nil {
					return fmt.Errorf("run %d: %w", id, err)
				}
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, id); err != nil {
				return fmt.Errorf("delete run %d: %w", id, err)
			}
		}
		kept := map[string]bool{}
		if err := collect(ctx, tx, kept, `SELECT DISTINCT cache_dir FROM trial_output_rows`); err != nil {
			return err
		}
		keptEntries := map[string]bool{}
		for d := range kept {
			keptEntries[entryName(d)] = true
		}
		for _, d := range slices.Sorted(maps.Keys(dirs)) {
			if !keptEntries[entryName(d)] {
				res.CacheDirs = append(res.CacheDirs, d)
			}
		}
		for _, f := range slices.Sorted(maps.Keys(files)) {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM artifacts WHERE path = ?1)
				+ (SELECT count(*) FROM trial_rows WHERE log_path = ?1)`, f).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				res.Files = append(res.Files, f)
			}
		}
		if dryRun {
			return errDryRun
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return nil, fmt.Errorf("delete runs: %w", err)
	}
	return res, nil
}

// entryName is a cache entry directory's identity: its last two path
// elements, <stage>/<key>.
func entryName(dir string) string {
	d := strings.TrimRight(filepath.ToSlash(dir), "/")
	if i := strings.LastIndexByte(d, '/'); i > 0 {
		if j := strings.LastIndexByte(d[:i], '/'); j >= 0 {
			return d[j+1:]
		}
	}
	return d
}

func collect(ctx context.Context, tx *sql.Tx, set map[string]bool, query string, args ...any) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		set[s] = true
	}
	return rows.Err()
}

// OldRuns returns the runs that keeping only the newest keep finished runs
// of each experiment and kind would delete, oldest first, of experiment
// ("" for all): the finished runs beyond the newest keep, and the failed
// or interrupted runs older than the keep-th newest finished one. A running
// run and a pinned one (Pin) are never among them, nor counted as kept.
func (s *Store) OldRuns(ctx context.Context, experiment string, keep int) ([]RunInfo, error) {
	if keep < 0 {
		return nil, fmt.Errorf("old runs: keep %d < 0", keep)
	}
	all, err := s.Runs(ctx, experiment)
	if err != nil {
		return nil, err
	}
	pinned, err := s.Pinned(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{} // finished runs, newest first
	var out []RunInfo
	for i := len(all) - 1; i >= 0; i-- {
		r := all[i]
		if r.Status == StatusRunning || pinned[r.ID] {
			continue
		}
		k := r.Experiment + "\x00" + r.Kind
		if r.Status == StatusFinished {
			seen[k]++
			if seen[k] > keep {
				out = append(out, r)
			}
		} else if seen[k] >= keep {
			out = append(out, r) // failed or interrupted, older than the kept finished runs
		}
	}
	slices.Reverse(out)
	return out, nil
}

// SettingDiff is one setting whose value differs between two runs: JSON
// texts, "" where the run has no such setting.
type SettingDiff struct {
	Key  string
	A, B string
}

// MetricDiff is one summary metric of a trial in two runs.
type MetricDiff struct {
	Trial    string // trial name
	Metric   string
	A, B     float64
	InA, InB bool
}

// Delta is B - A: NaN unless the metric is in both runs and finite in
// both (a difference to Never, a threshold never reached, has no size).
func (m MetricDiff) Delta() float64 {
	if !m.InA || !m.InB || math.IsInf(m.A, 0) || math.IsInf(m.B, 0) {
		return nan()
	}
	return m.B - m.A
}

// RunDiff compares two runs.
type RunDiff struct {
	A, B         RunInfo
	Settings     []SettingDiff // sorted by key
	Metrics      []MetricDiff  // trials in A's enumeration order then B's, metrics sorted by name
	OnlyA, OnlyB []string      // names of trials in one run only
}

// Diff compares the settings of two runs (their resolved configurations,
// flattened to dotted keys) and, for the trials matched by name, every
// summary metric.
func (s *Store) Diff(ctx context.Context, a, b int64) (*RunDiff, error) {
	ra, err := s.Run(ctx, a)
	if err != nil {
		return nil, err
	}
	rb, err := s.Run(ctx, b)
	if err != nil {
		return nil, err
	}
	d := &RunDiff{A: *ra, B: *rb}
	fa, err := flattenConfig(ra.ConfigJSON)
	if err != nil {
		return nil, fmt.Errorf("diff: run %d config: %w", a, err)
	}
	fb, err := flattenConfig(rb.ConfigJSON)
	if err != nil {
		return nil, fmt.Errorf("diff: run %d config: %w", b, err)
	}
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if fa[k] != fb[k] {
			d.Settings = append(d.Settings, SettingDiff{Key: k, A: fa[k], B: fb[k]})
		}
	}
	ta, err := s.TrialTable(ctx, a)
	if err != nil {
		return nil, err
	}
	tb, err := s.TrialTable(ctx, b)
	if err != nil {
		return nil, err
	}
	keyOf := matchKeys(ta, tb)
	byKey := map[string]*TrialRow{}
	for i := range tb {
		if k := keyOf(tb[i]); byKey[k] == nil {
			byKey[k] = &tb[i]
		}
	}
	matched := map[*TrialRow]bool{}
	for i := range ta {
		x := &ta[i]
		y, ok := byKey[keyOf(*x)]
		if !ok || matched[y] {
			d.OnlyA = append(d.OnlyA, x.Name)
			continue
		}
		matched[y] = true
		names := map[string]bool{}
		for m := range x.Summary {
			names[m] = true
		}
		for m := range y.Summary {
			names[m] = true
		}
		for _, m := range slices.Sorted(maps.Keys(names)) {
			va, ina := x.Summary[m]
			vb, inb := y.Summary[m]
			d.Metrics = append(d.Metrics, MetricDiff{Trial: x.Name, Metric: m, A: va, B: vb, InA: ina, InB: inb})
		}
	}
	for i := range tb {
		if !matched[&tb[i]] {
			d.OnlyB = append(d.OnlyB, tb[i].Name)
		}
	}
	return d, nil
}

// matchKeys returns the key by which Diff matches a trial of one run with
// one of the other: its settings, not its name (--set seed=1 fixes the
// seed and drops "seed=1" from the names), leaving out the name and the
// settings that tell the runs apart: those whose values in one run's
// trials and in the other's have none in common (lr 0.5 in every trial of
// one, 1 in the other's).
func matchKeys(ta, tb []TrialRow) func(TrialRow) string {
	values := func(ts []TrialRow) map[string]map[string]bool {
		out := map[string]map[string]bool{}
		for _, t := range ts {
			for k, v := range t.Params {
				if out[k] == nil {
					out[k] = map[string]bool{}
				}
				out[k][v] = true
			}
		}
		return out
	}
	va, vb := values(ta), values(tb)
	var keys []string
	for k, as := range va {
		bs, ok := vb[k]
		if !ok || k == "name" {
			continue
		}
		for v := range as {
			if bs[v] {
				keys = append(keys, k)
				break
			}
		}
	}
	slices.Sort(keys)
	return func(t TrialRow) string {
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(k)
			b.WriteByte(0)
			b.WriteString(t.Params[k])
			b.WriteByte(0)
		}
		return b.String()
	}
}

// flattenConfig turns a JSON configuration into dotted keys -> compact
// JSON values. Arrays whose elements are all objects with a string "name"
// or "key" field are keyed by it (variants.adam.settings.lr, grid.seed.values);
// other arrays are leaves.
func flattenConfig(text string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(text) == "" {
		return out, nil
	}
	v, err := decodeJSON(text)
	if err != nil {
		return nil, err
	}
	flatten("", v, out)
	return out, nil
}
