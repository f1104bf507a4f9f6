package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunTwiceCached(t *testing.T) {
	d := newDiamond(t)
	rec := &recorder{t: t}
	o := d.opts(2)
	o.Observer = rec
	res := mustRun(t, d.g, o)
	if got := d.calls.total(); got != 4 {
		t.Fatalf("first run: %d stage calls, want 4", got)
	}
	if got := readFile(t, res.Nodes["D"].Outputs["out"]); got != "hello-a-bhello-c-d" {
		t.Errorf("D.out = %q", got)
	}
	for id, k := range rec.kinds() {
		if want := []EventKind{Planned, Started, Done}; !reflect.DeepEqual(k, want) {
			t.Errorf("first run %s events %v, want %v", id, k, want)
		}
	}
	if want := []string{"A", "B", "C", "D"}; !reflect.DeepEqual(res.Order, want) {
		t.Errorf("Order = %v, want %v", res.Order, want)
	}

	rec2 := &recorder{t: t}
	o.Observer = rec2
	res2 := mustRun(t, d.g, o)
	if got := d.calls.total(); got != 4 {
		t.Errorf("second run called stages %d more times, want 0", got-4)
	}
	for id, nr := range res2.Nodes {
		if nr.Status != Cached || !nr.Cached || nr.Key != res.Nodes[id].Key {
			t.Errorf("second run %s: %+v", id, nr)
		}
		if !reflect.DeepEqual(nr.Outputs, res.Nodes[id].Outputs) {
			t.Errorf("second run %s outputs %v, want %v", id, nr.Outputs, res.Nodes[id].Outputs)
		}
	}
	for id, k := range rec2.kinds() {
		if want := []EventKind{Planned, Cached}; !reflect.DeepEqual(k, want) {
			t.Errorf("second run %s events %v, want %v", id, k, want)
		}
	}
}

func planReasons(t *testing.T, g *Graph, o Options) map[string]string {
	t.Helper()
	items, err := Plan(context.Background(), g, o)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	m := map[string]string{}
	for _, it := range items {
		m[it.Node] = it.Reason
		if it.Cached != (it.Reason == "cached") {
			t.Errorf("plan %s: Cached=%v with reason %q", it.Node, it.Cached, it.Reason)
		}
		if (it.Key == "") != strings.HasPrefix(it.Reason, "upstream") && !(o.Force && it.Key == "") {
			t.Errorf("plan %s: key %q with reason %q", it.Node, it.Key, it.Reason)
		}
	}
	return m
}

func TestPlanAndSelectiveRerun(t *testing.T) {
	d := newDiamond(t)
	o := d.opts(2)
	touch := func(path, data string, age time.Duration) {
		writeFile(t, path, data)
		ts := time.Now().Add(-age)
		if err := os.Chtimes(path, ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name   string
		change func()
		plan   map[string]string
		ran    []string // nodes whose stage runs
	}{
		{"fresh", func() {}, map[string]string{
			"A": "no cache entry", "B": "upstream A will run", "C": "no cache entry", "D": "upstream B will run",
		}, []string{"A", "B", "C", "D"}},
		{"unchanged", func() {}, map[string]string{
			"A": "cached", "B": "cached", "C": "cached", "D": "cached",
		}, nil},
		{"param of B", func() { d.st["B"].suffix = "-B" }, map[string]string{
			"A": "cached", "B": "params changed: suffix", "C": "cached", "D": "upstream B will run",
		}, []string{"B", "D"}},
		{"param back to a cached value", func() { d.st["B"].suffix = "-b" }, map[string]string{
			"A": "cached", "B": "cached", "C": "cached", "D": "cached",
		}, nil},
		// C re-runs but writes the same bytes, so D's key is unchanged.
		{"version of C", func() { d.st["C"].version = "2" }, map[string]string{
			"A": "cached", "B": "cached", "C": "version changed: 1 -> 2", "D": "upstream C will run",
		}, []string{"C"}},
		{"external content", func() { touch(d.src, "HELLO", time.Hour) }, map[string]string{
			"A": "input in changed", "B": "upstream A will run", "C": "input in changed", "D": "upstream B will run",
		}, []string{"A", "B", "C", "D"}},
		{"external rewritten quickly, same size", func() { writeFile(t, d.src, "hullo") }, map[string]string{
			"A": "input in changed", "B": "upstream A will run", "C": "input in changed", "D": "upstream B will run",
		}, []string{"A", "B", "C", "D"}},
	}
	for _, st := range steps {
		st.change()
		if got := planReasons(t, d.g, o); !reflect.DeepEqual(got, st.plan) {
			t.Errorf("%s: plan reasons\n got %v\nwant %v", st.name, got, st.plan)
		}
		before := map[string]int{}
		for _, id := range []string{"A", "B", "C", "D"} {
			before[id] = d.calls.get(id)
		}
		res := mustRun(t, d.g, o)
		var ran []string
		for _, id := range []string{"A", "B", "C", "D"} {
			switch n := d.calls.get(id) - before[id]; n {
			case 0:
			case 1:
				ran = append(ran, id)
			default:
				t.Errorf("%s: %s ran %d times", st.name, id, n)
			}
			if wantRun := contains(st.ran, id); (res.Nodes[id].Status == Done) != wantRun {
				t.Errorf("%s: %s status %v, want ran=%v", st.name, id, res.Nodes[id].Status, wantRun)
			}
		}
		if !reflect.DeepEqual(ran, st.ran) {
			t.Errorf("%s: ran %v, want %v", st.name, ran, st.ran)
		}
		want := strings.ToUpper(readFile(t, d.src)[:1]) // sanity of content flow
		if got := readFile(t, res.Nodes["D"].Outputs["out"]); !strings.HasPrefix(strings.ToUpper(got), want) {
			t.Errorf("%s: D.out = %q", st.name, got)
		}
	}
	o.Force = true
	for id, r := range planReasons(t, d.g, o) {
		if r != "forced" {
			t.Errorf("forced plan %s: reason %q", id, r)
		}
	}
	n := d.calls.total()
	res := mustRun(t, d.g, o)
	if got := d.calls.total() - n; got != 4 {
		t.Errorf("forced run called %d stages, want 4", got)
	}
	for id, nr := range res.Nodes {
		if nr.Status != Done || nr.Reason != "forced" {
			t.Errorf("forced run %s: status %v reason %q", id, nr.Status, nr.Reason)
		}
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// An upstream that re-runs but writes the same bytes leaves its dependents
// cached: their input digests, hence keys, are unchanged.
func TestEarlyCutoff(t *testing.T) {
	d := newDiamond(t)
	o := d.opts(1)
	mustRun(t, d.g, o)
	d.st["A"].version = "2"
	res := mustRun(t, d.g, o)
	want := map[string]EventKind{"A": Done, "B": Cached, "C": Cached, "D": Cached}
	if got := statuses(res); !reflect.DeepEqual(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}

// barrier releases its waiters once n have arrived.
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	open    chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

func (b *barrier) wait(ctx context.Context) error {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestConcurrency(t *testing.T) {
	t.Run("jobs=3 overlaps independent nodes", func(t *testing.T) {
		dir := t.TempDir()
		bar := newBarrier(3)
		g := &Graph{}
		for i := range 3 {
			g.Add(&Node{ID: fmt.Sprint("n", i), Outputs: []string{"out"}, Stage: &catStage{
				suffix: fmt.Sprint(i),
				hook: func(ctx context.Context, io *IO) error {
					for i := range 50 {
						io.Logf("tick %d", i) // observer calls must be serialised
					}
					return bar.wait(ctx)
				},
			}})
		}
		rec := &recorder{t: t}
		// If the runner ran fewer than 3 at once the barrier would never
		// open; the deadline turns that hang into a failure.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := Run(ctx, g, Options{WorkDir: dir, Jobs: 3, Observer: rec}); err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
	for _, jobs := range []int{1, 2} {
		t.Run(fmt.Sprint("jobs=", jobs, " bounds concurrency"), func(t *testing.T) {
			dir := t.TempDir()
			var cur, peak atomic.Int32
			g := &Graph{}
			for i := range 6 {
				g.Add(&Node{ID: fmt.Sprint("n", i), Outputs: []string{"out"}, Stage: &catStage{
					suffix: fmt.Sprint(i),
					hook: func(ctx context.Context, io *IO) error {
						c := cur.Add(1)
						for {
							p := peak.Load()
							if c <= p || peak.CompareAndSwap(p, c) {
								break
							}
						}
						for range 1000 { // give others a chance to overlap
							runtime.Gosched()
						}
						cur.Add(-1)
						if io.Workers() < 1 {
							return errors.New("workers < 1")
						}
						return nil
					},
				}})
			}
			mustRun(t, g, Options{WorkDir: dir, Jobs: jobs})
			if p := peak.Load(); int(p) > jobs {
				t.Errorf("peak concurrency %d > jobs %d", p, jobs)
			}
		})
	}
}

func TestFailureSkipsDependents(t *testing.T) {
	d := newDiamond(t)
	boom := errors.New("boom")
	d.st["A"].hook = func(context.Context, *IO) error { return boom }
	rec := &recorder{t: t}
	o := d.opts(2)
	o.Observer = rec
	res, err := Run(context.Background(), d.g, o)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "node A (stage cat)") {
		t.Fatalf("Run error %v, want boom naming node A", err)
	}
	want := map[string]EventKind{"A": Failed, "B": Skipped, "C": Done, "D": Skipped}
	if got := statuses(res); !reflect.DeepEqual(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	for _, id := range []string{"B", "D"} {
		nr := res.Nodes[id]
		if nr.Reason != "upstream A failed" || !errors.Is(nr.Err, ErrSkipped) {
			t.Errorf("%s: reason %q err %v", id, nr.Reason, nr.Err)
		}
		if d.calls.get(id) != 0 {
			t.Errorf("%s ran", id)
		}
	}
	if got := rec.kinds()["B"]; !reflect.DeepEqual(got, []EventKind{Planned, Skipped}) {
		t.Errorf("B events %v", got)
	}
	if got := readFile(t, res.Nodes["C"].Outputs["out"]); got != "hello-c" {
		t.Errorf("C.out = %q", got)
	}
	// Only C made a cache entry; fixing A runs A, B, D and takes C from cache.
	if got := len(cacheEntries(t, o.WorkDir)); got != 1 {
		t.Errorf("%d cache entries, want 1", got)
	}
	d.st["A"].hook = nil
	res = mustRun(t, d.g, o)
	want = map[string]EventKind{"A": Done, "B": Done, "C": Cached, "D": Done}
	if got := statuses(res); !reflect.DeepEqual(got, want) {
		t.Errorf("after fix: statuses %v, want %v", got, want)
	}
}

func TestFailFast(t *testing.T) {
	dir := t.TempDir()
	calls := &counter{}
	started := make(chan struct{})
	boom := errors.New("boom")
	g := &Graph{}
	g.Add(&Node{ID: "A", Outputs: []string{"out"}, Stage: &catStage{suffix: "a", calls: calls,
		hook: func(ctx context.Context, io *IO) error {
			select {
			case <-started: // S is running
			case <-ctx.Done():
				return ctx.Err()
			}
			return boom
		}}})
	g.Add(&Node{ID: "S", Outputs: []string{"out"}, Stage: &catStage{suffix: "s", calls: calls,
		hook: func(ctx context.Context, io *IO) error {
			close(started)
			<-ctx.Done() // only fail-fast cancellation ends this stage
			return ctx.Err()
		}}})
	g.Add(&Node{ID: "E", Outputs: []string{"out"}, Stage: &catStage{suffix: "e", calls: calls}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := Run(ctx, g, Options{WorkDir: dir, Jobs: 2, FailFast: true})
	if !errors.Is(err, boom) {
		t.Fatalf("Run error %v, want boom", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Errorf("error %v includes the interrupted node", err)
	}
	if nr := res.Nodes["S"]; nr.Status != Failed || !errors.Is(nr.Err, context.Canceled) || !strings.Contains(nr.Reason, "fail-fast after A") {
		t.Errorf("S: %+v", nr)
	}
	if nr := res.Nodes["E"]; nr.Status != Skipped || calls.get("E") != 0 || !strings.Contains(nr.Reason, "cancelled") {
		t.Errorf("E: %+v, calls %d", nr, calls.get("E"))
	}
	if got := cacheEntries(t, dir); len(got) != 0 {
		t.Errorf("cache entries %v, want none", got)
	}
}

func TestNoCacheEntryOnFailure(t *testing.T) {
	tests := []struct {
		name string
		hook func(ctx context.Context, io *IO) error
		want string
	}{
		{"error after writing", func(ctx context.Context, io *IO) error {
			writeFile(t, io.Output("out"), "partial")
			return errors.New("disk full")
		}, "disk full"},
		{"panic after writing", func(ctx context.Context, io *IO) error {
			writeFile(t, io.Output("out"), "partial")
			panic("bad shape")
		}, "stage panicked: bad shape"},
		{"missing output", nil, `did not write output "extra"`},
		{"undeclared input", func(ctx context.Context, io *IO) error {
			io.Input("nope")
			return nil
		}, `has no input "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			outs := []string{"out"}
			if tc.hook == nil {
				outs = append(outs, "extra")
			}
			g := &Graph{}
			g.Add(&Node{ID: "A", Outputs: outs, Stage: &catStage{hook: tc.hook}})
			g.Add(&Node{ID: "B", Outputs: []string{"out"}, Stage: &catStage{ins: []string{"x"}}, Inputs: map[string]Ref{"x": Out("A", "out")}})
			res, err := Run(context.Background(), g, Options{WorkDir: dir, Jobs: 1})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run error %v, want %q", err, tc.want)
			}
			if strings.HasPrefix(tc.name, "panic") {
				var pe *PanicError
				if !errors.As(res.Nodes["A"].Err, &pe) || len(pe.Stack) == 0 {
					t.Errorf("A error %v is not a *PanicError with a stack", res.Nodes["A"].Err)
				}
			}
			if got := cacheEntries(t, dir); len(got) != 0 {
				t.Errorf("cache entries %v, want none", got)
			}
			if got := dirNames(t, filepath.Join(dir, "tmp")); len(got) != 0 {
				t.Errorf("tmp holds %v", got)
			}
			if _, err := os.Stat(filepath.Join(dir, "state", "nodes", "A.json")); err == nil {
				t.Error("state recorded for failed node")
			}
		})
	}
}

func TestCancel(t *testing.T) {
	d := newDiamond(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.st["B"].hook = func(c context.Context, io *IO) error {
		writeFile(t, io.Output("out"), "half")
		cancel() // Ctrl-C while B runs
		<-c.Done()
		return nil // even a stage that claims success is not promoted
	}
	o := d.opts(1)
	res, err := Run(ctx, d.g, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error %v, want context.Canceled", err)
	}
	if res == nil || len(res.Nodes) != 4 {
		t.Fatalf("result %+v, want all 4 nodes", res)
	}
	if res.Nodes["A"].Status != Done || res.Nodes["B"].Status != Failed || res.Nodes["D"].Status != Skipped {
		t.Errorf("statuses %v", statuses(res))
	}
	for _, e := range cacheEntries(t, o.WorkDir) {
		if filepath.Base(e) == res.Nodes["B"].Key.String() {
			t.Errorf("cancelled node B promoted to %s", e)
		}
	}
	d.st["B"].hook = nil
	res = mustRun(t, d.g, o)
	if got := readFile(t, res.Nodes["B"].Outputs["out"]); got != "hello-a-b" {
		t.Errorf("B.out after rerun = %q", got)
	}
}

func TestLeftoversIgnored(t *testing.T) {
	d := newDiamond(t)
	o := d.opts(1)
	res := mustRun(t, d.g, o)
	// A crash left a half-built entry in tmp and a manifest-less entry at
	// C's final location.
	junk := filepath.Join(o.WorkDir, "tmp", "A-123", "out")
	os.MkdirAll(filepath.Dir(junk), 0o755)
	writeFile(t, junk, "junk")
	cdir := filepath.Dir(res.Nodes["C"].Outputs["out"])
	if err := os.Remove(filepath.Join(cdir, manifestName)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(cdir, "out"), "garbage")
	if r := planReasons(t, d.g, o); r["C"] != "no cache entry" || r["A"] != "cached" {
		t.Errorf("plan %v", r)
	}
	res = mustRun(t, d.g, o)
	if res.Nodes["C"].Status != Done || d.calls.get("C") != 2 {
		t.Errorf("C: %v after %d calls", res.Nodes["C"].Status, d.calls.get("C"))
	}
	if got := readFile(t, res.Nodes["C"].Outputs["out"]); got != "hello-c" {
		t.Errorf("C.out = %q", got)
	}
	if got := dirNames(t, filepath.Join(o.WorkDir, "tmp")); len(got) != 0 {
		t.Errorf("tmp holds %v after run", got)
	}
}

func TestLockWorkDirBusy(t *testing.T) {
	d := newDiamond(t)
	o := d.opts(1)
	os.MkdirAll(o.WorkDir, 0o755)
	unlock, err := lockWorkDir(o.WorkDir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockWorkDir(o.WorkDir)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), fmt.Sprintf("in use by another runner (pid %d)", os.Getpid())) {
		t.Errorf("LockWorkDir on a locked workdir: %v", err)
	}
	mustRun(t, d.g, o) // a Run takes no workdir lock
	unlock()
}

// dirStage writes a directory output with one file per shard.
type dirStage struct{ shards int }

func (s dirStage) Name() string    { return "shard" }
func (s dirStage) Version() string { return "1" }
func (s dirStage) Params() any     { return s }
func (s dirStage) Run(ctx context.Context, io *IO) error {
	out := io.Output("parts")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for i := range s.shards {
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("part-%03d", i)), []byte(fmt.Sprint(i)), 0o644); err != nil {
			return err
		}
	}
	io.Logf("wrote %d shards", s.shards)
	io.Progress(int64(s.shards), int64(s.shards))
	return nil
}

func TestDirectoryOutputAndDeterminism(t *testing.T) {
	var keys []string
	for _, jobs := range []int{1, 3} {
		dir := t.TempDir()
		g := &Graph{}
		g.Add(&Node{ID: "S", Outputs: []string{"parts"}, Stage: dirStage{shards: 4}})
		g.Add(&Node{ID: "T", Outputs: []string{"out"}, Stage: &catStage{ins: []string{"p"}}, Inputs: map[string]Ref{"p": Out("S", "parts")}})
		rec := &recorder{t: t}
		_, err := Run(context.Background(), g, Options{WorkDir: dir, Jobs: jobs, Observer: rec})
		// T reads a directory as a file: it must fail, naming T.
		if err == nil || !strings.Contains(err.Error(), "node T") {
			t.Fatalf("Run: %v", err)
		}
		g.Nodes[1].Stage = &catStage{}
		g.Nodes[1].Inputs = map[string]Ref{"p": Out("S", "parts")}
		res := mustRun(t, g, Options{WorkDir: dir, Jobs: jobs})
		if res.Nodes["S"].Status != Cached {
			t.Errorf("S not cached on second run")
		}
		parts := dirNames(t, res.Nodes["S"].Outputs["parts"])
		if len(parts) != 4 {
			t.Errorf("parts %v", parts)
		}
		keys = append(keys, string(res.Nodes["S"].Key+res.Nodes["T"].Key))
		var logged bool
		for _, e := range rec.events {
			logged = logged || (e.Kind == Log && e.Msg == "wrote 4 shards" && e.Node == "S")
		}
		if !logged {
			t.Error("no Log event from S")
		}
	}
	if keys[0] != keys[1] {
		t.Errorf("keys differ between job counts: %v", keys)
	}
}

func TestExternalChangedWhileRunning(t *testing.T) {
	d := newDiamond(t)
	d.st["A"].hook = func(context.Context, *IO) error {
		writeFile(t, d.src, "changed!")
		return nil
	}
	o := d.opts(1)
	res, err := Run(context.Background(), d.g, o)
	if err == nil || !strings.Contains(err.Error(), "changed while the node ran") {
		t.Fatalf("Run error %v", err)
	}
	if res.Nodes["A"].Status != Failed {
		t.Errorf("A: %v", res.Nodes["A"].Status)
	}
	d.st["A"].hook = nil
	res = mustRun(t, d.g, o)
	if got := readFile(t, res.Nodes["D"].Outputs["out"]); got != "changed!-a-bchanged!-c-d" {
		t.Errorf("D.out = %q", got)
	}
}

// TestIdle: with Jobs 2, Idle is called once the short node has finished
// while the long one still runs (one free slot), and never while both run.
func TestIdle(t *testing.T) {
	dir := t.TempDir()
	var running atomic.Int32
	idle := make(chan int, 100)
	started := newBarrier(2)
	g := &Graph{}
	g.Add(&Node{ID: "short", Outputs: []string{"out"}, Stage: &catStage{suffix: "s", hook: func(ctx context.Context, io *IO) error {
		running.Add(1)
		defer running.Add(-1)
		return started.wait(ctx)
	}}})
	g.Add(&Node{ID: "long", Outputs: []string{"out"}, Stage: &catStage{suffix: "l", hook: func(ctx context.Context, io *IO) error {
		running.Add(1)
		defer running.Add(-1)
		if err := started.wait(ctx); err != nil {
			return err
		}
		select { // the short node ends; the scheduler reports the free slot
		case free := <-idle:
			if free != 1 {
				return fmt.Errorf("Idle(%d), want 1 free slot", free)
			}
			return nil
		case <-ctx.Done():
			return errors.New("Idle was not called while the long node ran alone")
		}
	}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := Run(ctx, g, Options{WorkDir: dir, Jobs: 2, Idle: func(free int) {
		if n := running.Load(); n >= 2 {
			t.Errorf("Idle(%d) while %d nodes run", free, n)
		}
		idle <- free
	}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
}
