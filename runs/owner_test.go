package runs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// liveChild starts a process that lives until the test ends and returns
// it as an owner (its start time recorded where the OS tells it).
func liveChild(t *testing.T) Owner {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep command: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	host, _ := os.Hostname()
	started, _, _ := procStart(cmd.Process.Pid)
	return Owner{Host: host, PID: cmd.Process.Pid, Started: started, Token: "child"}
}

// goneChild returns as an owner a process that has exited (and been
// reaped): a runner killed before it could end its run.
func goneChild(t *testing.T) Owner {
	t.Helper()
	cmd := exec.Command("sleep", "0")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep command: %v", err)
	}
	host, _ := os.Hostname()
	started, _, _ := procStart(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return Owner{Host: host, PID: cmd.Process.Pid, Started: started, Token: "gone"}
}

// zombieChild returns as an owner a process that was killed and not yet
// reaped.
func zombieChild(t *testing.T) Owner {
	t.Helper()
	o := liveChild(t)
	p, err := os.FindProcess(o.PID)
	if err != nil {
		t.Fatal(err)
	}
	p.Kill()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, found, _ := procStart(o.PID); !found {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d is no zombie after 10s", o.PID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestOwnerLiveness(t *testing.T) {
	self := Self()
	live := liveChild(t)
	linux := runtime.GOOS == "linux"
	if linux && (self.Started == "" || live.Started == "") {
		t.Fatalf("no start time on Linux: self %q, child %q", self.Started, live.Started)
	}
	for _, c := range []struct {
		name      string
		owner     Owner
		want      Liveness
		linuxOnly bool
	}{
		{"this process", self, OwnerAlive, false},
		{"a live process", live, OwnerAlive, false},
		{"a live process, no start time recorded (before schema 9)", Owner{Host: live.Host, PID: live.PID}, OwnerAlive, false},
		{"a recycled pid: this process's pid, another start time", Owner{Host: self.Host, PID: self.PID, Started: self.Started + "0"}, OwnerGone, true},
		{"a recycled pid: a start time of another boot", Owner{Host: live.Host, PID: live.PID, Started: "another-boot" + live.Started[strings.IndexByte(live.Started, ':'):]}, OwnerGone, true},
		{"an exited process", goneChild(t), OwnerGone, false},
		{"a killed process not yet reaped", zombieChild(t), OwnerGone, true},
		{"no pid", Owner{Host: self.Host}, OwnerGone, false},
		{"another host", Owner{Host: self.Host + ".elsewhere", PID: self.PID, Started: self.Started}, OwnerElsewhere, false},
		{"no host", Owner{PID: self.PID, Started: self.Started}, OwnerElsewhere, false},
	} {
		if c.linuxOnly && !linux {
			continue
		}
		if got := c.owner.Liveness(); got != c.want {
			t.Errorf("%s (%+v): liveness %d, want %d", c.name, c.owner, got, c.want)
		}
	}
	if a, b := Self(), Self(); a.Token == b.Token || a.Token == "" {
		t.Errorf("tokens of two claims: %q and %q", a.Token, b.Token)
	}
}

// ownedRun creates a run of experiment "e" owned by o with the given
// status and executor.
func ownedRun(t *testing.T, s *Store, o Owner, status, executor string) int64 {
	t.Helper()
	ctx := context.Background()
	info := RunInfo{Experiment: "e", Status: status}
	info.SetOwner(o)
	id, err := s.CreateRun(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetExecutor(ctx, id, executor); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestClaimRun(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	live := liveChild(t)
	me := Self()

	// A run that a live runner works on is refused, naming the run and
	// its owner, and left as it is.
	id := ownedRun(t, s, live, StatusRunning, ExecutorLocal)
	err := s.ClaimRun(ctx, id, me)
	var oe *OwnedError
	if !errors.As(err, &oe) || oe.RunID != id || oe.Owner.PID != live.PID {
		t.Fatalf("claim of a run a live runner owns: %v", err)
	}
	for _, want := range []string{"run 1 of e is in progress", "pid " + strconv.Itoa(live.PID), "on " + live.Host} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if r, _ := s.Run(ctx, id); r.Owner() != live || r.Status != StatusRunning {
		t.Errorf("after a refused claim: owner %+v, status %s; want %+v, running", r.Owner(), r.Status, live)
	}
	// Its owner claims it again.
	if err := s.ClaimRun(ctx, id, live); err != nil {
		t.Errorf("the owner's own claim: %v", err)
	}

	for _, c := range []struct {
		name             string
		owner            Owner
		status, executor string
	}{
		{"killed runner's run", goneChild(t), StatusRunning, ExecutorLocal},
		{"interrupted run", goneChild(t), StatusInterrupted, ExecutorLocal},
		{"recycled pid", Owner{Host: me.Host, PID: me.PID, Started: me.Started + "0", Token: "old"}, StatusRunning, ExecutorLocal},
		{"live owner on another host (taken over)", Owner{Host: live.Host + ".elsewhere", PID: live.PID, Started: live.Started, Token: "far"}, StatusRunning, ExecutorLocal},
		{"Slurm run with a live submitter (adopted)", live, StatusRunning, ExecutorSlurm},
		{"interrupted run with a live owner", live, StatusInterrupted, ExecutorLocal},
	} {
		if c.name == "recycled pid" && runtime.GOOS != "linux" {
			continue
		}
		id := ownedRun(t, s, c.owner, c.status, c.executor)
		if c.status != StatusRunning {
			if err := s.FinishRun(ctx, id, c.status, ""); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.ClaimRun(ctx, id, me); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		r, err := s.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Owner() != me || r.Status != StatusRunning || !r.Ended.IsZero() {
			t.Errorf("%s: after the claim owner %+v, status %s, ended %v; want %+v, running, no end", c.name, r.Owner(), r.Status, r.Ended, me)
		}
	}
	if err := s.ClaimRun(ctx, 999, me); !errors.Is(err, ErrNotFound) {
		t.Errorf("claim of run 999: %v", err)
	}
}

// TestFinishOwnedRun: a runner whose run was taken over (from another
// host, which could not see that it lives) does not end it.
func TestFinishOwnedRun(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	first := Self()
	first.Host += ".elsewhere"
	id := ownedRun(t, s, first, StatusRunning, ExecutorLocal)
	second := Self()
	if err := s.ClaimRun(ctx, id, second); err != nil {
		t.Fatal(err)
	}
	err := s.FinishOwnedRun(ctx, id, first, StatusInterrupted, "")
	if !errors.Is(err, ErrTakenOver) || !strings.Contains(err.Error(), "on "+second.Host) {
		t.Fatalf("the first owner ends a run taken over: %v", err)
	}
	if r, _ := s.Run(ctx, id); r.Status != StatusRunning || !r.Ended.IsZero() {
		t.Errorf("after the first owner's end: %s, ended %v", r.Status, r.Ended)
	}
	if err := s.FinishOwnedRun(ctx, id, second, StatusFinished, "done"); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Run(ctx, id); r.Status != StatusFinished || r.Ended.IsZero() || r.Note != "done" {
		t.Errorf("after its owner's end: %s, ended %v, note %q", r.Status, r.Ended, r.Note)
	}
	if err := s.FinishOwnedRun(ctx, 999, second, StatusFinished, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("end of run 999: %v", err)
	}
}

// TestMarkRunInterruptedOnlyUnderItsOwner: a run claimed after its
// marker found its owner gone is not marked.
func TestMarkRunInterruptedOnlyUnderItsOwner(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	gone := goneChild(t)
	id := ownedRun(t, s, gone, StatusRunning, ExecutorLocal)
	if err := s.UpsertTrials(ctx, []Trial{{RunID: id, ID: "t", Status: StatusRunning}}); err != nil {
		t.Fatal(err)
	}
	me := Self()
	if err := s.ClaimRun(ctx, id, me); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.MarkRunInterrupted(ctx, id, gone, "gone"); ok || err != nil {
		t.Fatalf("marked a run another runner claimed: %v, %v", ok, err)
	}
	if r, _ := s.Run(ctx, id); r.Status != StatusRunning {
		t.Fatalf("status %s", r.Status)
	}
	if ok, err := s.MarkRunInterrupted(ctx, id, me, "gone"); !ok || err != nil {
		t.Fatalf("mark under its owner: %v, %v", ok, err)
	}
	if ts, _ := s.TrialStatuses(ctx, id); len(ts) != 1 || ts[0].Status != StatusInterrupted || ts[0].Error != "gone" {
		t.Errorf("trials: %+v", ts)
	}
}
