package slurmexec

import (
	"context"
	"testing"

	"goldstone/runs"
)

// TestSameCommandFinishesEndedTasks: the waiting submit stopped (Ctrl-C)
// while its tasks ran; once they have all ended and left the queue, the
// same command collects them and ends the run with its report. Before, it
// failed with "workdir ... is in use by another runner (pid <its own>)":
// the report took the workdir lock that the submission held.
func TestSameCommandFinishesEndedTasks(t *testing.T) {
	fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	wantSums, _ := f.local()
	st := openStore(t, f.opts.DB)
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	runTasks(t, s)
	s2, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatalf("the same command once every task ended: %v", err)
	}
	if s2.RunID != s.RunID || s2.Finished == nil || s2.Finished.Status != runs.StatusFinished || s2.Finished.ReportPath == "" {
		t.Fatalf("the same command: %+v %+v", s2, s2.Finished)
	}
	got, _ := f.read(st, s.RunID)
	sameBits(t, "summaries", got, wantSums)
}
