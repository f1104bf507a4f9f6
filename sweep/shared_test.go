package sweep_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"goldstone/experiment"
	"goldstone/runs"
	"goldstone/sweep"
)

// Runners share a workdir and a database: two experiments run at once, and
// the same experiment started a second time while it runs is refused (one
// owner per run), without a trace.
func TestTwoExperimentsShareAWorkdir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg, err := experiment.ParseConfig("t.toml", []byte(`
[experiments.own]
pipeline = "test-owner"
[experiments.own.grid]
seed = [1, 2]
[experiments.other]
pipeline = "test-owner"
[experiments.other.grid]
seed = [3]
`))
	if err != nil {
		t.Fatal(err)
	}
	opts := sweep.RunOptions{WorkDir: filepath.Join(dir, "work"), Jobs: 2, Cores: 2}
	started, release := resetOwnerGate()
	type result struct {
		out *sweep.Outcome
		err error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		out, err := sweep.Execute(ctx, st, cfg.Experiments["own"], sweep.Local{}, opts)
		first <- result{out, err}
	}()
	waitStarted(t, started)
	// The same experiment again, while it runs: refused, nothing written.
	_, err = sweep.Execute(ctx, st, cfg.Experiments["own"], sweep.Local{}, opts)
	var oe *runs.OwnedError
	if !errors.As(err, &oe) || oe.RunID != 1 {
		t.Fatalf("the same experiment twice at once: %v, want an OwnedError naming run 1", err)
	}
	// Another experiment on the same workdir and database: it runs.
	go func() {
		out, err := sweep.Execute(ctx, st, cfg.Experiments["other"], sweep.Local{}, opts)
		second <- result{out, err}
	}()
	for range 2 { // the other trial of the first, and the second's
		waitStarted(t, started)
	}
	close(release)
	for _, ch := range []chan result{first, second} {
		r := <-ch
		if r.err != nil || r.out.Status != runs.StatusFinished {
			t.Fatalf("run: %v, %+v", r.err, r.out)
		}
	}
	rs, err := st.Runs(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Errorf("%d runs, want 2 (the refused twin leaves none)", len(rs))
	}
}
