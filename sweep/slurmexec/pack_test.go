package slurmexec

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"goldstone/experiment"
	"goldstone/internal/slurm"
	"goldstone/runs"
	"goldstone/sweep/batch"
)

// runPacks runs every task of a packed submission in this process, as
// Slurm would, and returns the trials' results by trial index.
func runPacks(t *testing.T, s *Submission) map[int]*batch.Result {
	t.Helper()
	out := map[int]*batch.Result{}
	for task := range s.Tasks {
		rs, err := PackWorker(context.Background(), WorkerOptions{Dir: s.Dir, Index: task, Attempt: s.Attempt, Workers: 1})
		if err != nil {
			t.Fatalf("task %d: %v", task, err)
		}
		for _, r := range rs {
			if r.Status != batch.Done {
				t.Fatalf("task %d: trial %d %s: %s", task, r.Index, r.Status, r.Error)
			}
			out[r.Index] = r
		}
	}
	return out
}

// TestPackedSweepMatchesLocal: with TrialsPerTask 3 the 4 trials of the
// sweep are 2 array tasks (ceil(4/3)), mapped by packs.1.json; each task
// runs its trials one after another, each writing its own result file;
// status maps a running task to its trials (the first without a result
// running, the others pending), and collect ends the run with values
// equal to the local run's, bit for bit.
func TestPackedSweepMatchesLocal(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	wantSums, wantSeries := f.local()
	st := openStore(t, f.opts.DB)
	f.opts.TrialsPerTask = 3
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Tasks != 2 || s.PerTask != 3 || s.Array != "0-1" || !reflect.DeepEqual(s.Submitted, []int{0, 1, 2, 3}) {
		t.Fatalf("submission %+v", s)
	}
	if a := argsOf(t, fake, s.ArrayJob); !strings.Contains(a, "--array=0-1\n") {
		t.Errorf("array args:\n%s", a)
	}
	if sc, _ := os.ReadFile(filepath.Join(fake, "sbatch."+s.ArrayJob+".script")); !strings.Contains(string(sc), `--attempt 1 --pack --index "$SLURM_ARRAY_TASK_ID"`) {
		t.Errorf("array script:\n%s", sc)
	}
	m, _ := batch.ReadManifest(s.Dir)
	p, err := batch.ReadPacks(s.Dir, m, 1)
	if err != nil || p == nil || !reflect.DeepEqual(p.Tasks, [][]int{{0, 1, 2}, {3}}) {
		t.Fatalf("packs.1.json: %+v, %v", p, err)
	}
	// Task 0 runs (its first trial done), task 1 waits.
	if _, err := runOne(ctx, s.Dir, m, WorkerOptions{Dir: s.Dir, Attempt: 1, Workers: 1}, func() (*experiment.Built, error) { return buildFrozen(ctx, s.Dir, m) }, 0, 0, time.Time{}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte(s.ArrayJob+"_0|RUNNING|None\n"+s.ArrayJob+"_1|PENDING|Priority\n"), 0o644)
	rs, err := Status(ctx, st, s.RunID, f.opts.WorkDir, &slurm.Poller{Client: &slurm.Client{Retries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	var states, tasks []string
	for _, tr := range rs.Trials {
		states = append(states, tr.State)
		tasks = append(tasks, rs.Task(tr.Index))
	}
	j := s.ArrayJob
	if !reflect.DeepEqual(states, []string{"done", "running", "pending", "pending"}) || !reflect.DeepEqual(tasks, []string{j + "_0", j + "_0", j + "_0", j + "_1"}) {
		t.Errorf("status: states %v, tasks %v", states, tasks)
	}
	os.Remove(filepath.Join(fake, "squeue.out"))
	// A task run again (a requeue: restart 1) keeps the result its first
	// execution left and runs only the others.
	rs0, err := PackWorker(ctx, WorkerOptions{Dir: s.Dir, Index: 0, Attempt: 1, Restart: 1, Workers: 1})
	if err != nil || len(rs0) != 2 || rs0[0].Index != 1 || rs0[1].Index != 2 || rs0[0].Restart != 1 {
		t.Fatalf("requeued task 0: %+v, %v", rs0, err)
	}
	if rs1, err := PackWorker(ctx, WorkerOptions{Dir: s.Dir, Index: 1, Attempt: 1, Workers: 1}); err != nil || len(rs1) != 1 || rs1[0].Index != 3 {
		t.Fatalf("task 1: %+v, %v", rs1, err)
	}
	if _, err := PackWorker(ctx, WorkerOptions{Dir: s.Dir, Index: 2, Attempt: 1, Workers: 1}); err == nil || !strings.Contains(err.Error(), "task index 2") {
		t.Errorf("a task the pack file does not have: %v", err)
	}
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil || c.Done != 4 || c.Finished == nil || c.Finished.Status != runs.StatusFinished {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	gotSums, gotSeries := f.read(st, s.RunID)
	sameBits(t, "summaries", gotSums, wantSums)
	if !reflect.DeepEqual(gotSeries, wantSeries) {
		t.Errorf("series differ from the local run")
	}
}

// cancelAtSecondTrial cancels the task when the pack's second trial
// reports its first training step (a progress line of a node other than
// the first one that reported steps).
type cancelAtSecondTrial struct {
	mu     sync.Mutex
	first  string
	cancel context.CancelFunc
}

func (w *cancelAtSecondTrial) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	line := string(b)
	if i := strings.Index(line, ": step "); i >= 0 {
		node := line[strings.Index(line, " ")+1 : i]
		if w.first == "" {
			w.first = node
		} else if node != w.first {
			w.cancel()
		}
	}
	return len(b), nil
}

// TestPackKilledMidway: a pack's task stopped (SIGTERM) while its second
// trial trains keeps the first trial's result, records the second
// interrupted where it stopped and the others interrupted and not run;
// the next submission repacks only the three without a result (one task,
// packs.2.json), and the run's values equal the local run's bit for bit.
func TestPackKilledMidway(t *testing.T) {
	fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	wantSums, wantSeries := f.local()
	st := openStore(t, f.opts.DB)
	f.opts.TrialsPerTask = 4
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s.Tasks != 1 || s.Array != "0" {
		t.Fatalf("submission %+v, %v", s, err)
	}
	kctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &cancelAtSecondTrial{cancel: cancel}
	rs, err := PackWorker(kctx, WorkerOptions{Dir: s.Dir, Index: 0, Attempt: 1, Workers: 1, Out: w, ProgressEvery: time.Nanosecond})
	if err == nil || kctx.Err() == nil {
		t.Fatalf("the stopped pack returned %v", err)
	}
	var got []string
	for _, r := range rs {
		state := r.Status
		if r.NotRun {
			state += " not run"
		}
		got = append(got, state)
		if r.Status == batch.Interrupted && (r.Stop == nil || r.Stop.TimeLimit) {
			t.Errorf("trial %d: stop %+v", r.Index, r.Stop)
		}
	}
	if !reflect.DeepEqual(got, []string{"done", "interrupted", "interrupted not run", "interrupted not run"}) || rs[1].Stop.Step == "" {
		t.Fatalf("results of the stopped pack: %v (%+v)", got, rs)
	}
	if files, _ := s.Dir.ResultFiles(); len(files) != 4 {
		t.Fatalf("result files %v: want one per trial", files)
	}
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil || c.Done != 1 || !c.MarkedInterrupted || !reflect.DeepEqual(c.Pending, []int{1, 2, 3}) {
		t.Fatalf("collect after the stop: %+v, %v", c, err)
	}
	s2, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s2.Attempt != 2 || s2.Tasks != 1 || !reflect.DeepEqual(s2.Submitted, []int{1, 2, 3}) {
		t.Fatalf("resubmission: %+v, %v", s2, err)
	}
	m, _ := batch.ReadManifest(s.Dir)
	if p, err := batch.ReadPacks(s.Dir, m, 2); err != nil || p == nil || !reflect.DeepEqual(p.Tasks, [][]int{{1, 2, 3}}) {
		t.Fatalf("packs.2.json: %+v, %v", p, err)
	}
	if res := runPacks(t, s2); len(res) != 3 {
		t.Fatalf("resubmitted pack ran %d trials", len(res))
	}
	c, err = Collect(ctx, st, s.RunID, f.opts)
	if err != nil || c.Finished == nil || c.Finished.Status != runs.StatusFinished {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	gotSums, gotSeries := f.read(st, s.RunID)
	sameBits(t, "summaries", gotSums, wantSums)
	if !reflect.DeepEqual(gotSeries, wantSeries) {
		t.Errorf("series differ from the local run")
	}
	// Every execution is recorded: trial 0 once, the others twice (the
	// stop, then the resubmission).
	var n int
	st.DB().QueryRow(`SELECT count(*) FROM trial_attempts WHERE run_id = ?`, s.RunID).Scan(&n)
	if n != 7 {
		t.Errorf("%d attempts recorded, want 7", n)
	}
}

// TestPackStoppedAtTheTimeLimit: a pack's task that gets the time-limit
// warning between two trials records its trials not run, each saying it
// stopped at the warning; with a time retry scale the next submission
// asks for the scaled limit from that record (no accounting here), and
// the limit is per task: the pack's.
func TestPackStoppedAtTheTimeLimit(t *testing.T) {
	fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	f.opts.Time, f.opts.TimeRetryScale, f.opts.TrialsPerTask = "00:05:00", 2, 2
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s.Tasks != 2 || s.Time != "00:05:00" {
		t.Fatalf("submission: %+v, %v", s, err)
	}
	runPacks(t, &Submission{Dir: s.Dir, Attempt: 1, Tasks: 1})
	// Task 1 gets the warning 185 s after it started (300 s limit, 120 s
	// lead), before its first trial.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	calls := 0
	clock = func() time.Time { calls++; return t0.Add(time.Duration(min(calls-1, 1)) * 185 * time.Second) }
	defer func() { clock = time.Now }()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	rs, err := PackWorker(cctx, WorkerOptions{Dir: s.Dir, Index: 1, Attempt: 1, Workers: 1})
	clock = time.Now
	if err == nil || len(rs) != 2 {
		t.Fatalf("stopped task: %+v, %v", rs, err)
	}
	for _, r := range rs {
		if !r.NotRun || r.Stop == nil || !r.Stop.TimeLimit || !strings.Contains(r.Error, "time-limit warning") {
			t.Errorf("trial %d: %+v (stop %+v)", r.Index, r, r.Stop)
		}
	}
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || !c.MarkedInterrupted || !reflect.DeepEqual(c.Pending, []int{2, 3}) {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	s2, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s2.Time != "00:10:00" || s2.Tasks != 1 || !reflect.DeepEqual(s2.Submitted, []int{2, 3}) {
		t.Fatalf("resubmission after the time-limit stop: %+v, %v", s2, err)
	}
}

// TestPackedSplitArrays: a packed sweep larger than MaxArraySize is split
// by tasks, not trials: 4 trials packed 2 per task are tasks 0 and 1, and
// with MaxArraySize 1 they go as two arrays, the second (offset 1) running
// trials 2 and 3; with a throttle of 1 the second waits for the first
// (one throttle for the sweep, counted in tasks). Status maps the second
// array's task to its trials, and sacct's state of a lost task to each of
// its trials.
func TestPackedSplitArrays(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	os.WriteFile(filepath.Join(fake, "scontrol.out"), []byte("MaxArraySize            = 1\n"), 0o644)
	f.opts.TrialsPerTask, f.opts.MaxParallel = 2, 1
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Tasks != 2 || !reflect.DeepEqual(s.Arrays, []string{"0", "1+0"}) || !reflect.DeepEqual(s.Submitted, []int{0, 1, 2, 3}) {
		t.Fatalf("submission %+v", s)
	}
	second := s.ArrayJobs[1]
	if a := argsOf(t, fake, second); !strings.Contains(a, "--dependency=afterany:"+s.ArrayJobs[0]) {
		t.Errorf("the second array does not wait for the first:\n%s", a)
	}
	if sc, _ := os.ReadFile(filepath.Join(fake, "sbatch."+second+".script")); !strings.Contains(string(sc), `--pack --index "$((1 + SLURM_ARRAY_TASK_ID))"`) {
		t.Errorf("second array's script:\n%s", sc)
	}
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte(second+"_0|RUNNING|None\n"), 0o644)
	os.WriteFile(filepath.Join(fake, "sacct.out"), []byte(s.ArrayJobs[0]+"_0|OUT_OF_MEMORY\n"), 0o644)
	rs, err := Status(ctx, st, s.RunID, f.opts.WorkDir, &slurm.Poller{Client: &slurm.Client{Retries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range rs.Trials {
		got = append(got, tr.State+"/"+tr.Ended+"/"+rs.Task(tr.Index))
	}
	j0, j1 := s.ArrayJobs[0]+"_0", second+"_0"
	if want := []string{"missing/OUT_OF_MEMORY/" + j0, "missing/OUT_OF_MEMORY/" + j0, "running//" + j1, "pending//" + j1}; !reflect.DeepEqual(got, want) {
		t.Errorf("status %v, want %v", got, want)
	}
}

// TestPackedMemoryScaledAfterOOM: sacct's state of a packed task is its
// trials': task 1 (trials 2 and 3) killed for memory makes the
// resubmission of trials 2 and 3, repacked as one task, ask for the scaled
// memory.
func TestPackedMemoryScaledAfterOOM(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	f.opts.MemMB, f.opts.MemRetryScale, f.opts.TrialsPerTask = 1000, 2, 2
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s.Tasks != 2 {
		t.Fatalf("submission %+v, %v", s, err)
	}
	runPacks(t, &Submission{Dir: s.Dir, Attempt: 1, Tasks: 1})
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || !c.MarkedInterrupted || !reflect.DeepEqual(c.Pending, []int{2, 3}) {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	os.WriteFile(filepath.Join(fake, "sacct.out"), []byte(s.ArrayJob+"_0|COMPLETED\n"+s.ArrayJob+"_1|OUT_OF_MEMORY\n"), 0o644)
	s2, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s2.MemMB != 2000 || s2.Tasks != 1 || s2.Array != "0" || !reflect.DeepEqual(s2.Submitted, []int{2, 3}) {
		t.Fatalf("resubmission after the packed task's OOM: %+v, %v", s2, err)
	}
}

// TestPackedRetryFailed: --retry-failed repacks only the failed trial (a
// new packs.2.json) and, while the retry's task is queued, collect counts
// the trial as pending, mapping the retry's task 0 to it through that
// file; the retry's own result then ends the run.
func TestPackedRetryFailed(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	e := f.named("withbad") // trial 1 fails at step 0
	f.opts.TrialsPerTask = 2
	s, err := Submit(ctx, st, e, f.opts)
	if err != nil || s.Tasks != 1 {
		t.Fatalf("submission %+v, %v", s, err)
	}
	rs, err := PackWorker(ctx, WorkerOptions{Dir: s.Dir, Index: 0, Attempt: 1, Workers: 1})
	if err != nil || len(rs) != 2 || rs[0].Status != batch.Done || rs[1].Status != batch.Failed {
		t.Fatalf("pack: %+v, %v", rs, err)
	}
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || c.Finished == nil || c.Failed != 1 {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	o := f.opts
	o.RetryFailed = true
	s2, err := Submit(ctx, st, e, o)
	if err != nil || s2.Tasks != 1 || !reflect.DeepEqual(s2.Submitted, []int{1}) {
		t.Fatalf("retry: %+v, %v", s2, err)
	}
	m, _ := batch.ReadManifest(s.Dir)
	if p, err := batch.ReadPacks(s.Dir, m, 2); err != nil || p == nil || !reflect.DeepEqual(p.Tasks, [][]int{{1}}) {
		t.Fatalf("packs.2.json: %+v, %v", p, err)
	}
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte(s2.ArrayJob+"_0|PENDING|Priority\n"), 0o644)
	c, err := Collect(ctx, st, s.RunID, o)
	if err != nil || c.Finished != nil || c.MarkedInterrupted || c.Failed != 0 || !reflect.DeepEqual(c.Pending, []int{1}) {
		t.Fatalf("collect while the retry is queued: %+v (finished %+v), %v", c.Collected, c.Finished, err)
	}
	os.Remove(filepath.Join(fake, "squeue.out"))
	if rs, err := PackWorker(ctx, WorkerOptions{Dir: s.Dir, Index: 0, Attempt: 2, Workers: 1}); err != nil || len(rs) != 1 || rs[0].Index != 1 || rs[0].Status != batch.Failed {
		t.Fatalf("retried pack: %+v, %v", rs, err)
	}
	if c, err := Collect(ctx, st, s.RunID, o); err != nil || c.Finished == nil || c.Failed != 1 {
		t.Fatalf("collect after the retry: %+v, %v", c, err)
	}
}
