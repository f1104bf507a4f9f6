package batch

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"goldstone/runs"
)

func TestNumJSONExact(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1.0 / 3, -2.5e-310, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.NaN(), math.Inf(1), math.Inf(-1), 0.1 + 0.2}
	for _, v := range vals {
		b, err := json.Marshal(Num(v))
		if err != nil {
			t.Fatal(err)
		}
		var n Num
		if err := json.Unmarshal(b, &n); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if math.Float64bits(float64(n)) != math.Float64bits(v) && !(math.IsNaN(v) && math.IsNaN(float64(n))) {
			t.Errorf("%v -> %s -> %v: bits differ", v, b, float64(n))
		}
	}
	var n Num
	if err := json.Unmarshal([]byte(`"inf"`), &n); err == nil {
		t.Error(`"inf" was accepted`)
	}
	if b, _ := json.Marshal(Num(math.NaN())); string(b) != "null" {
		t.Errorf("NaN marshals as %s, want null", b)
	}
	var m map[string]Num
	if err := json.Unmarshal([]byte(`{"a": null, "b": "NaN", "c": 1}`), &m); err != nil || !math.IsNaN(float64(m["a"])) || !math.IsNaN(float64(m["b"])) || m["c"] != 1 {
		t.Errorf("null and \"NaN\" in a map: %v, %v", m, err)
	}
}

func testManifest(runID int64, n int) *Manifest {
	m := &Manifest{Format: ManifestFormat, RunID: runID, Experiment: "small", ConfigHash: "abc", Created: time.Unix(0, 0).UTC()}
	for i := range n {
		m.Trials = append(m.Trials, Trial{Index: i, ID: fmt.Sprintf("trial%d", i), Name: fmt.Sprintf("seed=%d", i+1),
			Seed: int64(i + 1), Params: map[string]string{"seed": fmt.Sprint(i + 1)}, CPUs: 1, MemMB: 500})
	}
	return m
}

func TestManifestFrozen(t *testing.T) {
	d := RunDir(t.TempDir(), "small", 3)
	m := testManifest(3, 2)
	if err := WriteManifest(d, m); err != nil {
		t.Fatal(err)
	}
	m2 := testManifest(3, 3)
	if err := WriteManifest(d, m2); !errors.Is(err, ErrExists) {
		t.Fatalf("second WriteManifest: %v, want ErrExists", err)
	}
	got, err := ReadManifest(d)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("read back %+v\nwant %+v", got, m)
	}
	bad := testManifest(3, 2)
	bad.Trials[1].Index = 5
	if err := WriteManifest(RunDir(t.TempDir(), "small", 3), bad); err == nil || !strings.Contains(err.Error(), "trials[1].index") {
		t.Errorf("bad manifest: %v", err)
	}
	os.WriteFile(d.Manifest(), []byte(`{"format": 1, "run_id": 3`), 0o644)
	if _, err := ReadManifest(d); err == nil || !strings.Contains(err.Error(), "manifest.json") {
		t.Errorf("truncated manifest: %v", err)
	}
}

func doneResult(m *Manifest, i, attempt int, scale float64) *Result {
	at := time.Date(2026, 11, 26, 6, 0, i, 0, time.UTC)
	return &Result{RunID: m.RunID, Index: i, Attempt: attempt, Trial: m.Trials[i].ID, Status: Done, Host: "node1",
		JobID: fmt.Sprintf("7_%d", i), Started: at, Ended: at.Add(2 * time.Second), WallSeconds: 2,
		Summary: map[string]Num{"final_loss": Num(scale / 3), "first_below": Num(math.NaN()), "gap": Num(math.Inf(1))},
		Series:  []Curve{{Metric: "loss", Steps: []int{0, 10, 20}, Values: []Num{Num(scale), Num(scale / 2), Num(math.Copysign(0, -1))}}}}
}

func TestResultRoundTrip(t *testing.T) {
	d := RunDir(t.TempDir(), "small", 3)
	m := testManifest(3, 2)
	r := doneResult(m, 1, 2, 1)
	if err := WriteResult(d, r); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResult(d, 1, Exec{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(float64(got.Series[0].Values[2])) != math.Float64bits(math.Copysign(0, -1)) ||
		!math.IsNaN(float64(got.Summary["first_below"])) || got.Summary["final_loss"] != r.Summary["final_loss"] {
		t.Errorf("values changed: %+v", got)
	}
	files, err := d.ResultFiles()
	if err != nil || !reflect.DeepEqual(files, map[int][]Exec{1: {{2, 0}}}) {
		t.Errorf("ResultFiles = %v, %v", files, err)
	}
	if err := WriteResult(d, &Result{Trial: "x", Attempt: 1, Status: "ok"}); err == nil {
		t.Error("a result with status ok was written")
	}
	// A leftover temporary file is not a result.
	os.WriteFile(filepath.Join(filepath.Dir(d.Result(0, Exec{1, 0})), ".result-123"), []byte("{"), 0o644)
	if files, _ := d.ResultFiles(); len(files) != 1 {
		t.Errorf("temporary file listed: %v", files)
	}
}

// dump returns every row of the tables collect writes, as text.
func dump(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b strings.Builder
	for _, q := range []string{
		`SELECT * FROM runs`, `SELECT * FROM trial_status`, `SELECT * FROM trial_params`, `SELECT * FROM metrics`,
		`SELECT * FROM summaries`, `SELECT * FROM trial_attempts`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, q, vals)
		}
		rows.Close()
	}
	return b.String()
}

func TestCollectIdempotent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "results.db")
	st, err := runs.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.CreateRun(ctx, runs.RunInfo{Experiment: "small"})
	if err != nil {
		t.Fatal(err)
	}
	m := testManifest(id, 4)
	d := RunDir(dir, "small", id)
	for _, tr := range m.Trials {
		if err := st.UpsertTrial(ctx, runs.Trial{RunID: id, ID: tr.ID, Params: tr.Params, Seed: tr.Seed, Status: runs.StatusPending}); err != nil {
			t.Fatal(err)
		}
	}
	// Trial 0 done; trial 1 interrupted in attempt 1, done in attempt 2;
	// trial 2 failed; trial 3 has no result.
	for _, r := range []*Result{
		doneResult(m, 0, 1, 1),
		{RunID: id, Index: 1, Attempt: 1, Trial: m.Trials[1].ID, Status: Interrupted, Error: "interrupted: SIGTERM"},
		doneResult(m, 1, 2, 4),
		{RunID: id, Index: 2, Attempt: 1, Trial: m.Trials[2].ID, Status: Failed, Error: "train: loss is NaN at step 12"},
	} {
		if err := WriteResult(d, r); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Collect(ctx, st, d, m)
	if err != nil {
		t.Fatal(err)
	}
	if c.Done != 2 || c.Failed != 1 || c.Missing != 1 || c.Ingested != 4 || !reflect.DeepEqual(c.Pending, []int{3}) {
		t.Fatalf("first collect: %+v", c)
	}
	before := dump(t, dbPath)
	c2, err := Collect(ctx, st, d, m)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Ingested != 0 || c2.Done != 2 {
		t.Fatalf("second collect: %+v", c2)
	}
	if after := dump(t, dbPath); after != before {
		t.Fatalf("collecting twice changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	sums, err := st.Summaries(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if sums["trial1"]["final_loss"] != 4.0/3 || !math.IsNaN(sums["trial1"]["first_below"]) || !math.IsInf(sums["trial1"]["gap"], 1) {
		t.Errorf("summaries of trial1: %v", sums["trial1"])
	}
	pts, err := st.Series(ctx, id, "trial1", "loss")
	if err != nil || len(pts) != 3 || pts[1].Value != 2 || math.Float64bits(pts[2].Value) != math.Float64bits(math.Copysign(0, -1)) {
		t.Errorf("series of trial1: %v, %v", pts, err)
	}
	trials, err := st.Trials(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"trial0": "done", "trial1": "done", "trial2": "failed", "trial3": "pending"}
	for _, tr := range trials {
		if tr.Status != want[tr.ID] {
			t.Errorf("trial %s: status %s, want %s", tr.ID, tr.Status, want[tr.ID])
		}
	}
	// A result file of another run is refused, naming the file.
	bad := doneResult(m, 3, 1, 1)
	bad.Trial = "someone-else"
	WriteResult(d, bad)
	if _, err := Collect(ctx, st, d, m); err == nil || !strings.Contains(err.Error(), "3.1.json") {
		t.Errorf("foreign result: %v", err)
	}
}

func TestStatus(t *testing.T) {
	d := RunDir(t.TempDir(), "small", 3)
	m := testManifest(3, 5)
	WriteResult(d, doneResult(m, 0, 1, 1))
	WriteResult(d, &Result{RunID: 3, Index: 1, Attempt: 1, Trial: m.Trials[1].ID, Status: Interrupted, Error: "interrupted"})
	WriteResult(d, &Result{RunID: 3, Index: 2, Attempt: 1, Trial: m.Trials[2].ID, Status: Failed, Error: "boom"})
	// The queue's answer may be older than a result of the same attempt:
	// the result wins (tasks 1 and 2 ended after squeue listed them).
	states, err := Status(d, m, map[int]string{1: "PENDING", 2: "RUNNING", 3: "RUNNING"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range states {
		got = append(got, fmt.Sprintf("%d:%s:%d:%s", s.Index, s.State, s.Attempt, s.Error))
	}
	want := []string{"0:done:1:", "1:interrupted:1:interrupted", "2:failed:1:boom", "3:running:0:", "4:missing:0:"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Status = %q\nwant %q", got, want)
	}
	if c := Count(states); c[Done] != 1 || c[Interrupted] != 1 || c[Missing] != 1 || c[Running] != 1 {
		t.Errorf("Count = %v", c)
	}
	// Attempt 2 resubmitted trial 1 after its interrupted attempt 1.
	states, _ = Status(d, m, map[int]string{1: "PENDING"}, 2)
	if s := states[1]; s.State != Pending || s.Attempt != 1 || s.Error != "interrupted" {
		t.Errorf("resubmitted trial: %+v", s)
	}
}

func TestLinkCacheAndLock(t *testing.T) {
	work := t.TempDir()
	d := RunDir(work, "small", 3)
	w, err := d.LinkCache(2, filepath.Join(work, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.LinkCache(2, filepath.Join(work, "cache")); err != nil {
		t.Fatalf("linking again: %v", err)
	}
	// A rename into the linked cache lands in the shared one.
	os.MkdirAll(filepath.Join(w, "tmp", "x"), 0o755)
	os.MkdirAll(filepath.Join(w, "cache", "stage"), 0o755)
	if err := os.Rename(filepath.Join(w, "tmp", "x"), filepath.Join(w, "cache", "stage", "key")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(work, "cache", "stage", "key")); err != nil {
		t.Fatalf("entry not in the shared cache: %v", err)
	}
	unlock, err := d.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lock(); err == nil || !strings.Contains(err.Error(), "another runner") {
		t.Errorf("second Lock: %v", err)
	}
	unlock()
	unlock2, err := d.Lock()
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock2()
}

func TestFreezeShared(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "runner")
	os.WriteFile(src, []byte("binary v1"), 0o755)
	a, b := RunDir(dir, "x", 1), RunDir(dir, "x", 2)
	for _, d := range []Dir{a, b} {
		if err := FreezeShared(src, filepath.Join(dir, "batch", "bin"), d.Runner(1), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(src, []byte("binary v2"), 0o755) // a rebuild after submission changes nothing frozen
	if err := FreezeShared(src, filepath.Join(dir, "batch", "bin"), a.Runner(1), 0o755); err != nil {
		t.Fatal(err)
	}
	// A later submission of the same build shares the copy too.
	os.WriteFile(src, []byte("binary v1"), 0o755)
	if err := FreezeShared(src, filepath.Join(dir, "batch", "bin"), b.Runner(2), 0o755); err != nil {
		t.Fatal(err)
	}
	fa, _ := os.Stat(a.Runner(1))
	fb, _ := os.Stat(b.Runner(2))
	if !os.SameFile(fa, fb) || fa.Mode().Perm() != 0o755 {
		t.Errorf("the two runs do not share one executable copy (mode %v)", fa.Mode())
	}
	if got, _ := os.ReadFile(a.Runner(1)); string(got) != "binary v1" {
		t.Errorf("frozen runner holds %q", got)
	}
}

// TestRequeuedTaskIsCollected: a task that Slurm restarted (requeue,
// preemption) after its first execution was collected as interrupted
// writes a result of its own (SLURM_RESTART_COUNT in its name) and is
// collected: before, the restarted task overwrote <index>.<attempt>.json,
// whose (trial, attempt) was already recorded, and its result was lost.
func TestRequeuedTaskIsCollected(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.CreateRun(ctx, runs.RunInfo{Experiment: "small"})
	if err != nil {
		t.Fatal(err)
	}
	m := testManifest(id, 2)
	d := RunDir(dir, "small", id)
	for _, tr := range m.Trials {
		if err := st.UpsertTrial(ctx, runs.Trial{RunID: id, ID: tr.ID, Params: tr.Params, Seed: tr.Seed, Status: runs.StatusPending}); err != nil {
			t.Fatal(err)
		}
	}
	WriteResult(d, doneResult(m, 0, 1, 1))
	stopped := doneResult(m, 1, 1, 2)
	stopped.Status, stopped.Error, stopped.Summary, stopped.Series = Interrupted, "interrupted", nil, nil
	WriteResult(d, stopped)
	c, err := Collect(ctx, st, d, m)
	if err != nil || c.Done != 1 || c.Interrupted != 1 {
		t.Fatalf("first collect: %+v, %v", c, err)
	}
	again := doneResult(m, 1, 1, 2)
	again.Restart, again.JobID = 1, "7_1"
	if err := WriteResult(d, again); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Result(1, Exec{1, 1})); err != nil || filepath.Base(d.Result(1, Exec{1, 1})) != "1.1.1.json" {
		t.Fatalf("restarted execution's file: %v", err)
	}
	c, err = Collect(ctx, st, d, m)
	if err != nil || c.Done != 2 || c.Interrupted != 0 || c.Ingested != 1 || len(c.Pending) != 0 {
		t.Fatalf("collect after the requeued task ended: %+v, %v", c, err)
	}
	sums, err := st.Summaries(ctx, m.RunID)
	if err != nil || len(sums[m.Trials[1].ID]) == 0 {
		t.Fatalf("the requeued trial's summary was not recorded: %v, %v", sums, err)
	}
	atts, _ := st.Attempts(ctx, m.RunID)
	var got []string
	for _, a := range atts {
		got = append(got, fmt.Sprintf("%s/%d/%s", a.Trial, a.Attempt, a.Status))
	}
	want := []string{m.Trials[0].ID + "/1/done", m.Trials[1].ID + "/1/interrupted", m.Trials[1].ID + "/2/done"}
	slices.Sort(got)
	slices.Sort(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("attempts %v, want %v", got, want)
	}
}
