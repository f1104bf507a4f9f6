package slurmexec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// TestRetryFailedWaitsForTheRetry: a --retry-failed submission's trials
// count as pending until its own tasks leave a result; the earlier
// submission's failure is not the retry's. Before, the first collect after
// the retry found every trial with a result and ended the run at once
// (failed, "no trial finished") while the retry was still queued.
func TestRetryFailedWaitsForTheRetry(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	e := f.named("withbad") // init_scale 1e200: a loss not finite at step 0 fails (a divergence would be a result)
	s, err := Submit(ctx, st, e, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range s.Submitted {
		if _, err := Worker(ctx, WorkerOptions{Dir: s.Dir, Index: i, Attempt: 1, Workers: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || c.Finished == nil || c.Failed != 1 {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	o := f.opts
	o.RetryFailed = true
	s2, err := Submit(ctx, st, e, o)
	if err != nil || len(s2.Submitted) != 1 {
		t.Fatalf("retry: %+v, %v", s2, err)
	}
	retried := s2.Submitted[0]
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte(fmt.Sprintf("%s_%d|PENDING|Priority\n", s2.ArrayJob, retried)), 0o644)
	c, err := Collect(ctx, st, s.RunID, o)
	if err != nil || c.Finished != nil || c.MarkedInterrupted || c.Failed != 0 || !slices.Equal(c.Pending, []int{retried}) {
		t.Fatalf("collect while the retry is queued: %+v (finished %+v), %v", c.Collected, c.Finished, err)
	}
	if ri, _ := st.Run(ctx, s.RunID); ri.Status != runs.StatusRunning {
		t.Fatalf("run %s while the retry is queued, want running", ri.Status)
	}
	os.Remove(filepath.Join(fake, "squeue.out"))
	if _, err := Worker(ctx, WorkerOptions{Dir: s2.Dir, Index: retried, Attempt: s2.Attempt, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	c, err = Collect(ctx, st, s.RunID, o)
	if err != nil || c.Finished == nil || c.Failed != 1 || c.Done != 1 {
		t.Fatalf("collect after the retry ran: %+v, %v", c, err)
	}
	if atts, _ := st.Attempts(ctx, s.RunID); len(atts) != 3 {
		t.Errorf("attempts %+v: want 3 (the failed trial twice)", atts)
	}
}

// TestTimeLimitStopScalesWithoutAccounting: a task stopped by the
// time-limit warning records so in its result file (and its step); with
// --slurm-time-retry-scale the next submission asks for the scaled limit
// from that record, with no accounting (sacct fails here). Before, the
// scaling read only sacct's TIMEOUT and never ran. A limit that leaves no
// time before the warning is refused, saying the least it needs.
func TestTimeLimitStopScalesWithoutAccounting(t *testing.T) {
	fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	short := f.opts
	short.Time = "00:01:00"
	if _, err := Submit(ctx, st, f.experiment(), short); err == nil || !strings.Contains(err.Error(), "--slurm-time 00:01:00") || !strings.Contains(err.Error(), "want at least 00:03:00") {
		t.Fatalf("a 1-minute limit with the 120 s warning: %v", err)
	}
	f.opts.Time, f.opts.TimeRetryScale = "00:05:00", 2
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s.Time != "00:05:00" {
		t.Fatalf("submission: %+v, %v", s, err)
	}
	runTasks(t, s, 1)
	// Task 1 gets the warning 185 s after it started: 300 s limit, 120 s lead.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	calls := 0
	clock = func() time.Time { calls++; return t0.Add(time.Duration(min(calls-1, 1)) * 185 * time.Second) }
	defer func() { clock = time.Now }()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r, err := Worker(cctx, WorkerOptions{Dir: s.Dir, Index: 1, Attempt: 1, Workers: 1})
	clock = time.Now
	if r == nil || r.Stop == nil || !r.Stop.TimeLimit || r.Stop.LimitSeconds != 300 || r.Stop.LeadSeconds != 120 || !strings.Contains(r.Error, "time-limit warning") {
		t.Fatalf("stopped task: %+v (stop %+v), %v", r, r.Stop, err)
	}
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || !c.MarkedInterrupted {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	s2, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s2.Array != "1" || s2.Time != "00:10:00" {
		t.Fatalf("resubmission after the time-limit stop: %+v, %v", s2, err)
	}
	// A task stopped early (scancel, preemption) is not a time limit.
	runTasks(t, s2)
	stop := stopOf(s.Dir, 1, 10*time.Second, new(atomic.Value))
	if stop.TimeLimit {
		t.Errorf("a stop after 10 s of a 5-minute limit: %+v", stop)
	}
}

// TestSiteQOSOnEveryJob: a site that refuses any job without its QOS.
// The shared and collect jobs get their own further arguments
// (SharedExtra, CollectExtra), and sbatch --test-only checks every job the
// run may submit before anything is recorded. Before, only the trials'
// array was checked and the shared and collect jobs got no QOS: the run was
// recorded, then its shared job refused.
func TestSiteQOSOnEveryJob(t *testing.T) {
	fake := fakeSlurm(t)
	// sbatch refuses (test-only or not) a job without --qos=site.
	sb := filepath.Join(fake, "bin", "sbatch")
	text, _ := os.ReadFile(sb)
	os.WriteFile(sb, []byte(strings.Replace(string(text), "#!/bin/sh\n", "#!/bin/sh\ncase \" $* \" in *' --qos=site '*) ;; *) cat >/dev/null; echo 'sbatch: error: QOSMinimum: every job needs --qos=site' >&2; exit 1;; esac\n", 1)), 0o755)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	f.opts.Extra, f.opts.SharedJob, f.opts.NoCollectJob = []string{"--qos=site"}, true, false
	if _, err := Submit(ctx, st, f.experiment(), f.opts); err == nil || !strings.Contains(err.Error(), "sbatch --test-only refuses") || !strings.Contains(err.Error(), "shared job") {
		t.Fatalf("submission with the QOS on the trials only: %v", err)
	}
	if ids, _ := st.Runs(ctx, "small"); len(ids) != 0 {
		t.Fatalf("runs recorded after the refusal: %v", ids)
	}
	f.opts.SharedExtra = []string{"--qos=site"}
	if _, err := Submit(ctx, st, f.experiment(), f.opts); err == nil || !strings.Contains(err.Error(), "collect job") {
		t.Fatalf("submission without the collect job's QOS: %v", err)
	}
	f.opts.CollectExtra = []string{"--qos=site"}
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s.CollectJob == "" {
		t.Fatalf("submission with the QOS on every job: %+v, %v", s, err)
	}
	for _, id := range []string{s.SharedJob, s.ArrayJob, s.CollectJob} {
		if id == "" {
			continue // no shared stage to run
		}
		if a := argsOf(t, fake, id); !strings.Contains(a, "--qos=site") {
			t.Errorf("job %s submitted without the QOS:\n%s", id, a)
		}
	}
}

// TestSetupLinesRunBeforeTheRunner: --slurm-setup lines are in the batch
// script, before the runner, and in its copy submit.<attempt>.sh.
func TestSetupLinesRunBeforeTheRunner(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	f.opts.Setup = []string{"module load gcc/12", ". /opt/env/bin/activate"}
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	want := "module load gcc/12\n. /opt/env/bin/activate\nexec "
	for _, p := range []string{filepath.Join(fake, "sbatch."+s.ArrayJob+".script"), s.Dir.Script(1)} {
		if b, _ := os.ReadFile(p); !strings.Contains(string(b), want) {
			t.Errorf("%s has no setup before the runner:\n%s", p, b)
		}
	}
}
