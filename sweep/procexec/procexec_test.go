package procexec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"goldstone/internal/slurm"
	"goldstone/sweep/slurmexec"
)

// waitFor polls cond until it holds, or fails after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newSched(t *testing.T, jobs int) (*Scheduler, string) {
	dir := t.TempDir()
	s := New(slurmexec.Config{WorkDir: dir, Jobs: jobs, Dispatch: true})
	s.Poll = 10 * time.Millisecond
	t.Cleanup(s.Close) // before TempDir's removal (cleanups run last first)
	return s, dir
}

// TestArrayRunsEveryTaskWithinTheLimit: an array's tasks each run its
// script once, with their index, their output in their file, never more
// than the limit at once; then the queue lists none and accounting says
// how each ended.
func TestArrayRunsEveryTaskWithinTheLimit(t *testing.T) {
	s, dir := newSched(t, 2)
	ctx := context.Background()
	script := `#!/bin/sh
d='` + dir + `'
n=$(ls "$d"/running.* 2>/dev/null | wc -l); echo "$n" >> "$d/concurrent"
touch "$d/running.$SLURM_ARRAY_TASK_ID"; sleep 0.2; rm "$d/running.$SLURM_ARRAY_TASK_ID"
echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID"
[ "$SLURM_ARRAY_TASK_ID" != 3 ]
`
	id, err := s.Submit(ctx, &slurm.Job{Name: "t", Array: "0-4", Chdir: dir, Output: filepath.Join(dir, "logs", "%A_%a.out"), Script: script})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the array's end", func() bool {
		q, err := s.Queue(ctx, id)
		return err == nil && len(q) == 0
	})
	waitFor(t, time.Minute, "every end recorded", func() bool {
		a, _ := s.Accounting(ctx, id)
		return len(a) == 5
	})
	acct, _ := s.Accounting(ctx, id)
	for i := 0; i < 5; i++ {
		want := "COMPLETED"
		if i == 3 {
			want = "FAILED"
		}
		if acct[i] != want {
			t.Errorf("task %d: %q, want %q", i, acct[i], want)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "logs", id+"_"+string(rune('0'+i))+".out"))
		if got := strings.TrimSpace(string(b)); got != "task "+string(rune('0'+i))+" of "+id {
			t.Errorf("task %d's output %q", i, got)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "concurrent"))
	for _, n := range strings.Fields(string(b)) {
		if n != "0" && n != "1" {
			t.Errorf("a task started with %s others running: limit 2", n)
		}
	}
	if _, err := s.Submit(ctx, &slurm.Job{Name: "dep", Dependency: "afterok:1", Script: "#!/bin/sh\n"}); err == nil {
		t.Error("a dependent job was accepted")
	}
}

// TestCancelAndAdoption: a scheduler that does not dispatch (the runner
// that submitted is gone) leaves the tasks pending; cancelling one job
// drops its pending tasks, and a dispatching scheduler adopts the other
// and runs it; a running task gets SIGTERM.
func TestCancelAndAdoption(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	gone := New(slurmexec.Config{WorkDir: dir, Jobs: 1})
	gone.self.PID = 1 << 30 // a dispatcher that is not alive
	gone.once.Do(func() {}) // and never dispatches here
	quick := "#!/bin/sh\necho ran > '" + dir + "/ran.$SLURM_ARRAY_TASK_ID'\n"
	a, err := gone.Submit(ctx, &slurm.Job{Name: "a", Array: "0-1", Chdir: dir, Script: quick})
	if err != nil {
		t.Fatal(err)
	}
	b, err := gone.Submit(ctx, &slurm.Job{Name: "b", Array: "0", Chdir: dir, Script: "#!/bin/sh\nexec sleep 60\n"})
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := gone.QueueByName(ctx, "a,b"); len(q) != 3 || q[0].State != "PENDING" {
		t.Fatalf("queue before adoption: %+v", q)
	}
	if err := gone.Cancel(ctx, a, -1); err != nil {
		t.Fatal(err)
	}
	s, _ := newSched(t, 1)
	s.dir = gone.dir
	waitFor(t, time.Minute, "job b adopted and started", func() bool {
		q, _ := s.Queue(ctx, b)
		return len(q) == 1 && q[0].State == "RUNNING"
	})
	if q, _ := s.Queue(ctx, a); len(q) != 0 {
		t.Errorf("cancelled job a still queued: %+v", q)
	}
	if err := s.Cancel(ctx, b, -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "job b stopped", func() bool {
		acct, _ := s.Accounting(ctx, b)
		q, _ := s.Queue(ctx, b)
		return acct[0] == "CANCELLED" && len(q) == 0
	})
	if m, _ := filepath.Glob(filepath.Join(dir, "ran.*")); len(m) != 0 {
		t.Errorf("cancelled tasks ran: %v", m)
	}
}
