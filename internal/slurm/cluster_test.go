package slurm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// needCluster skips the test unless sbatch is installed and a controller
// answers (CI starts one with .ci/slurm.sh start).
func needCluster(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sbatch"); err != nil {
		t.Skip("sbatch not on PATH: no Slurm cluster to test against (start one with .ci/slurm.sh start)")
	}
	if out, err := exec.Command("sinfo", "-h", "-o", "%t").CombinedOutput(); err != nil {
		t.Skipf("sbatch is installed but no controller answers (sinfo: %s); start one with .ci/slurm.sh start", oneLine(string(out)))
	}
}

// waitFor polls cond every 200 ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestClusterArrayAndDependency(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	dir := t.TempDir()
	var c Client
	arr, err := c.Submit(ctx, &Job{
		Name: "goldstone-test", Array: ArraySpec([]int{3, 7, 19}, 2), CPUsPerTask: 1, MemMB: 100,
		Output: filepath.Join(dir, "%A_%a.out"), Signal: "B:TERM@120", Chdir: dir,
		Script: "#!/bin/sh\necho task $SLURM_ARRAY_TASK_ID > task-$SLURM_ARRAY_TASK_ID.txt\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	dep, err := c.Submit(ctx, &Job{Dependency: "afterany:" + arr, MemMB: 100, Output: filepath.Join(dir, "collect.out"), Chdir: dir,
		Script: "#!/bin/sh\nls task-*.txt | sort > collected.tmp && mv collected.tmp collected.txt\n"})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := c.Queue(ctx, arr)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks {
		if tk.JobID != arr || !slices.Contains([]int{3, 7, 19}, tk.Index) {
			t.Errorf("queue of %s lists %+v", arr, tk)
		}
	}
	collected := filepath.Join(dir, "collected.txt")
	waitFor(t, 60*time.Second, "the dependent job "+dep, func() bool {
		_, err := os.Stat(collected)
		return err == nil
	})
	b, _ := os.ReadFile(collected)
	if got := strings.Fields(string(b)); !slices.Equal(got, []string{"task-19.txt", "task-3.txt", "task-7.txt"}) {
		t.Errorf("the dependent job saw %q; want the three tasks' files", got)
	}
	for _, i := range []int{3, 7, 19} {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%s_%d.out", arr, i))); err != nil {
			t.Errorf("no log of task %d where --output said: %v", i, err)
		}
	}
}

func TestClusterCancelOneTask(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	dir := t.TempDir()
	var c Client
	arr, err := c.Submit(ctx, &Job{Array: "0-1", MemMB: 100, Output: "/dev/null", Chdir: dir,
		Script: "#!/bin/sh\ntrap 'echo term > term-$SLURM_ARRAY_TASK_ID.txt; exit 143' TERM\ntouch up-$SLURM_ARRAY_TASK_ID.txt\nwhile :; do sleep 0.1; done\n"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Cancel(context.Background(), arr, -1)
	waitFor(t, 60*time.Second, "both tasks running", func() bool {
		_, e0 := os.Stat(filepath.Join(dir, "up-0.txt"))
		_, e1 := os.Stat(filepath.Join(dir, "up-1.txt"))
		return e0 == nil && e1 == nil
	})
	if err := c.Cancel(ctx, arr, 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "task 1 to get SIGTERM", func() bool {
		_, err := os.Stat(filepath.Join(dir, "term-1.txt"))
		return err == nil
	})
	var left []Task
	waitFor(t, 30*time.Second, "task 1 to leave the queue", func() bool {
		left, err = c.Queue(ctx, arr)
		if err != nil {
			t.Fatal(err)
		}
		return len(left) == 1
	})
	if left[0].Index != 0 || left[0].State != "RUNNING" {
		t.Errorf("after cancelling task 1 the queue lists %+v; want task 0 running", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "term-0.txt")); err == nil {
		t.Error("task 0 got SIGTERM too")
	}
}

func TestClusterBadPartition(t *testing.T) {
	needCluster(t)
	var c Client
	_, err := c.Submit(context.Background(), &Job{Partition: "no-such-partition", Output: "/dev/null", Script: "#!/bin/sh\ntrue\n"})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "partition") {
		t.Errorf("err = %v; want one line naming the partition", err)
	}
}

// TestClusterTestSubmitAndMaxArraySize: on a real controller,
// --test-only accepts a request it can run and refuses a bad partition
// and an array index at or over MaxArraySize, read from scontrol.
func TestClusterTestSubmitAndMaxArraySize(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	c := Client{Retries: -1}
	max, err := c.MaxArraySize(ctx)
	if err != nil || max < 1 {
		t.Fatalf("MaxArraySize = %d, %v", max, err)
	}
	ok := &Job{Array: ArraySpec([]int{0, max - 1}, 2), CPUsPerTask: 1, MemMB: 100, Script: "#!/bin/sh\ntrue\n"}
	if err := c.TestSubmit(ctx, ok); err != nil {
		t.Errorf("test-only of %s: %v", ok.Array, err)
	}
	over := &Job{Array: ArraySpec([]int{0, max}, 0), MemMB: 100, Script: "#!/bin/sh\ntrue\n"}
	if err := c.TestSubmit(ctx, over); err == nil {
		t.Errorf("test-only of %s (MaxArraySize %d): accepted", over.Array, max)
	}
	bad := &Job{Partition: "no-such-partition", MemMB: 100, Script: "#!/bin/sh\ntrue\n"}
	if err := c.TestSubmit(ctx, bad); err == nil || !strings.Contains(strings.ToLower(err.Error()), "partition") {
		t.Errorf("test-only on a bad partition: %v", err)
	}
}
