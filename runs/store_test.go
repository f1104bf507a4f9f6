package runs

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "dir", "results.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, path
}

func mustRun(t testing.TB, s *Store, experiment string) int64 {
	t.Helper()
	id, err := s.CreateRun(context.Background(), RunInfo{Experiment: experiment})
	if err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
	return id
}

func mustFlush(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Flush(context.Background()); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

func count(t testing.TB, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestOpenTwiceIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	id := mustRun(t, s, "e")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s2, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		if n := count(t, s2.DB(), `SELECT COUNT(*) FROM schema_version`); n != len(migrations) {
			t.Errorf("schema_version rows = %d, want %d", n, len(migrations))
		}
		if r, err := s2.Run(ctx, id); err != nil || r.Experiment != "e" {
			t.Errorf("Run after reopen = %+v, %v", r, err)
		}
		var mode string
		if err := s2.DB().QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode = %q, %v; want wal", mode, err)
		}
		if err := s2.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestNewerSchemaRejected(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_version VALUES (?, 'future', '')`, len(migrations)+1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open of a newer schema: err = %v, want a 'newer' error", err)
	}
}

func TestConcurrentProducers(t *testing.T) {
	s, _ := openTemp(t)
	run := mustRun(t, s, "conc")
	const producers, steps = 8, 1500 // 12000 rows: more than two full batches
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			trial := fmt.Sprintf("t%d", p)
			for i := range steps {
				s.Metric(run, trial, "loss", i, float64(p*steps+i))
			}
			s.Summary(run, trial, "final", float64(p))
		})
	}
	wg.Wait()
	mustFlush(t, s)
	if n := count(t, s.DB(), `SELECT COUNT(*) FROM metrics WHERE run_id = ?`, run); n != producers*steps {
		t.Errorf("metric rows = %d, want %d", n, producers*steps)
	}
	var sum float64
	if err := s.DB().QueryRowContext(context.Background(), `SELECT SUM(value) FROM series WHERE run_id = ?`, run).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	n := float64(producers * steps)
	if want := n * (n - 1) / 2; sum != want {
		t.Errorf("sum of values = %v, want %v", sum, want)
	}
	pts, err := s.Series(context.Background(), run, "t3", "loss")
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != steps || pts[0] != (Point{0, 3 * steps}) || pts[steps-1] != (Point{steps - 1, 4*steps - 1}) {
		t.Errorf("Series t3: %d points, first %v last %v", len(pts), pts[0], pts[len(pts)-1])
	}
	sums, err := s.Summaries(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != producers || sums["t5"]["final"] != 5 {
		t.Errorf("Summaries = %v", sums)
	}
}

func sameFloat(a, b float64) bool {
	if math.IsNaN(a) {
		return math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

func TestNonFiniteRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := mustRun(t, s, "nf")
	tests := []struct {
		name string
		v    float64
		view any // expected value column of the views; nil = NULL
	}{
		{"nan", math.NaN(), nil},
		{"posinf", math.Inf(1), math.Inf(1)},
		{"neginf", math.Inf(-1), math.Inf(-1)},
		{"negzero", math.Copysign(0, -1), 0.0},
		{"zero", 0, 0.0},
		{"one", 1, 1.0},
		{"max", math.MaxFloat64, math.MaxFloat64},
		{"tiny", -math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64},
		{"third", 1.0 / 3, 1.0 / 3},
	}
	for i, tt := range tests {
		s.Metric(run, "t", tt.name, i, tt.v)
		s.Summary(run, "t", tt.name, tt.v)
	}
	mustFlush(t, s)
	sums, err := s.Summaries(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		if got := sums["t"][tt.name]; !sameFloat(got, tt.v) {
			t.Errorf("Summaries %s = %v, want %v", tt.name, got, tt.v)
		}
		pts, err := s.Series(ctx, run, "t", tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if len(pts) != 1 || pts[0].Step != i || !sameFloat(pts[0].Value, tt.v) {
			t.Errorf("Series %s = %v, want [{%d %v}]", tt.name, pts, i, tt.v)
		}
		for _, view := range []string{"series", "summary"} {
			var v sql.NullFloat64
			if err := s.DB().QueryRowContext(ctx, `SELECT value FROM `+view+` WHERE run_id = ? AND metric = ?`, run, tt.name).Scan(&v); err != nil {
				t.Fatal(err)
			}
			var got any
			if v.Valid {
				got = v.Float64
			}
			if !reflect.DeepEqual(got, tt.view) {
				t.Errorf("%s view value of %s = %v, want %v", view, tt.name, got, tt.view)
			}
		}
	}
	// The documented SQL spelling of infinity matches.
	if n := count(t, s.DB(), `SELECT COUNT(*) FROM summary WHERE value = 9e999 OR value = -9e999`); n != 2 {
		t.Errorf("rows with value = ±9e999: %d, want 2", n)
	}
}

// queryAll returns the column names and rows (as strings, NULL as "NULL").
func queryAll(t *testing.T, db *sql.DB, query string, args ...any) ([]string, [][]string) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return cols, out
}

func TestViews(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := mustRun(t, s, "exp")
	other := mustRun(t, s, "other")
	id := fmt.Sprint(run)
	for _, tr := range []Trial{
		{RunID: run, ID: "a", Params: map[string]string{"lr": "0.5", "opt": `"adam"`}, Status: StatusDone},
		{RunID: run, ID: "b", Params: map[string]string{"lr": "0.25"}, Status: StatusFailed, Error: "diverged at step 3"},
		{RunID: other, ID: "z", Status: StatusRunning},
	} {
		if err := s.UpsertTrial(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	s.Metric(run, "a", "loss", 0, 2)
	s.Metric(run, "a", "loss", 1, 1.5)
	s.Metric(run, "b", "loss", 0, math.NaN())
	s.Summary(run, "a", "best", 1.5)
	s.Metric(other, "z", "loss", 0, 7)
	s.Summary(other, "z", "best", 7)
	mustFlush(t, s)

	tests := []struct {
		query string
		cols  []string
		rows  [][]string
	}{
		{`SELECT * FROM series WHERE experiment = 'exp' ORDER BY trial, metric, step`,
			[]string{"experiment", "run_id", "trial", "metric", "step", "value", "kind"},
			[][]string{{"exp", id, "a", "loss", "0", "2", "run"}, {"exp", id, "a", "loss", "1", "1.5", "run"}, {"exp", id, "b", "loss", "0", "NULL", "run"}}},
		{`SELECT * FROM summary WHERE experiment = 'exp'`,
			[]string{"experiment", "run_id", "trial", "metric", "value", "kind"},
			[][]string{{"exp", id, "a", "best", "1.5", "run"}}},
		{`SELECT * FROM trial_params WHERE experiment = 'exp' ORDER BY trial, key`,
			[]string{"experiment", "run_id", "trial", "key", "value", "kind", "value_json"},
			[][]string{{"exp", id, "a", "lr", "0.5", "run", "0.5"}, {"exp", id, "a", "opt", "adam", "run", `"adam"`}, {"exp", id, "b", "lr", "0.25", "run", "0.25"}}},
		{`SELECT * FROM trial_status WHERE experiment = 'exp' ORDER BY trial`,
			[]string{"experiment", "run_id", "trial", "status", "error", "kind"},
			[][]string{{"exp", id, "a", "done", "", "run"}, {"exp", id, "b", "failed", "diverged at step 3", "run"}}},
	}
	for _, tt := range tests {
		cols, rows := queryAll(t, s.DB(), tt.query)
		if !reflect.DeepEqual(cols, tt.cols) {
			t.Errorf("%s: columns %q, want %q", tt.query, cols, tt.cols)
		}
		if !reflect.DeepEqual(rows, tt.rows) {
			t.Errorf("%s:\n got %q\nwant %q", tt.query, rows, tt.rows)
		}
	}
}

func TestUpsertDoesNotDuplicate(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := mustRun(t, s, "up")
	for i := range 3 { // a resumed run re-emits the same keys
		s.Metric(run, "t", "loss", 5, float64(i))
		s.Summary(run, "t", "best", float64(i))
		s.Artifact(run, "", "model.bin", fmt.Sprintf("sha%d", i), "model")
		mustFlush(t, s) // across batches too
	}
	for i := range 2*metricChunk + 1 { // and within one batch and one multi-row statement
		s.Metric(run, "t", "loss", 5, float64(i-2*metricChunk+11))
	}
	mustFlush(t, s)
	for _, tab := range []string{"metrics", "summaries", "artifacts"} {
		if n := count(t, s.DB(), `SELECT COUNT(*) FROM `+tab); n != 1 {
			t.Errorf("%s rows = %d, want 1", tab, n)
		}
	}
	if pts, err := s.Series(ctx, run, "t", "loss"); err != nil || !reflect.DeepEqual(pts, []Point{{5, 11}}) {
		t.Errorf("Series = %v, %v; want [{5 11}]", pts, err)
	}
	if arts, err := s.Artifacts(ctx, run); err != nil || !reflect.DeepEqual(arts, []Artifact{{run, "", "model.bin", "sha2", "model"}}) {
		t.Errorf("Artifacts = %v, %v", arts, err)
	}

	t0 := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	steps := []struct {
		in         Trial
		wantParams map[string]string
	}{
		{Trial{ID: "t", Params: map[string]string{"lr": " 0.5 ", "w": `{ "a" : [1, 2] }`}, Seed: 7, Status: StatusRunning, Started: t0},
			map[string]string{"lr": "0.5", "w": `{"a":[1,2]}`}},
		{Trial{ID: "t", Params: map[string]string{"lr": "0.1"}, Seed: 7, Status: StatusRunning, Started: t0},
			map[string]string{"lr": "0.1"}},
		{Trial{ID: "t", Seed: 7, Status: StatusDone, Started: t0, Ended: t0.Add(time.Second), WallSeconds: 1}, // nil Params: keep
			map[string]string{"lr": "0.1"}},
	}
	for i, st := range steps {
		st.in.RunID = run
		if err := s.UpsertTrial(ctx, st.in); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		trials, err := s.Trials(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		want := st.in
		want.Params = st.wantParams
		if len(trials) != 1 || !reflect.DeepEqual(trials[0], want) {
			t.Errorf("step %d: Trials = %+v, want [%+v]", i, trials, want)
		}
		if n := count(t, s.DB(), `SELECT COUNT(*) FROM trial_param_rows`); n != len(st.wantParams) {
			t.Errorf("step %d: trial_param_rows = %d, want %d", i, n, len(st.wantParams))
		}
	}
	var pj string
	if err := s.DB().QueryRowContext(ctx, `SELECT params_json FROM trials`).Scan(&pj); err != nil || pj != `{"lr":0.1}` {
		t.Errorf("params_json = %q, %v", pj, err)
	}
	if err := s.UpsertTrial(ctx, Trial{RunID: run, ID: "t", Status: StatusDone, Params: map[string]string{"x": "not json"}}); err == nil {
		t.Error("UpsertTrial accepted a non-JSON param value")
	}
	if err := s.UpsertTrial(ctx, Trial{RunID: run, ID: "t", Status: "bogus"}); err == nil {
		t.Error("UpsertTrial accepted an invalid status")
	}
}

func TestMarkStale(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := mustRun(t, s, "stale")
	other := mustRun(t, s, "stale")
	in := map[string]Trial{
		"a": {RunID: run, ID: "a", Status: StatusRunning},
		"b": {RunID: run, ID: "b", Status: StatusDone},
		"c": {RunID: run, ID: "c", Status: StatusPending},
		"d": {RunID: run, ID: "d", Status: StatusRunning, Error: "partial"},
		"e": {RunID: other, ID: "e", Status: StatusRunning},
	}
	for _, tr := range in {
		if err := s.UpsertTrial(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.MarkStale(ctx, run); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": StatusInterrupted, "b": StatusDone, "c": StatusPending, "d": StatusInterrupted}
	trials, err := s.Trials(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != len(want) {
		t.Fatalf("got %d trials, want %d", len(trials), len(want))
	}
	for _, tr := range trials {
		if tr.Status != want[tr.ID] {
			t.Errorf("trial %s status = %q, want %q", tr.ID, tr.Status, want[tr.ID])
		}
	}
	if trials[0].Error == "" || trials[3].Error != "partial" {
		t.Errorf("errors after MarkStale: a=%q d=%q", trials[0].Error, trials[3].Error)
	}
	if o, err := s.Trials(ctx, other); err != nil || o[0].Status != StatusRunning {
		t.Errorf("other run's trial changed: %+v, %v", o, err)
	}
}

func TestRunLifecycle(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	if r, err := s.LatestRun(ctx, "exp", ""); r != nil || err != nil {
		t.Fatalf("LatestRun on empty store = %v, %v; want nil, nil", r, err)
	}
	started := time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	info := RunInfo{Experiment: "exp", ConfigJSON: `{"a":1}`, ConfigHash: "h", GitCommit: "abc", GitDirty: true,
		GoVersion: "go1", OS: "linux", Arch: "amd64", CPUModel: "cpu", Host: "h", GOMAXPROCS: 2, PID: 42,
		Started: started, Note: "first"}
	id1, err := s.CreateRun(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := s.CreateRun(ctx, RunInfo{Experiment: "exp", Kind: KindRepro})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Run(ctx, id1)
	if err != nil {
		t.Fatal(err)
	}
	want := info
	want.ID, want.Kind, want.Status, want.Started = id1, KindRun, StatusRunning, started.UTC()
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("Run =\n%+v\nwant\n%+v", *got, want)
	}
	for _, tt := range []struct {
		kind string
		want int64
	}{{"", id2}, {KindRun, id1}, {KindRepro, id2}} {
		r, err := s.LatestRun(ctx, "exp", tt.kind)
		if err != nil || r == nil || r.ID != tt.want {
			t.Errorf("LatestRun(exp, %q) = %v, %v; want id %d", tt.kind, r, err, tt.want)
		}
	}
	if err := s.FinishRun(ctx, id1, StatusFailed, ""); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Run(ctx, id1); r.Status != StatusFailed || r.Ended.IsZero() || r.Note != "first" {
		t.Errorf("after FinishRun: %+v", r)
	}
	if err := s.SetRunStatus(ctx, id1, StatusRunning); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, id1, StatusFinished, "resumed"); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Run(ctx, id1); r.Status != StatusFinished || r.Note != "resumed" {
		t.Errorf("after resume and finish: %+v", r)
	}
	if err := s.SetRunStatus(ctx, id1, StatusRunning); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Run(ctx, id1); !r.Ended.IsZero() {
		t.Errorf("SetRunStatus(running) kept ended_at %v", r.Ended)
	}
	if _, err := s.Run(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Run(999) err = %v, want ErrNotFound", err)
	}
	if err := s.FinishRun(ctx, 999, StatusFinished, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishRun(999) err = %v, want ErrNotFound", err)
	}
	for _, bad := range []string{"bogus", StatusDone, StatusPending} {
		if err := s.FinishRun(ctx, id1, bad, ""); err == nil {
			t.Errorf("FinishRun accepted the run status %q", bad)
		}
	}
	runs, err := s.Runs(ctx, "exp")
	if err != nil || len(runs) != 2 || runs[0].ID != id1 || runs[1].ID != id2 {
		t.Errorf("Runs = %v, %v", runs, err)
	}
	if runs, err := s.Runs(ctx, "nope"); err != nil || len(runs) != 0 {
		t.Errorf("Runs(nope) = %v, %v", runs, err)
	}
}

func TestBadRowIsReportedAndOthersKept(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	run := mustRun(t, s, "bad")
	const good = 2*metricChunk + 3 // bad row inside a full multi-row chunk
	for i := range good {
		if i == 10 {
			s.Metric(run+100, "t", "loss", i, 1) // no such run: foreign key violation
		}
		s.Metric(run, "t", "loss", i, float64(i))
	}
	err = s.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") || !strings.Contains(err.Error(), "1 row(s)") {
		t.Fatalf("Flush err = %v, want a foreign key error for 1 row", err)
	}
	if n := count(t, s.DB(), `SELECT COUNT(*) FROM metrics`); n != good {
		t.Errorf("metric rows = %d, want %d", n, good)
	}
	if s.Flush(context.Background()) == nil {
		t.Error("write error is not sticky")
	}
	if s.Close() == nil {
		t.Error("Close did not report the write error")
	}
}

func TestUseAfterClose(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	run := mustRun(t, s, "c")
	s.Metric(run, "t", "m", 0, 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Metric(run, "t", "m", 1, 1)
		if err := s.Flush(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Flush after Close = %v, want ErrClosed", err)
		}
		if _, err := s.CreateRun(ctx, RunInfo{Experiment: "x"}); !errors.Is(err, ErrClosed) {
			t.Errorf("CreateRun after Close = %v, want ErrClosed", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("use after Close blocked")
	}
	if !errors.Is(s.Err(), ErrClosed) {
		t.Errorf("Err after Metric on closed store = %v", s.Err())
	}
}

func TestCanceledContext(t *testing.T) {
	s, _ := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.CreateRun(ctx, RunInfo{Experiment: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateRun with canceled ctx = %v", err)
	}
	// Each Flush used to pick at random between the free queue slot (or
	// the writer's reply) and ctx.Done: repeat it so that a random pick
	// shows on every run, not once in many.
	for i := range 20000 {
		if err := s.Flush(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Flush %d with canceled ctx = %v", i, err)
		}
	}
	if n := count(t, s.DB(), `SELECT COUNT(*) FROM runs`); n != 0 {
		t.Errorf("runs = %d after canceled CreateRun", n)
	}
}

// TestTwoStores opens a second Store on the same file while the first is
// writing, as a second process would.
func TestTwoStores(t *testing.T) {
	ctx := context.Background()
	a, path := openTemp(t)
	runA := mustRun(t, a, "a")
	const producers, steps = 4, 3000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range steps {
				a.Metric(runA, fmt.Sprint(p), "loss", i, float64(i))
				if i%500 == 0 {
					if err := a.UpsertTrial(ctx, Trial{RunID: runA, ID: fmt.Sprint(p), Status: StatusRunning}); err != nil {
						t.Errorf("A UpsertTrial: %v", err)
					}
				}
			}
		})
	}
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	runB := mustRun(t, b, "b")
	for i := range steps {
		b.Metric(runB, "x", "loss", i, float64(i))
		if i%1000 == 0 {
			mustFlush(t, b)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatalf("B Close: %v", err)
	}
	wg.Wait()
	mustFlush(t, a)
	for _, tt := range []struct {
		run  int64
		want int
	}{{runA, producers * steps}, {runB, steps}} {
		if n := count(t, a.DB(), `SELECT COUNT(*) FROM metrics WHERE run_id = ?`, tt.run); n != tt.want {
			t.Errorf("run %d: %d metric rows, want %d", tt.run, n, tt.want)
		}
	}
}

func TestEnvironment(t *testing.T) {
	env := Environment()
	if env.GoVersion == "" || env.OS == "" || env.Arch == "" || env.GOMAXPROCS < 1 || env.PID != os.Getpid() {
		t.Errorf("Environment = %+v", env)
	}
	if env.GitCommit != "" && len(env.GitCommit) != 40 {
		t.Errorf("GitCommit = %q, want 40 hex digits or empty", env.GitCommit)
	}
	if c, dirty := gitState(context.Background(), t.TempDir()); c != "" || dirty {
		t.Errorf("gitState outside a checkout = %q, %v", c, dirty)
	}
}

func TestCPUModel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n", "Intel(R) Xeon(R) CPU @ 2.20GHz"},
		{"processor\t: 0\nBogoMIPS\t: 50.00\n\nHardware\t: BCM2835\n", "BCM2835"},
		{"", ""},
		{"model name:\nmodel name : b\n", "b"},
	}
	for _, tt := range tests {
		if got := cpuModel(strings.NewReader(tt.in)); got != tt.want {
			t.Errorf("cpuModel(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzCPUModel(f *testing.F) {
	f.Add("model name\t: x\n")
	f.Add("Hardware : y\nmodel name: z")
	f.Fuzz(func(t *testing.T, in string) {
		got := cpuModel(strings.NewReader(in))
		if strings.ContainsAny(got, "\n") || got != strings.TrimSpace(got) {
			t.Errorf("cpuModel(%q) = %q", in, got)
		}
	})
}

func FuzzValueRoundTrip(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		stored, kind := encodeValue(v)
		var nf sql.NullFloat64
		if f, ok := stored.(float64); ok {
			nf = sql.NullFloat64{Float64: f, Valid: true}
		}
		got, err := decodeValue(nf, kind)
		if err != nil || !sameFloat(got, v) {
			t.Errorf("round trip of %v (kind %s) = %v, %v", v, kind, got, err)
		}
	})
}

// TestCommitsWithoutFlush checks that queued rows are committed by the
// writer's timer, without a Flush.
func TestCommitsWithoutFlush(t *testing.T) {
	s, _ := openTemp(t)
	run := mustRun(t, s, "timer")
	s.Metric(run, "t", "loss", 0, 1)
	deadline := time.Now().Add(20 * time.Second)
	for count(t, s.DB(), `SELECT COUNT(*) FROM metrics`) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("queued row not committed without Flush")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGitStateWritesNothing: reading the revision of a checkout whose
// index is stale (a tracked file touched since it was staged) must not
// refresh the index, i.e. take .git/index.lock and rewrite .git/index,
// which would block, or be blocked by, the user's own git (issue 19,
// item 11).
func TestGitStateWritesNothing(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	f := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(f, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "a")
	head := git("rev-parse", "HEAD")
	// Make the index's stat data stale without changing the content.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(f, later, later); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	fiBefore, _ := os.Stat(index)
	c, dirty := gitState(context.Background(), dir)
	if c != head || dirty {
		t.Errorf("gitState = %q, %v; want %q, false", c, dirty, head)
	}
	after, _ := os.ReadFile(index)
	fiAfter, _ := os.Stat(index)
	if !bytes.Equal(before, after) || !fiAfter.ModTime().Equal(fiBefore.ModTime()) {
		t.Error("gitState rewrote .git/index (it took .git/index.lock)")
	}
	// And the user's git holding the lock does not disturb it.
	lock := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := gitState(context.Background(), dir); c != head {
		t.Errorf("with .git/index.lock held: gitState = %q, want %q", c, head)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("the user's index.lock: %v", err)
	}
}

func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	if _, err := OpenReadOnly(ctx, filepath.Join(t.TempDir(), "none.db")); !errors.Is(err, ErrNoDatabase) {
		t.Errorf("OpenReadOnly of a missing file: %v, want ErrNoDatabase", err)
	}
	path := filepath.Join(t.TempDir(), "results.db")
	w, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	run := mustRun(t, w, "ro")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ri, err := s.Run(ctx, run); err != nil || ri.Experiment != "ro" {
		t.Errorf("Run = %+v, %v", ri, err)
	}
	if _, err := s.CreateRun(ctx, RunInfo{Experiment: "x"}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("CreateRun on a read-only store: %v, want ErrReadOnly", err)
	}
	s.Metric(run, "t", "loss", 0, 1)
	if err := s.Flush(ctx); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Flush on a read-only store: %v, want ErrReadOnly", err)
	}

	// An older schema (every migration but the last) is migrated first
	// (the file is writable here).
	path = filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for v, m := range migrations[:len(migrations)-1] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("migration %d: %v", v+1, err)
		}
		if _, err := db.Exec(`INSERT INTO schema_version VALUES (?, ?, '2026-01-01T00:00:00.000000000Z')`, v+1, m.name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO runs (experiment, status) VALUES ('old', 'finished')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	run = 1
	s2, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("OpenReadOnly of an older schema: %v", err)
	}
	if _, err := s2.Trials(ctx, run); err != nil {
		t.Errorf("Trials after the migration: %v", err)
	}
	s2.Close()
}

func TestMarkUnended(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := mustRun(t, s, "unended")
	ts := []Trial{
		{RunID: run, ID: "a", Status: StatusRunning},
		{RunID: run, ID: "b", Status: StatusDone},
		{RunID: run, ID: "c", Status: StatusPending},
		{RunID: run, ID: "d", Status: StatusPending, Error: "not run: stage ingest failed"},
		{RunID: run, ID: "e", Status: StatusFailed, Error: "diverged"},
	}
	if err := s.UpsertTrials(ctx, ts); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkUnended(ctx, run); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": StatusInterrupted, "b": StatusDone, "c": StatusInterrupted, "d": StatusPending, "e": StatusFailed}
	got, err := s.TrialStatuses(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range got {
		if tr.Status != want[tr.ID] {
			t.Errorf("trial %s: %s, want %s", tr.ID, tr.Status, want[tr.ID])
		}
	}
	// UpsertTrials numbers new trials in order after the run's others and
	// keeps the number of one it updates.
	if err := s.UpsertTrials(ctx, []Trial{{RunID: run, ID: "f", Status: StatusPending}, {RunID: run, ID: "a", Status: StatusDone}}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.TrialTable(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range rows {
		order = append(order, fmt.Sprintf("%s%d", r.ID, r.Seq))
	}
	if strings.Join(order, " ") != "a1 b2 c3 d4 e5 f6" {
		t.Errorf("trials in order with their numbers: %v", order)
	}
}
