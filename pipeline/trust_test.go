package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// flip overwrites 4 bytes in the middle of path, keeping its size.
func flip(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := len(b) / 2
	if i+4 > len(b) {
		b = append(b, 0, 0, 0, 0)
	}
	for k := range 4 {
		b[i+k] ^= 0xff
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptOutputIsEvictedAndRebuilt(t *testing.T) {
	d := newDiamond(t)
	o := d.opts(1)
	res := mustRun(t, d.g, o)
	bOut := res.Nodes["B"].Outputs["out"]
	flip(t, bOut)

	items, err := Plan(context.Background(), d.g, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]PlanItem{}
	for _, it := range items {
		got[it.Node] = it
	}
	if b := got["B"]; !b.Corrupt || b.Cached || !strings.HasPrefix(b.Reason, "corrupt: output out content digest") {
		t.Errorf("plan of corrupt B: %+v", b)
	}
	if dd := got["D"]; dd.Cached || dd.Reason != "upstream B will run" {
		t.Errorf("plan of D below corrupt B: %+v", dd)
	}
	if a := got["A"]; !a.Cached || a.Corrupt {
		t.Errorf("plan of sound A: %+v", a)
	}

	rec := &recorder{t: t}
	o.Observer = rec
	res = mustRun(t, d.g, o)
	if want := []EventKind{Planned, Corrupt, Started, Done}; !reflect.DeepEqual(rec.kinds()["B"], want) {
		t.Errorf("B events %v, want %v", rec.kinds()["B"], want)
	}
	if d.calls.get("B") != 2 || d.calls.get("D") != 1 {
		t.Errorf("calls B=%d D=%d, want 2 and 1 (D's inputs are unchanged once B is rebuilt)", d.calls.get("B"), d.calls.get("D"))
	}
	if got := readFile(t, res.Nodes["D"].Outputs["out"]); got != "hello-a-bhello-c-d" {
		t.Errorf("D.out = %q", got)
	}
	if got := readFile(t, bOut); got != "hello-a-b" {
		t.Errorf("B.out after rebuild = %q", got)
	}
	for _, e := range rec.events {
		if e.Kind == Corrupt && (e.Node != "B" || !strings.Contains(e.Reason, "does not match")) {
			t.Errorf("corrupt event %+v", e)
		}
	}
	if got := dirNames(t, filepath.Join(o.WorkDir, "tmp")); len(got) != 0 {
		t.Errorf("tmp holds %v after eviction", got)
	}
}

func TestCorruptManifestOrMissingOutput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		damage  func(entry string)
		problem string
	}{
		{"manifest garbage", func(e string) { os.WriteFile(filepath.Join(e, manifestName), []byte("{not json"), 0o644) }, "manifest does not parse"},
		{"output removed", func(e string) { os.Remove(filepath.Join(e, "out")) }, "output out missing"},
		{"output truncated", func(e string) { os.WriteFile(filepath.Join(e, "out"), nil, 0o644) }, "content digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDiamond(t)
			o := d.opts(1)
			res := mustRun(t, d.g, o)
			tc.damage(filepath.Dir(res.Nodes["C"].Outputs["out"]))
			items, err := Plan(context.Background(), d.g, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				if it.Node == "C" && (!it.Corrupt || !strings.Contains(it.Reason, tc.problem)) {
					t.Errorf("plan C: %+v, want corrupt with %q", it, tc.problem)
				}
			}
			res = mustRun(t, d.g, o)
			if res.Nodes["C"].Status != Done || readFile(t, res.Nodes["C"].Outputs["out"]) != "hello-c" {
				t.Errorf("C after rebuild: %+v", res.Nodes["C"])
			}
			if r := mustRun(t, d.g, o); r.Nodes["C"].Status != Cached {
				t.Errorf("C not cached after its rebuild: %v", r.Nodes["C"].Status)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	d := newDiamond(t)
	o := d.opts(2)
	res := mustRun(t, d.g, o)
	ctx := context.Background()
	reps, err := Verify(ctx, o.WorkDir, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 4 {
		t.Fatalf("%d entries, want 4", len(reps))
	}
	for _, r := range reps {
		if !r.OK || r.Problem != "" || r.Bytes == 0 || r.Node == "" {
			t.Errorf("sound entry reported %+v", r)
		}
	}
	flip(t, res.Nodes["A"].Outputs["out"])
	leftover := filepath.Join(o.WorkDir, "cache", "cat", "deadbeef")
	os.MkdirAll(leftover, 0o755)
	writeFile(t, filepath.Join(leftover, "out"), "x")

	reps, err = Verify(ctx, o.WorkDir, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{}
	for _, r := range reps {
		if !r.OK {
			bad[r.Node+"|"+r.Key.String()] = r.Problem
		}
		if r.Evicted {
			t.Errorf("evicted without Evict: %+v", r)
		}
	}
	if len(bad) != 2 || !strings.Contains(bad["|deadbeef"], "no manifest") || !strings.Contains(bad["A|"+res.Nodes["A"].Key.String()], "content digest") {
		t.Fatalf("problems %v", bad)
	}
	if _, err := os.Stat(res.Nodes["A"].Outputs["out"]); err != nil {
		t.Fatal("Verify without Evict removed an entry")
	}

	// An entry a runner holds (it is replacing it) is left to that
	// runner; the others are evicted without any workdir lock.
	aDir := filepath.Dir(res.Nodes["A"].Outputs["out"])
	l, ok, err := tryEntryLock(aDir, true)
	if err != nil || !ok {
		t.Fatalf("lock A's entry: %v %v", ok, err)
	}
	reps, err = Verify(ctx, o.WorkDir, VerifyOptions{Evict: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps {
		if r.Dir == aDir && (r.Evicted || !r.InUse) {
			t.Errorf("A's entry, locked by a runner: %+v, want in use and kept", r)
		}
	}
	if _, err := os.Stat(aDir); err != nil {
		t.Fatalf("Verify --evict removed a locked entry: %v", err)
	}
	l.unlock(false)
	reps, err = Verify(ctx, o.WorkDir, VerifyOptions{Evict: true})
	if err != nil {
		t.Fatal(err)
	}
	evicted := 0
	for _, r := range reps {
		if r.Evicted {
			evicted++
			if _, err := os.Stat(r.Dir); !os.IsNotExist(err) {
				t.Errorf("evicted entry %s still there", r.Dir)
			}
		}
	}
	if evicted != 1 {
		t.Errorf("%d entries evicted, want 1 (A's; the other went before)", evicted)
	}
	res = mustRun(t, d.g, o)
	if res.Nodes["A"].Status != Done || res.Nodes["B"].Status != Cached {
		t.Errorf("after eviction: A %v B %v, want done and cached", res.Nodes["A"].Status, res.Nodes["B"].Status)
	}
	reps, _ = Verify(ctx, o.WorkDir, VerifyOptions{})
	for _, r := range reps {
		if !r.OK {
			t.Errorf("after rebuild: %+v", r)
		}
	}
	if _, err := Verify(ctx, filepath.Join(d.dir, "nope"), VerifyOptions{}); err == nil {
		t.Error("Verify of a missing workdir succeeded")
	}
}

// reportStage lists its inputs: present ones with their content, failed
// ones with their error.
type reportStage struct {
	ins   []string
	calls *counter
}

func (s *reportStage) Name() string    { return "report" }
func (s *reportStage) Version() string { return "1" }
func (s *reportStage) Params() any     { return s.ins }
func (s *reportStage) Run(ctx context.Context, io *IO) error {
	s.calls.inc(io.Node())
	var b strings.Builder
	for _, in := range s.ins {
		if msg, failed := io.InputFailure(in); failed {
			if io.HasInput(in) {
				return errors.New("failed input present")
			}
			b.WriteString(in + " FAILED " + msg + "\n")
			continue
		}
		data, err := os.ReadFile(io.Input(in))
		if err != nil {
			return err
		}
		b.WriteString(in + " " + string(data) + "\n")
	}
	return os.WriteFile(io.Output("out"), []byte(b.String()), 0o644)
}

func TestTolerantNodeRunsOverFailedInputs(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, src, "x")
	calls := &counter{}
	fail := true
	g := &Graph{}
	g.Add(&Node{ID: "ok", Stage: &catStage{suffix: "1", ins: []string{"in"}, calls: calls}, Inputs: map[string]Ref{"in": File(src)}, Outputs: []string{"out"}})
	g.Add(&Node{ID: "bad", Stage: &catStage{suffix: "2", ins: []string{"in"}, calls: calls, hook: func(context.Context, *IO) error {
		if fail {
			return errors.New("diverged at step 7")
		}
		return nil
	}}, Inputs: map[string]Ref{"in": File(src)}, Outputs: []string{"out"}})
	g.Add(&Node{ID: "after-bad", Stage: &catStage{suffix: "3", ins: []string{"in"}, calls: calls}, Inputs: map[string]Ref{"in": Out("bad", "out")}, Outputs: []string{"out"}})
	rep := &reportStage{ins: []string{"a", "b", "c"}, calls: calls}
	g.Add(&Node{ID: "report", Stage: rep, Tolerant: true, Outputs: []string{"out"},
		Inputs: map[string]Ref{"a": Out("ok", "out"), "b": Out("bad", "out"), "c": Out("after-bad", "out")}})
	o := Options{WorkDir: filepath.Join(dir, "work"), Jobs: 2}

	res, err := Run(context.Background(), g, o)
	if err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Fatalf("Run: %v, want the failure of bad", err)
	}
	if st := statuses(res); st["report"] != Done || st["after-bad"] != Skipped || st["bad"] != Failed {
		t.Fatalf("statuses %v", st)
	}
	want := "a x1\nb FAILED diverged at step 7\nc FAILED bad: diverged at step 7\n"
	if got := readFile(t, res.Nodes["report"].Outputs["out"]); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
	// Same failure again: the report comes from the cache.
	res, _ = Run(context.Background(), g, o)
	if res.Nodes["report"].Status != Cached || calls.get("report") != 1 {
		t.Errorf("second run: report %v after %d calls", res.Nodes["report"].Status, calls.get("report"))
	}
	// Fixed: the report's key changes and it covers every input.
	fail = false
	res = mustRun(t, g, o)
	if got := readFile(t, res.Nodes["report"].Outputs["out"]); got != "a x1\nb x2\nc x23\n" || calls.get("report") != 2 {
		t.Errorf("report after the fix (%d calls):\n%s", calls.get("report"), got)
	}
}

func TestTolerantNodeStillStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, src, "x")
	ctx, cancel := context.WithCancel(context.Background())
	calls := &counter{}
	g := &Graph{}
	g.Add(&Node{ID: "slow", Stage: &catStage{ins: []string{"in"}, calls: calls, hook: func(ctx context.Context, _ *IO) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}}, Inputs: map[string]Ref{"in": File(src)}, Outputs: []string{"out"}})
	g.Add(&Node{ID: "report", Stage: &reportStage{ins: []string{"s"}, calls: calls}, Tolerant: true, Outputs: []string{"out"},
		Inputs: map[string]Ref{"s": Out("slow", "out")}})
	res, err := Run(ctx, g, Options{WorkDir: filepath.Join(dir, "work"), Jobs: 2})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if res.Nodes["report"].Status != Skipped || calls.get("report") != 0 {
		t.Errorf("report over an interrupted input: %v, %d calls", res.Nodes["report"].Status, calls.get("report"))
	}
}

func TestRunUnderCallersLock(t *testing.T) {
	d := newDiamond(t)
	o := d.opts(1)
	l, err := LockWorkDir(o.WorkDir)
	if err != nil {
		t.Fatal(err)
	}
	// Runs share a workdir: a caller's lock does not keep another Run out.
	mustRun(t, d.g, o)
	if _, err := LockWorkDir(o.WorkDir); !errors.Is(err, ErrBusy) {
		t.Fatalf("second LockWorkDir: %v, want ErrBusy", err)
	}
	o.Lock = l
	mustRun(t, d.g, o)
	mustRun(t, d.g, o) // the lock is still the caller's
	other := o
	other.WorkDir = filepath.Join(d.dir, "elsewhere")
	if _, err := Run(context.Background(), d.g, other); err == nil || !strings.Contains(err.Error(), "not the workdir") {
		t.Errorf("Run with another workdir's lock: %v", err)
	}
	l.Unlock()
	l.Unlock()
	if _, err := Run(context.Background(), d.g, o); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("Run with a released lock: %v", err)
	}
	o.Lock = nil
	mustRun(t, d.g, o)
}

func TestProgressValues(t *testing.T) {
	var got []Event
	io := NewIO(nil, nil, 1, ObserverFunc(func(e Event) { got = append(got, e) }))
	io.ProgressValues(3, 10, map[string]float64{"loss": 1.5})
	io.Progress(4, 10)
	if len(got) != 2 || got[0].Kind != Progress || got[0].Count != 3 || got[0].Total != 10 || got[0].Values["loss"] != 1.5 || got[1].Values != nil || got[1].Count != 4 {
		t.Fatalf("events %+v", got)
	}
}
