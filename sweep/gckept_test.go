package sweep_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"goldstone/internal/fault"
	"goldstone/runs"
	"goldstone/sweep"
)

// keptDirs are the kept checkpoint directories of a workdir
// (checkpoints/<stage>/resume-<key>).
func keptDirs(t *testing.T, dir string) []string {
	t.Helper()
	d, err := filepath.Glob(filepath.Join(dir, "work", "checkpoints", "*", "resume-*"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// killPruned runs the pruned search in a separate process killed with
// SIGKILL at the fault point kill.
func killPruned(t *testing.T, dir, kill string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPrunedSearchHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOLDSTONE_PRUNED_HELPER="+dir, "GOLDSTONE_PRUNED_HELPER_JOBS=2", fault.Env+"="+kill)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the search was not killed at %s: %v", kill, err)
	}
}

func gcDir(t *testing.T, dir string, dry bool) *sweep.GCReport {
	t.Helper()
	ctx := context.Background()
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep, err := sweep.GC(ctx, st, sweep.GCOptions{KeepLast: 5, DryRun: dry, WorkDir: filepath.Join(dir, "work"), Reports: filepath.Join(dir, "reports")})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestPrunedSearchCheckpointsGo: a pruned search that ends leaves none of
// the checkpoints it kept for its promotions; one killed between waves
// keeps them (gc too: its run is interrupted, a resume needs them) and,
// resumed, records the uninterrupted search's values bit for bit and then
// leaves none; one killed after its run ended but before it removed them
// leaves them to gc, which lists them (dry run) and removes them, freeing
// their bytes.
func TestPrunedSearchCheckpointsGo(t *testing.T) {
	ref := t.TempDir()
	if _, err := runPruned(context.Background(), ref, prunedExp(t), 2); err != nil {
		t.Fatal(err)
	}
	if d := keptDirs(t, ref); len(d) > 0 {
		t.Fatalf("the search ended with %d kept checkpoints left: %v", len(d), d)
	}
	want := readPruned(t, ref, "pr")

	dir := t.TempDir()
	killPruned(t, dir, "search:wave@1")
	kept := keptDirs(t, dir)
	if len(kept) == 0 {
		t.Fatal("a search killed between waves kept no checkpoints")
	}
	rep := gcDir(t, dir, false)
	if rep.Checkpoints.Stale != 0 || rep.Checkpoints.Kept != len(kept) || len(keptDirs(t, dir)) != len(kept) {
		t.Fatalf("gc of an interrupted search: %+v (%d kept directories)", rep.Checkpoints, len(kept))
	}
	if _, err := runPruned(context.Background(), dir, prunedExp(t), 2); err != nil {
		t.Fatal(err)
	}
	samePruned(t, readPruned(t, dir, "pr"), want)
	if d := keptDirs(t, dir); len(d) > 0 {
		t.Fatalf("the resumed search ended with %d kept checkpoints left: %v", len(d), d)
	}

	dir = t.TempDir()
	killPruned(t, dir, "search:pruned@1")
	kept = keptDirs(t, dir)
	if len(kept) == 0 {
		t.Fatal("a search killed before its pruning marks kept no checkpoints")
	}
	rep = gcDir(t, dir, true)
	c := rep.Checkpoints
	if c.Stale != len(kept) || len(c.Removed) != len(kept) || c.StaleBytes <= 0 || !strings.Contains(c.Removed[0].Why, "run 1 of pr finished") {
		t.Fatalf("gc --dry-run after the search's run ended: %+v, want its %d kept checkpoints", c, len(kept))
	}
	if len(keptDirs(t, dir)) != len(kept) {
		t.Fatal("a dry run removed checkpoints")
	}
	if rep = gcDir(t, dir, false); rep.Checkpoints.Stale != len(kept) || rep.Checkpoints.StaleBytes != c.StaleBytes {
		t.Fatalf("gc: %+v", rep.Checkpoints)
	}
	if d := keptDirs(t, dir); len(d) > 0 {
		t.Fatalf("gc left %d checkpoints of an ended search: %v", len(d), d)
	}
}
