package runs

import (
	"context"
	"errors"
	"testing"
)

// Runners share a workdir and a database: a run of a configuration that a
// live runner is running is not created twice (one owner per run), in the
// transaction that would create it; another configuration, or the same
// after its owner is gone, is created.
func TestCreateOwnedRun(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	live := liveChild(t)
	info := RunInfo{Experiment: "e", ConfigHash: "h1"}
	info.SetOwner(live)
	first, err := s.CreateOwnedRun(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	twin := info
	twin.SetOwner(Self())
	_, err = s.CreateOwnedRun(ctx, twin)
	var oe *OwnedError
	if !errors.As(err, &oe) || oe.RunID != first || oe.Owner.PID != live.PID {
		t.Fatalf("a twin of a live runner's run: %v, want an OwnedError naming run %d", err, first)
	}
	if rs, _ := s.Runs(ctx, "e"); len(rs) != 1 {
		t.Fatalf("%d runs after a refused twin, want 1", len(rs))
	}
	other := twin
	other.ConfigHash = "h2"
	if _, err := s.CreateOwnedRun(ctx, other); err != nil {
		t.Errorf("another configuration beside a live run: %v", err)
	}
	gone := info
	gone.Experiment = "g"
	gone.SetOwner(goneChild(t))
	if _, err := s.CreateOwnedRun(ctx, gone); err != nil {
		t.Fatal(err)
	}
	again := gone
	again.SetOwner(Self())
	if _, err := s.CreateOwnedRun(ctx, again); err != nil {
		t.Errorf("the same configuration as a dead runner's run: %v", err)
	}
}

// gc owns the runs it deletes (ClaimRun): it may delete a run running
// under its own token, never one running under another owner.
func TestDeleteOwnedRuns(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	live := liveChild(t)
	gc := Self()
	mine := ownedRun(t, s, live, StatusRunning, ExecutorLocal)
	if err := s.FinishRun(ctx, mine, StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimRun(ctx, mine, gc); err != nil {
		t.Fatal(err)
	}
	theirs := ownedRun(t, s, live, StatusRunning, ExecutorLocal)
	if _, err := s.DeleteOwnedRuns(ctx, []int64{mine, theirs}, gc, false); err == nil {
		t.Fatal("deleted a run a live runner owns")
	}
	if rs, _ := s.Runs(ctx, "e"); len(rs) != 2 {
		t.Fatalf("%d runs after a refused deletion, want 2 (nothing deleted)", len(rs))
	}
	if _, err := s.DeleteRuns(ctx, []int64{mine}, false); err == nil {
		t.Error("DeleteRuns deleted a running run")
	}
	if _, err := s.DeleteOwnedRuns(ctx, []int64{mine}, gc, false); err != nil {
		t.Fatalf("gc's own claimed run: %v", err)
	}
	if rs, _ := s.Runs(ctx, "e"); len(rs) != 1 || rs[0].ID != theirs {
		t.Errorf("runs left %+v, want only %d", rs, theirs)
	}
}
