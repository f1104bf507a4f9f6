package runs

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// fill records a run with trials named by variant and seed, their params and
// summaries.
func fill(t *testing.T, s *Store, experiment string, config string, ll map[string]float64) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := s.CreateRun(ctx, RunInfo{Experiment: experiment, ConfigJSON: config, Status: StatusInterrupted})
	if err != nil {
		t.Fatal(err)
	}
	// enumeration order is deliberately not id order
	for _, name := range []string{"sgd seed=2", "adam seed=1", "sgd seed=1", "adam seed=2"} {
		variant, seed, _ := strings.Cut(name, " seed=")
		tid := "z" + strings.ReplaceAll(name, " ", "")
		if name == "adam seed=1" {
			tid = "a1"
		}
		err := s.UpsertTrial(ctx, Trial{RunID: id, ID: tid, Status: StatusDone, Seed: int64(seed[0] - '0'), Params: map[string]string{
			"variant": `"` + variant + `"`, "name": `"` + name + `"`, "seed": seed, "lr": "0.5", "dim": "10", "flags": `[1,2]`,
		}})
		if err != nil {
			t.Fatal(err)
		}
		s.Summary(id, tid, "test_ll", ll[name])
		s.Summary(id, tid, "wall_seconds", 1.5)
	}
	mustFlush(t, s)
	return id
}

var lls = map[string]float64{"sgd seed=2": -3, "adam seed=1": -1.5, "sgd seed=1": -2, "adam seed=2": math.NaN()}

func TestTrialsViewTypedAndBestPerVariant(t *testing.T) {
	s, _ := openTemp(t)
	id := fill(t, s, "e", "", lls)
	cols, err := s.TrialsViewColumns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]string{}, trialsFixedColumns...), "dim", "flags", "lr", "name", "param_seed", "variant", "test_ll", "metric_wall_seconds")
	if !reflect.DeepEqual(cols, want) {
		t.Fatalf("columns\n got %v\nwant %v", cols, want)
	}
	// Typed: a string compares as text, a number as a number.
	if n := count(t, s.DB(), `SELECT count(*) FROM trials WHERE variant = 'adam' AND dim > 5 AND lr = 0.5`); n != 2 {
		t.Errorf("typed filter matched %d, want 2", n)
	}
	if n := count(t, s.DB(), `SELECT count(*) FROM trials WHERE typeof(dim) = 'integer' AND typeof(lr) = 'real' AND typeof(variant) = 'text'`); n != 4 {
		t.Errorf("typeof: %d rows typed, want 4", n)
	}
	// Best trial by test_ll per variant: one SELECT (SQLite's bare columns
	// take the row of max()); NaN is NULL and ignored.
	_, rows := queryAll(t, s.DB(), `SELECT variant, name, max(test_ll) FROM trials WHERE run_id = ? GROUP BY variant ORDER BY variant`, id)
	got := make([]string, len(rows))
	for i, r := range rows {
		got[i] = strings.Join(r, "|")
	}
	if w := []string{"adam|adam seed=1|-1.5", "sgd|sgd seed=1|-2"}; !reflect.DeepEqual(got, w) {
		t.Errorf("best per variant = %v, want %v", got, w)
	}
	// seq is enumeration order.
	_, rows = queryAll(t, s.DB(), `SELECT name, seq FROM trials WHERE run_id = ? ORDER BY seq`, id)
	if rows[0][0] != "sgd seed=2" || rows[1][0] != "adam seed=1" || rows[0][1] != "1" || rows[3][1] != "4" {
		t.Errorf("seq order = %v", rows)
	}

	// A second run numbers its trials from 1 again.
	id2 := fill(t, s, "e", "", lls)
	if n := count(t, s.DB(), `SELECT min(seq) FROM trials WHERE run_id = ?`, id2); n != 1 {
		t.Errorf("second run's first seq = %d", n)
	}
	if n := count(t, s.DB(), `SELECT max(seq) FROM trials WHERE run_id = ?`, id2); n != 4 {
		t.Errorf("second run's last seq = %d", n)
	}
	// A new key and a new metric recorded later get columns at once.
	ctx := context.Background()
	if err := s.UpsertTrial(ctx, Trial{RunID: id, ID: "new", Status: StatusDone, Params: map[string]string{"opt": `"goldstone"`}}); err != nil {
		t.Fatal(err)
	}
	s.Summary(id, "new", "auc", 0.75)
	mustFlush(t, s)
	if n := count(t, s.DB(), `SELECT count(*) FROM trials WHERE opt = 'goldstone' AND auc = 0.75`); n != 1 {
		t.Errorf("new column rows = %d, want 1", n)
	}
}

func TestViewSurvivesReopenAndOtherWriters(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	id := fill(t, s, "e", "", lls)
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	// s2 adds a metric; s then adds a param; both must end up as columns.
	s2.Summary(id, "a1", "from_s2", 1)
	if err := s2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertTrial(ctx, Trial{RunID: id, ID: "a1", Status: StatusDone, Params: map[string]string{"fresh": "1"}}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s.DB(), `SELECT count(*) FROM trials WHERE from_s2 = 1 AND fresh = 1`); n != 1 {
		t.Errorf("rows = %d, want 1", n)
	}
}

func TestMigrateFromV1KeepsTrials(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{schemaV1,
		`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`,
		`INSERT INTO schema_version VALUES (1, 'initial schema', '2026-01-01T00:00:00.000000000Z')`,
		`INSERT INTO runs (id, experiment, status) VALUES (7, 'old', 'done')`,
		`INSERT INTO trials (run_id, trial, status) VALUES (7, 't', 'done')`,
		`INSERT INTO trial_param_rows VALUES (7, 't', 'k', '"v"')`,
		`INSERT INTO summaries (run_id, trial, name, value) VALUES (7, 't', 'm', 2.5)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := count(t, s.DB(), `SELECT count(*) FROM trials WHERE k = 'v' AND m = 2.5 AND status = 'done' AND seq = 1`); n != 1 {
		t.Errorf("migrated rows = %d, want 1", n)
	}
	if n := count(t, s.DB(), `SELECT count(*) FROM trial_status WHERE run_id = 7`); n != 1 {
		t.Errorf("trial_status after rename: %d rows", n)
	}
	// Deleting the run still cascades through the renamed table.
	if _, err := s.DeleteRuns(ctx, []int64{7}, false); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s.DB(), `SELECT count(*) FROM trial_param_rows`); n != 0 {
		t.Errorf("params left after delete: %d", n)
	}
}

func TestTagsNoteAndListRuns(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	a := fill(t, s, "e", "", lls)
	b := mustRun(t, s, "e")
	c := mustRun(t, s, "f")
	if err := s.SetTags(ctx, a, map[string]string{"owner": "ann", "goal": "baseline"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTags(ctx, b, map[string]string{"owner": "bob"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTags(ctx, a, map[string]string{"goal": "final"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetNote(ctx, a, "first try"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTags(ctx, 999, map[string]string{"x": "y"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("tag of missing run: %v", err)
	}
	if err := s.SetTags(ctx, a, map[string]string{"": "y"}); err == nil {
		t.Error("empty tag key accepted")
	}
	all, err := s.ListRuns(ctx, RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].ID != a || all[2].ID != c {
		t.Fatalf("list = %+v", all)
	}
	if l := all[0]; l.Note != "first try" || l.Tags["goal"] != "final" || l.Tags["owner"] != "ann" || l.Trials != 4 || l.Counts[StatusDone] != 4 {
		t.Errorf("run a listing = %+v", l)
	}
	if l := all[1]; l.Trials != 0 || len(l.Counts) != 0 {
		t.Errorf("run b listing = %+v", l)
	}
	got, err := s.ListRuns(ctx, RunFilter{Experiment: "e", Tags: map[string]string{"owner": "bob"}})
	if err != nil || len(got) != 1 || got[0].ID != b {
		t.Errorf("filtered = %+v, %v", got, err)
	}
	if n := count(t, s.DB(), `SELECT count(*) FROM run_tag_list WHERE key = 'owner'`); n != 2 {
		t.Errorf("run_tag_list owner rows = %d", n)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := RunListing{RunInfo: RunInfo{Started: start}}
	if d := l.Duration(start.Add(time.Minute)); d != time.Minute {
		t.Errorf("running duration %v", d)
	}
	l.Ended = start.Add(time.Second)
	if d := l.Duration(start.Add(time.Hour)); d != time.Second {
		t.Errorf("finished duration %v", d)
	}
}

func TestOutputsAndLogs(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	id := fill(t, s, "e", "", lls)
	outs := []Output{
		{RunID: id, Trial: "a1", Stage: "train/a1", CacheDir: "/w/cache/train/k1", File: "params/w.npy", SHA256: "aa", Bytes: 10},
		{RunID: id, Trial: "", Stage: "ingest", CacheDir: "/w/cache/ingest/k0", File: "ratings.parquet", SHA256: "bb", Bytes: 20},
	}
	if err := s.RecordOutputs(ctx, outs); err != nil {
		t.Fatal(err)
	}
	outs[0].SHA256 = "cc" // re-recording replaces
	if err := s.RecordOutputs(ctx, outs[:1]); err != nil {
		t.Fatal(err)
	}
	got, err := s.Outputs(ctx, id)
	if err != nil || len(got) != 2 || got[0].Trial != "" || got[1].SHA256 != "cc" {
		t.Fatalf("outputs = %+v, %v", got, err)
	}
	_, rows := queryAll(t, s.DB(), `SELECT path, experiment FROM trial_outputs WHERE trial = 'a1'`)
	if len(rows) != 1 || rows[0][0] != "/w/cache/train/k1/params/w.npy" || rows[0][1] != "e" {
		t.Errorf("trial_outputs = %v", rows)
	}
	if err := s.RecordOutputs(ctx, []Output{{RunID: id, Stage: "x"}}); err == nil {
		t.Error("output without file accepted")
	}
	if err := s.SetTrialLog(ctx, id, "a1", "/w/logs/a1.log"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTrialLog(ctx, id, "nope", "/x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("log of missing trial: %v", err)
	}
	tt, err := s.TrialTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if tt[1].ID != "a1" || tt[1].LogPath != "/w/logs/a1.log" || tt[1].Name != "adam seed=1" || tt[1].Summary["test_ll"] != -1.5 {
		t.Errorf("trial table row = %+v", tt[1])
	}
	if !math.IsNaN(tt[3].Summary["test_ll"]) {
		t.Errorf("NaN summary = %v", tt[3].Summary["test_ll"])
	}
}

func TestDeleteRunsAndOldRuns(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	var ids []int64
	for i := range 4 {
		id := fill(t, s, "e", "", lls)
		ids = append(ids, id)
		dir := "/w/cache/train/own" + string(rune('0'+i))
		if err := s.RecordOutputs(ctx, []Output{
			{RunID: id, Trial: "a1", Stage: "train", CacheDir: dir, File: "f", SHA256: "x"},
			{RunID: id, Stage: "ingest", CacheDir: "/w/cache/ingest/shared", File: "f", SHA256: "y"},
		}); err != nil {
			t.Fatal(err)
		}
		s.Artifact(id, "", "/r/run-"+string(rune('0'+i))+"/index.html", "z", "html")
	}
	for _, id := range ids {
		if err := s.FinishRun(ctx, id, StatusFinished, ""); err != nil {
			t.Fatal(err)
		}
	}
	running := mustRun(t, s, "e")
	repro, err := s.CreateRun(ctx, RunInfo{Experiment: "e", Kind: KindRepro, Status: StatusInterrupted})
	if err != nil {
		t.Fatal(err)
	}
	mustFlush(t, s)
	old, err := s.OldRuns(ctx, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	// The newest 2 finished runs of e are kept: ids[3] and ids[2] (the
	// running one neither counts nor goes); the repro run is its own kind.
	if len(old) != 2 || old[0].ID != ids[0] || old[1].ID != ids[1] {
		t.Fatalf("old runs = %v", runIDs(old))
	}
	if old, _ := s.OldRuns(ctx, "", 0); len(old) != 5 { // never the running one
		t.Errorf("keep 0: %v", runIDs(old))
	}
	_ = repro

	before := count(t, s.DB(), `SELECT count(*) FROM summaries`)
	dry, err := s.DeleteRuns(ctx, []int64{ids[0], ids[1]}, true)
	if err != nil {
		t.Fatal(err)
	}
	if after := count(t, s.DB(), `SELECT count(*) FROM summaries`); after != before || count(t, s.DB(), `SELECT count(*) FROM runs`) != 6 {
		t.Errorf("dry run changed the database")
	}
	res, err := s.DeleteRuns(ctx, []int64{ids[0], ids[1]}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dry, res) {
		t.Errorf("dry run %+v differs from run %+v", dry, res)
	}
	if w := []string{"/w/cache/train/own0", "/w/cache/train/own1"}; !reflect.DeepEqual(res.CacheDirs, w) {
		t.Errorf("cache dirs = %v, want %v (the shared one is still used)", res.CacheDirs, w)
	}
	if len(res.Files) != 2 || len(res.Runs) != 2 {
		t.Errorf("result = %+v", res)
	}
	for _, tbl := range []string{"trial_rows", "trial_param_rows", "summaries", "artifacts", "trial_output_rows", "run_tags"} {
		if n := count(t, s.DB(), `SELECT count(*) FROM `+tbl+` WHERE run_id IN (?, ?)`, ids[0], ids[1]); n != 0 {
			t.Errorf("%s keeps %d rows of deleted runs", tbl, n)
		}
	}
	if _, err := s.DeleteRuns(ctx, []int64{running}, false); err == nil {
		t.Error("deleted a running run")
	}
	if _, err := s.DeleteRuns(ctx, []int64{12345}, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing run: %v", err)
	}
}

func runIDs(rs []RunInfo) []int64 {
	var out []int64
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestDiff(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	cfgA := `{"name":"e","settings":{"lr":0.5,"dim":10},"variants":[{"name":"adam","settings":{"beta":0.9}},{"name":"sgd","settings":{}}],"grid":[{"key":"seed","values":[1,2]}]}`
	cfgB := `{"name":"e","settings":{"lr":0.1,"dim":10,"new":true},"variants":[{"name":"adam","settings":{"beta":0.99}},{"name":"sgd","settings":{}}],"grid":[{"key":"seed","values":[1,2,3]}]}`
	a := fill(t, s, "e", cfgA, lls)
	llB := map[string]float64{"sgd seed=2": -2.5, "adam seed=1": -1.5, "sgd seed=1": -2, "adam seed=2": -1}
	b := fill(t, s, "e", cfgB, llB)
	if err := s.UpsertTrial(ctx, Trial{RunID: b, ID: "extra", Status: StatusDone, Params: map[string]string{"name": `"sgd seed=3"`}}); err != nil {
		t.Fatal(err)
	}
	d, err := s.Diff(ctx, a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []SettingDiff{
		{"grid.seed.values", "[1,2]", "[1,2,3]"},
		{"settings.lr", "0.5", "0.1"},
		{"settings.new", "", "true"},
		{"variants.adam.settings.beta", "0.9", "0.99"},
	}
	if !reflect.DeepEqual(d.Settings, want) {
		t.Errorf("settings diff\n got %v\nwant %v", d.Settings, want)
	}
	if len(d.OnlyA) != 0 || !reflect.DeepEqual(d.OnlyB, []string{"sgd seed=3"}) {
		t.Errorf("only a %v, only b %v", d.OnlyA, d.OnlyB)
	}
	if len(d.Metrics) != 8 {
		t.Fatalf("metrics = %+v", d.Metrics)
	}
	m := d.Metrics[0] // first trial in A's order: "sgd seed=2", test_ll
	if m.Trial != "sgd seed=2" || m.Metric != "test_ll" || m.A != -3 || m.B != -2.5 || m.Delta() != 0.5 {
		t.Errorf("first metric diff = %+v", m)
	}
	if x := d.Metrics[6]; x.Trial != "adam seed=2" || x.Metric != "test_ll" || !math.IsNaN(x.Delta()) && x.Delta() == x.Delta() {
		t.Errorf("nan metric diff = %+v delta %v", x, x.Delta())
	}
	if _, err := s.Diff(ctx, a, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("diff with missing run: %v", err)
	}
}

func TestExportParquet(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	id := fill(t, s, "e", "", lls)
	for i, v := range []float64{3, 2, math.Inf(1)} {
		s.Metric(id, "a1", "loss", i+1, v)
	}
	s.Metric(id, "zsgdseed=2", "loss", 1, 9)
	mustFlush(t, s)
	start := time.Date(2026, 3, 4, 5, 6, 7, 8000, time.UTC)
	if err := s.UpsertTrial(ctx, Trial{RunID: id, ID: "a1", Status: StatusDone, Started: start, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	paths, err := s.ExportParquet(ctx, id, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 5 {
		t.Fatalf("paths = %v", paths)
	}

	series, err := parquet.ReadFile[seriesRow](filepath.Join(dir, ExportSeries))
	if err != nil {
		t.Fatal(err)
	}
	// trials in enumeration order: "sgd seed=2" first, then a1.
	if len(series) != 4 || series[0].Trial != "zsgdseed=2" || series[1].Step != 1 || series[3].Value != math.Inf(1) {
		t.Errorf("series = %+v", series)
	}

	f, err := parquet.OpenFile(mustOpen(t, filepath.Join(dir, ExportTrials)))
	if err != nil {
		t.Fatal(err)
	}
	typ := map[string]string{}
	var order []string
	for _, c := range f.Schema().Fields() {
		order = append(order, c.Name())
		typ[c.Name()] = c.Type().String()
	}
	if order[0] != "experiment" || order[1] != "run_id" || order[2] != "trial" {
		t.Errorf("column order = %v", order)
	}
	for name, want := range map[string]string{"dim": "INT(64,true)", "lr": "DOUBLE", "variant": "STRING", "flags": "STRING", "test_ll": "DOUBLE", "started_at": "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)"} {
		if typ[name] != want {
			t.Errorf("column %s type %q, want %q", name, typ[name], want)
		}
	}
	if f.NumRows() != 4 {
		t.Errorf("trials rows = %d", f.NumRows())
	}
	rows := make([]parquet.Row, 4)
	r := f.RowGroups()[0].Rows()
	n, _ := r.ReadRows(rows)
	r.Close()
	if n != 4 {
		t.Fatalf("read %d rows", n)
	}
	// second row is a1: started_at set to start (microseconds).
	col := slicesIndex(order, "started_at")
	if got := rows[1][col].Int64(); got != start.UnixMicro() {
		t.Errorf("started_at = %d, want %d", got, start.UnixMicro())
	}
	if !rows[0][col].IsNull() {
		t.Errorf("unset started_at not null: %v", rows[0][col])
	}
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func mustOpen(t *testing.T, path string) (*os.File, int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return f, st.Size()
}

func TestEnvAndBuildEnv(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	id := mustRun(t, s, "e")
	env := BuildEnv()
	if env[EnvCommand] == "" {
		t.Error("no command line")
	}
	env[InputEnvKey("/data/ratings.csv")] = "abc"
	if err := s.SetEnv(ctx, id, env); err != nil {
		t.Fatal(err)
	}
	got, err := s.Env(ctx, id)
	if err != nil || !reflect.DeepEqual(got, env) {
		t.Errorf("env = %v, %v", got, err)
	}
	if _, err := s.DeleteRuns(ctx, []int64{id}, false); err == nil {
		t.Error("deleted a running run")
	}
	if q := shellJoin([]string{"runner", "--note", "it's a test", "seed=1,2"}); q != `runner --note 'it'\''s a test' seed=1,2` {
		t.Errorf("shellJoin = %s", q)
	}
}

// TestOldRunsCountFinishedRunsOnly: --keep-last counts finished runs: a
// running run is neither kept in their place nor deleted, a failed or
// interrupted run goes only when older than the kept finished ones, and a
// pinned run is never deleted nor counted.
func TestOldRunsCountFinishedRunsOnly(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	finished := fill(t, s, "e", "", lls)
	if err := s.FinishRun(ctx, finished, StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	running := mustRun(t, s, "e")
	mustFlush(t, s)
	// The issue: keep-last 1 counted the running run as the one kept and
	// would delete the only finished sweep.
	if old, err := s.OldRuns(ctx, "", 1); err != nil || len(old) != 0 {
		t.Fatalf("keep 1 with a finished and a running run: %v %v", runIDs(old), err)
	}
	failedOld := fill(t, s, "e", "", lls) // newer than the finished one
	if err := s.FinishRun(ctx, failedOld, StatusFailed, ""); err != nil {
		t.Fatal(err)
	}
	newer := fill(t, s, "e", "", lls)
	if err := s.FinishRun(ctx, newer, StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, s)
	// Finished: newer (kept), finished (old); failedOld lies between them.
	if old, _ := s.OldRuns(ctx, "", 1); len(old) != 2 || old[0].ID != finished || old[1].ID != failedOld {
		t.Fatalf("keep 1: %v, want [%d %d]", runIDs(old), finished, failedOld)
	}
	if old, _ := s.OldRuns(ctx, "", 2); len(old) != 0 {
		t.Fatalf("keep 2: %v, want none (the failed run is newer than the second finished one)", runIDs(old))
	}
	if err := s.Pin(ctx, finished, true); err != nil {
		t.Fatal(err)
	}
	if old, _ := s.OldRuns(ctx, "", 0); len(old) != 2 || old[0].ID != failedOld || old[1].ID != newer {
		t.Fatalf("keep 0 with run %d pinned: %v", finished, runIDs(old))
	}
	if err := s.Pin(ctx, finished, false); err != nil {
		t.Fatal(err)
	}
	if old, _ := s.OldRuns(ctx, "", 0); len(old) != 3 {
		t.Fatalf("keep 0 unpinned: %v", runIDs(old))
	}
	if err := s.Pin(ctx, 999, true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("pin of no run: %v", err)
	}
	_ = running
}

// TestDiffMatchesBySettings: --set seed=1 drops "seed=1" from the trial
// names ("adam" for "adam seed=1"); Diff still pairs the trials by their
// settings, and a setting that tells the runs apart (lr) is left out of
// the pairing.
func TestDiffMatchesBySettings(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	a := fill(t, s, "e", "", lls)
	b, err := s.CreateRun(ctx, RunInfo{Experiment: "e", Status: StatusInterrupted})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"adam", "sgd"} {
		if err := s.UpsertTrial(ctx, Trial{RunID: b, ID: "b" + v, Status: StatusDone, Seed: 1, Params: map[string]string{
			"variant": `"` + v + `"`, "name": `"` + v + `"`, "seed": "1", "lr": "0.25", "dim": "10", "flags": `[1,2]`,
		}}); err != nil {
			t.Fatal(err)
		}
		s.Summary(b, "b"+v, "test_ll", -7)
	}
	mustFlush(t, s)
	d, err := s.Diff(ctx, a, b)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for _, m := range d.Metrics {
		if m.Metric == "test_ll" && m.InA && m.InB {
			pairs = append(pairs, m.Trial)
		}
	}
	if strings.Join(pairs, ",") != "adam seed=1,sgd seed=1" || strings.Join(d.OnlyA, ",") != "sgd seed=2,adam seed=2" || len(d.OnlyB) != 0 {
		t.Errorf("paired %v, only a %v, only b %v", pairs, d.OnlyA, d.OnlyB)
	}
}
