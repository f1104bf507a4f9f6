//go:build unix

package pipeline

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Two Runs of the same graph at once on one workdir (two runners sharing
// it): every node is computed once, by one of them, and the other reads
// the finished entry.
func TestSharedEntryComputedOnce(t *testing.T) {
	d := newDiamond(t)
	started := make(chan struct{})
	var once sync.Once
	d.st["A"].hook = func(ctx context.Context, io *IO) error {
		once.Do(func() { close(started) })
		time.Sleep(300 * time.Millisecond) // the other Run comes meanwhile
		return nil
	}
	o := d.opts(2)
	var wg sync.WaitGroup
	res := make([]*Result, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 1 {
				<-started // A is being computed by the first
			}
			res[i], errs[i] = Run(context.Background(), d.g, o)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	for _, id := range []string{"A", "B", "C", "D"} {
		if n := d.calls.get(id); n != 1 {
			t.Errorf("node %s computed %d times, want once", id, n)
		}
		a, b := res[0].Nodes[id], res[1].Nodes[id]
		if a.Outputs["out"] != b.Outputs["out"] || readFile(t, a.Outputs["out"]) != readFile(t, b.Outputs["out"]) {
			t.Errorf("node %s: the runs read %v and %v", id, a.Outputs, b.Outputs)
		}
	}
	if res[1].Nodes["A"].Status != Cached {
		t.Errorf("A in the second run: %v, want cached (read after the first wrote it)", res[1].Nodes["A"].Status)
	}
	if got := readFile(t, res[0].Nodes["D"].Outputs["out"]); got != "hello-a-bhello-c-d" {
		t.Errorf("D = %q", got)
	}
	if got := dirNames(t, filepath.Join(o.WorkDir, "tmp")); len(got) != 0 {
		t.Errorf("tmp holds %v after the runs", got)
	}
}

// TestHelperHoldEntryLock is not a test: run as a child process by
// TestCrashedHolderReleased, it takes the exclusive lock of the entry named
// in GOLDSTONE_HOLD_ENTRY, says so, and waits to be killed.
func TestHelperHoldEntryLock(t *testing.T) {
	dir := os.Getenv("GOLDSTONE_HOLD_ENTRY")
	if dir == "" {
		t.Skip("a helper process")
	}
	if _, ok, err := tryEntryLock(dir, true); !ok || err != nil {
		os.Stdout.WriteString("failed\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("locked\n")
	time.Sleep(time.Minute)
	os.Exit(1)
}

// A runner that crashes while it computes an entry (killed: SIGKILL)
// leaves no stale lock: the OS releases its flock, and a Run that waited
// for it computes the entry.
func TestCrashedHolderReleased(t *testing.T) {
	d := newDiamond(t)
	o := d.opts(2)
	items, err := Plan(context.Background(), d.g, o)
	if err != nil {
		t.Fatal(err)
	}
	var aDir string
	for _, it := range items {
		if it.Node == "A" {
			aDir = filepath.Join(o.WorkDir, "cache", it.Stage, it.Key.String())
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldEntryLock$")
	cmd.Env = append(os.Environ(), "GOLDSTONE_HOLD_ENTRY="+aDir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("helper: %q", line)
	}
	waiting := make(chan struct{}, 1)
	o.Observer = ObserverFunc(func(e Event) {
		if e.Kind == Log && e.Node == "A" && strings.Contains(e.Msg, "waiting for another runner") {
			select {
			case waiting <- struct{}{}:
			default:
			}
		}
	})
	done := make(chan error, 1)
	var res *Result
	go func() {
		var err error
		res, err = Run(context.Background(), d.g, o)
		done <- err
	}()
	select {
	case <-waiting:
	case err := <-done:
		t.Fatalf("Run ended beside a held entry lock: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no wait for the held entry")
	}
	if d.calls.get("A") != 0 {
		t.Fatal("A computed while another process held its lock")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res.Nodes["A"].Status != Done || d.calls.get("A") != 1 {
		t.Errorf("A after its holder died: %v, %d calls", res.Nodes["A"].Status, d.calls.get("A"))
	}
}

// gc and Verify's eviction remove an entry only when no runner uses it: a
// Run holds every entry it used (shared) until it returns.
func TestRemoveEntryInUse(t *testing.T) {
	d := newDiamond(t)
	o := d.opts(1)
	first := mustRun(t, d.g, o)
	aDir := filepath.Dir(first.Nodes["A"].Outputs["out"])
	release := make(chan struct{})
	inD := make(chan struct{})
	d.st["D"].version = "2" // D runs again; A, B, C come from the cache
	d.st["D"].hook = func(ctx context.Context, io *IO) error {
		close(inD)
		<-release
		return nil
	}
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), d.g, o)
		done <- err
	}()
	<-inD
	if err := RemoveEntry(o.WorkDir, aDir); !errors.Is(err, ErrEntryInUse) {
		t.Errorf("RemoveEntry of an entry a live Run uses: %v, want ErrEntryInUse", err)
	}
	if _, err := os.Stat(aDir); err != nil {
		t.Fatalf("entry removed under a live Run: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := RemoveEntry(o.WorkDir, aDir); err != nil {
		t.Fatalf("RemoveEntry after the Run: %v", err)
	}
	if _, err := os.Stat(aDir); !os.IsNotExist(err) {
		t.Errorf("entry still there: %v", err)
	}
	if _, err := os.Stat(aDir + ".lock"); !os.IsNotExist(err) {
		t.Errorf("lock file of a removed entry still there: %v", err)
	}
	if got := dirNames(t, filepath.Join(o.WorkDir, "tmp")); len(got) != 0 {
		t.Errorf("tmp holds %v", got)
	}
}

// A scratch directory a crashed runner left under tmp is removed by the
// next Run; a live runner's (locked) is kept.
func TestStaleScratchCleared(t *testing.T) {
	d := newDiamond(t)
	o := d.opts(1)
	tmp := filepath.Join(o.WorkDir, "tmp")
	dead, live := filepath.Join(tmp, "run-1-1"), filepath.Join(tmp, "run-2-2")
	for _, p := range []string{dead, live} {
		if err := os.MkdirAll(filepath.Join(p, "A-x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	unlock, err := lockDir(live)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	old := time.Now().Add(-2 * scratchGrace)
	for _, p := range []string{dead, live} {
		os.Chtimes(p, old, old)
	}
	mustRun(t, d.g, o)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead runner's scratch is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live runner's scratch was removed: %v", err)
	}
}
