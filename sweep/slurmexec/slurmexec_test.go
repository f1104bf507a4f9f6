package slurmexec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"goldstone/experiment"
	"goldstone/internal/slurm"
	"goldstone/internal/testdata"
	"goldstone/runs"
	_ "goldstone/stages/pipelines"
	"goldstone/sweep"
	"goldstone/sweep/batch"
	"goldstone/trialio"
)

const testConfig = `
[experiments.small]
description = "tiny artificial sweep"
pipeline = "artificial"
[experiments.small.settings]
time_steps = 5
steps = 150
clip = 0.01
lr = 1.0
lr_s0 = 100.0
k1 = 20
[experiments.small.grid]
seed = [1, 2]
[[experiments.small.variants]]
name = "gd"
[[experiments.small.variants]]
name = "goldstone"
gauge = "goldstone"

[experiments.withnan]
pipeline = "artificial"
[experiments.withnan.settings]
time_steps = 5
steps = 100
[experiments.withnan.grid]
lr = [0.01, 1e200]

[experiments.one]
description = "one trial: no variants, no grid"
pipeline = "artificial"
[experiments.one.settings]
time_steps = 5
steps = 50
[experiments.withbad]
pipeline = "artificial"
[experiments.withbad.settings]
time_steps = 5
steps = 100
[experiments.withbad.grid]
init_scale = [0.1, 1e200]
`

// fakeSlurm puts an sbatch that answers job ids 100, 101, ... and an squeue
// that prints dir/squeue.out on PATH, and returns dir.
func fakeSlurm(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("sbatch", `#!/bin/sh
d='`+dir+`'
if [ "$1" = --test-only ]; then
  printf '%s\n' "$@" >> "$d/testonly.args"; cat > /dev/null
  if [ -f "$d/refuse" ]; then cat "$d/refuse" >&2; exit 1; fi
  echo "sbatch: Job 1 to start at 2026-01-01T00:00:00 using 1 processors on nodes n1 in partition debug" >&2; exit 0
fi
n=$(cat "$d/n" 2>/dev/null || echo 100); echo $((n+1)) > "$d/n"
printf '%s\n' "$@" > "$d/sbatch.$n.args"; cat > "$d/sbatch.$n.script"
echo $n
`)
	write("squeue", `#!/bin/sh
echo call >> '`+dir+`/squeue.calls'
cat '`+dir+`/squeue.out' 2>/dev/null; true
`)
	write("scontrol", `#!/bin/sh
printf '%s\n' "$@" >> '`+dir+`/scontrol.calls'
if [ -f '`+dir+`/scontrol.out' ]; then cat '`+dir+`/scontrol.out'; else echo 'MaxArraySize            = 1001'; fi
`)
	write("sacct", `#!/bin/sh
echo call >> '`+dir+`/sacct.calls'
printf '%s\n' "$@" > '`+dir+`/sacct.args'
if [ -f '`+dir+`/sacct.out' ]; then cat '`+dir+`/sacct.out'; else echo 'sacct: error: Slurm accounting storage is disabled' >&2; exit 1; fi
`)
	write("sacctmgr", `#!/bin/sh
printf '%s\n' "$@" > '`+dir+`/sacctmgr.args'
if [ -f '`+dir+`/sacctmgr.out' ]; then cat '`+dir+`/sacctmgr.out'; else echo "You are not running a supported accounting_storage plugin" >&2; exit 1; fi
`)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

type fixture struct {
	t    *testing.T
	dir  string
	cfg  string
	opts Options
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "experiments.toml")
	if err := os.WriteFile(cfg, []byte(testConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, dir: dir, cfg: cfg, opts: Options{
		DB: filepath.Join(dir, "slurm.db"), WorkDir: filepath.Join(dir, "work"), DataDir: filepath.Join(dir, "data"),
		Reports: filepath.Join(dir, "reports"), ConfigPath: cfg, Runner: cfg, Jobs: 1, MaxParallel: 2,
	}}
}

func (f *fixture) experiment() *experiment.Experiment { return f.named("small") }

func (f *fixture) named(name string) *experiment.Experiment {
	f.t.Helper()
	c, err := experiment.LoadConfig(f.cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	return c.Experiments[name]
}

func openStore(t *testing.T, path string) *runs.Store {
	t.Helper()
	st, err := runs.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// local runs the experiment with the local executor into its own database
// and work directory, and returns its summaries and loss series.
func (f *fixture) local() (map[string]map[string]float64, map[string][]runs.Point) {
	sums, series, _ := f.localOutputs()
	return sums, series
}

// localOutputs is local, with the outputs the run recorded (see outputs).
func (f *fixture) localOutputs() (map[string]map[string]float64, map[string][]runs.Point, map[string]string) {
	f.t.Helper()
	ctx := context.Background()
	st := openStore(f.t, filepath.Join(f.dir, "local.db"))
	out, err := sweep.Execute(ctx, st, f.experiment(), sweep.Local{}, sweep.RunOptions{WorkDir: filepath.Join(f.dir, "localwork"), DataDir: f.opts.DataDir, Jobs: 1})
	if err != nil {
		f.t.Fatal(err)
	}
	sums, series := f.read(st, out.RunID)
	return sums, series, f.outputs(st, out.RunID)
}

// outputs returns a run's recorded output files: trial|stage|file -> sha256
// (the cache directory depends on the work directory and is left out).
func (f *fixture) outputs(st *runs.Store, id int64) map[string]string {
	f.t.Helper()
	outs, err := st.Outputs(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	m := map[string]string{}
	for _, o := range outs {
		m[o.Trial+"|"+o.Stage+"|"+o.File] = o.SHA256
	}
	return m
}

func (f *fixture) read(st *runs.Store, id int64) (map[string]map[string]float64, map[string][]runs.Point) {
	f.t.Helper()
	ctx := context.Background()
	sums, err := st.Summaries(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, m := range sums {
		for k := range m {
			if trialio.IsTiming(k) {
				delete(m, k)
			}
		}
	}
	series := map[string][]runs.Point{}
	for tr := range sums {
		for _, name := range []string{"loss", "psi"} {
			pts, err := st.Series(ctx, id, tr, name)
			if err != nil {
				f.t.Fatal(err)
			}
			series[tr+"/"+name] = pts
		}
	}
	return sums, series
}

func sameBits(t *testing.T, what string, a, b map[string]map[string]float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d trials vs %d", what, len(a), len(b))
	}
	for tr, m := range a {
		if len(m) != len(b[tr]) {
			t.Errorf("%s: trial %s has metrics %v vs %v", what, tr, m, b[tr])
		}
		for k, v := range m {
			w, ok := b[tr][k]
			if !ok || math.Float64bits(v) != math.Float64bits(w) && !(math.IsNaN(v) && math.IsNaN(w)) {
				t.Errorf("%s: trial %s %s = %v vs %v", what, tr, k, v, w)
			}
		}
	}
}

// runTasks runs the submitted tasks in this process, as Slurm would.
func runTasks(t *testing.T, s *Submission, skip ...int) {
	t.Helper()
	for _, i := range s.Submitted {
		if contains(skip, i) {
			continue
		}
		r, err := Worker(context.Background(), WorkerOptions{Dir: s.Dir, Index: i, Attempt: s.Attempt, Workers: 1})
		if err != nil || r.Status != batch.Done {
			t.Fatalf("task %d: %+v, %v", i, r, err)
		}
	}
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func TestSlurmMatchesLocal(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	wantSums, wantSeries, wantOutputs := f.localOutputs()

	st := openStore(t, f.opts.DB)
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Attempt != 1 || s.Array != "0-3%2" || s.ArrayJob != "100" || s.CollectJob != "101" || s.CPUs != 1 || s.MemMB != 512 {
		t.Fatalf("submission %+v", s)
	}
	script, _ := os.ReadFile(filepath.Join(fake, "sbatch.100.script"))
	if !strings.Contains(string(script), "worker --workdir") || !strings.Contains(string(script), `--attempt 1 --index "$SLURM_ARRAY_TASK_ID"`) {
		t.Errorf("array script:\n%s", script)
	}
	args, _ := os.ReadFile(filepath.Join(fake, "sbatch.101.args"))
	if !strings.Contains(string(args), "--dependency=afterany:100") {
		t.Errorf("collect job args:\n%s", args)
	}
	runTasks(t, s)
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Done != 4 || c.Finished == nil || c.Finished.Status != runs.StatusFinished || c.Finished.ReportPath == "" {
		t.Fatalf("collect: %+v %+v", c.Collected, c.Finished)
	}
	gotSums, gotSeries := f.read(st, s.RunID)
	sameBits(t, "summaries", gotSums, wantSums)
	if !reflect.DeepEqual(gotSeries, wantSeries) {
		t.Errorf("series differ from the local run")
	}
	// The same output files are recorded, with the same content except
	// the summaries, which hold timings.
	gotOutputs := f.outputs(st, s.RunID)
	if len(gotOutputs) != len(wantOutputs) || len(gotOutputs) == 0 {
		t.Errorf("recorded outputs: %d files, the local run %d", len(gotOutputs), len(wantOutputs))
	}
	for k, sum := range wantOutputs {
		got, ok := gotOutputs[k]
		if !ok || got != sum && !strings.HasSuffix(k, "/summary.json") && !strings.HasSuffix(k, "/summary.md") {
			t.Errorf("output %s: %q, local %q", k, got, sum)
		}
	}
	if e, _ := st.Executor(ctx, s.RunID); e != runs.ExecutorSlurm {
		t.Errorf("executor %q", e)
	}
	// Collecting again changes nothing.
	c2, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil || c2.Ingested != 0 || !c2.Finished.Already {
		t.Fatalf("second collect: %+v %+v, %v", c2.Collected, c2.Finished, err)
	}
	// The same command again: up to date.
	s2, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || !s2.UpToDate || s2.RunID != s.RunID {
		t.Fatalf("resubmission of a finished run: %+v, %v", s2, err)
	}
}

func TestSlurmResumeAndRefusal(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	wantSums, _ := f.local()
	st := openStore(t, f.opts.DB)
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	// Task 1 is stopped by SIGTERM, task 3 never runs (lost node).
	runTasks(t, s, 1, 3)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r, err := Worker(cctx, WorkerOptions{Dir: s.Dir, Index: 1, Attempt: 1, Workers: 1})
	if !errors.Is(err, context.Canceled) || r.Status != batch.Interrupted {
		t.Fatalf("stopped task: %+v, %v", r, err)
	}
	// While the array still has tasks queued, a second submission is refused.
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte("100_3|PENDING|Resources\n"), 0o644)
	if _, err := Submit(ctx, st, f.experiment(), f.opts); !errors.Is(err, ErrAlreadySubmitted) {
		t.Fatalf("second submission while queued: %v", err)
	}
	// Collecting while task 3 is queued leaves the run running; once the
	// queue is empty the run stopped short: interrupted.
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || c.MarkedInterrupted {
		t.Fatalf("collect with a queued task: %+v, %v", c, err)
	}
	os.Remove(filepath.Join(fake, "squeue.out"))
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || !c.MarkedInterrupted || c.Finished != nil {
		t.Fatalf("collect with nothing queued: %+v, %v", c, err)
	}
	if ri, _ := st.Run(ctx, s.RunID); ri.Status != runs.StatusInterrupted {
		t.Fatalf("run status %s, want interrupted", ri.Status)
	}
	s2, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if !s2.Resumed || s2.RunID != s.RunID || s2.Attempt != 2 || s2.Array != "1,3" || s2.Collected.Done != 2 {
		t.Fatalf("resubmission: %+v (collected %+v)", s2, s2.Collected)
	}
	if ri, _ := st.Run(ctx, s.RunID); ri.Status != runs.StatusRunning {
		t.Errorf("run status %s after resubmission, want running", ri.Status)
	}
	runTasks(t, s2)
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil || c.Finished == nil || c.Finished.Status != runs.StatusFinished {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	got, _ := f.read(st, s.RunID)
	sameBits(t, "summaries after resume", got, wantSums)
	atts, _ := st.Attempts(ctx, s.RunID)
	if len(atts) != 5 {
		t.Errorf("attempts recorded: %+v; want 5 (trial 1 twice)", atts)
	}
	jobs, _ := st.SlurmJobs(ctx, s.RunID)
	if len(jobs) != 4 || jobs[2].Array != "1,3" || jobs[2].Attempt != 2 {
		t.Errorf("slurm jobs: %+v", jobs)
	}
}

func TestWorkerRefusesChangedCode(t *testing.T) {
	fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	// The frozen experiments file resolves differently (as with other code).
	os.WriteFile(s.Dir.Config(), []byte(strings.Replace(testConfig, "steps = 150", "steps = 151", 1)), 0o644)
	r, err := Worker(ctx, WorkerOptions{Dir: s.Dir, Index: 0, Attempt: 1, Workers: 1})
	if err != nil || r.Status != batch.Failed || !strings.Contains(r.Error, "config hash") {
		t.Fatalf("worker with a changed config: %+v, %v", r, err)
	}
	if _, err := Worker(ctx, WorkerOptions{Dir: s.Dir, Index: 9, Attempt: 1}); err == nil {
		t.Error("task index 9 of 4 trials ran")
	}
}

func TestOptionsCheck(t *testing.T) {
	for _, o := range []Options{{WorkDir: "w", Time: "2h"}, {WorkDir: "w", MaxParallel: -1}, {}} {
		if err := o.Check(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	for _, tm := range []string{"02:00:00", "1-00:00:00", "30", "10:00"} {
		if err := (&Options{WorkDir: "w", Time: tm}).Check(); err != nil {
			t.Errorf("time %q: %v", tm, err)
		}
	}
}

func TestSlurmFailedTrialAndRetryFailed(t *testing.T) {
	fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	e := f.named("withbad")
	s, err := Submit(ctx, st, e, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	var failed int
	for _, i := range s.Submitted {
		r, err := Worker(ctx, WorkerOptions{Dir: s.Dir, Index: i, Attempt: 1, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == batch.Failed {
			failed = i
			if !strings.Contains(r.Error, "withbad/train/") {
				t.Errorf("failure %q does not name the stage", r.Error)
			}
		}
	}
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil || c.Failed != 1 || c.Finished == nil || c.Finished.Status != runs.StatusFailed || c.Finished.ReportNote == "" {
		t.Fatalf("collect: %+v %+v, %v", c.Collected, c.Finished, err)
	}
	// As with the local executor (the same code writes it, from what the
	// run recorded), the report covers the finished trials and lists the
	// failed one with its stage's error.
	if c.Finished.ReportPath == "" {
		t.Fatalf("no report for a run with a failed trial: %s", c.Finished.ReportNote)
	}
	md, err := os.ReadFile(filepath.Join(c.Finished.ReportPath, "summary.md"))
	if err != nil || !strings.Contains(string(md), "## Failed trials (1)") || !strings.Contains(string(md), "| init_scale=1e+200 | step 0: local loss ") {
		t.Errorf("report summary.md does not list the failed trial with its error (%v):\n%s", err, md)
	}
	// Without --retry-failed the ended run is up to date; with it, only the
	// failed trial is submitted again.
	if s2, err := Submit(ctx, st, e, f.opts); err != nil || !s2.UpToDate {
		t.Fatalf("resubmission without retry: %+v, %v", s2, err)
	}
	o := f.opts
	o.RetryFailed = true
	s3, err := Submit(ctx, st, e, o)
	if err != nil {
		t.Fatal(err)
	}
	if s3.RunID != s.RunID || s3.Attempt != 2 || len(s3.Submitted) != 1 || s3.Submitted[0] != failed {
		t.Fatalf("retry-failed submitted %+v; want trial %d only, attempt 2", s3, failed)
	}
	ri, _ := st.Run(ctx, s.RunID)
	if ri.Status != runs.StatusRunning {
		t.Errorf("run status %s after resubmission, want running", ri.Status)
	}
}

// TestSlurmDivergedTrial: a task whose trial diverged writes a result with
// status diverged, where it diverged and its summary and series; collect
// records the trial as diverged (its attempt as done: the task ran to its
// end) with its summary, the run ends finished with its report, and
// --retry-failed submits nothing: a divergence is deterministic.
func TestSlurmDivergedTrial(t *testing.T) {
	fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	e := f.named("withnan")
	s, err := Submit(ctx, st, e, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	var notice string
	for _, i := range s.Submitted {
		r, err := Worker(ctx, WorkerOptions{Dir: s.Dir, Index: i, Attempt: 1, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		switch r.Status {
		case batch.Diverged:
			notice = r.Error
			if !strings.HasPrefix(r.Error, "diverged at step ") || r.Summary["diverged_step"] == 0 || len(r.Series) == 0 {
				t.Errorf("diverged result: error %q, diverged_step %v, %d series", r.Error, r.Summary["diverged_step"], len(r.Series))
			}
		case batch.Done:
		default:
			t.Errorf("task %d: %s %s", i, r.Status, r.Error)
		}
	}
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil || c.Diverged != 1 || c.Done != 1 || c.Failed != 0 || c.Finished == nil || c.Finished.Status != runs.StatusFinished || c.Finished.ReportPath == "" {
		t.Fatalf("collect: %+v %+v, %v", c.Collected, c.Finished, err)
	}
	ts, err := st.TrialStatuses(ctx, s.RunID)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := st.Summaries(ctx, s.RunID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tr := range ts {
		if tr.Status == runs.StatusDiverged {
			n++
			if tr.Error != notice || sums[tr.ID]["diverged_step"] == 0 || !math.IsInf(sums[tr.ID]["steps_to_excess_1"], 1) {
				t.Errorf("diverged trial %s: error %q (result %q), summary %v", tr.ID, tr.Error, notice, sums[tr.ID])
			}
		}
	}
	if n != 1 {
		t.Errorf("%d diverged trials recorded: %v", n, ts)
	}
	as, err := st.Attempts(ctx, s.RunID)
	if err != nil || len(as) != 2 {
		t.Fatalf("attempts %v, %v", as, err)
	}
	for _, a := range as {
		if a.Status != batch.Done {
			t.Errorf("attempt %+v, want done (the task ran to its end)", a)
		}
	}
	md, err := os.ReadFile(filepath.Join(c.Finished.ReportPath, "summary.md"))
	if err != nil || !strings.Contains(string(md), "## Diverged trials (1)") || !strings.Contains(string(md), notice) {
		t.Errorf("summary.md does not list the diverged trial (%v):\n%s", err, md)
	}
	o := f.opts
	o.RetryFailed = true
	if s2, err := Submit(ctx, st, e, o); err != nil || !s2.UpToDate {
		t.Fatalf("resubmission with --retry-failed: %+v, %v; want up to date", s2, err)
	}
}

func TestStatusAsksSqueueOncePer30s(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	runTasks(t, s, 1, 2, 3)
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte("100_1|RUNNING|None\n100_2|PENDING|JobArrayTaskLimit\n"), 0o644)
	calls := func() int {
		b, _ := os.ReadFile(filepath.Join(fake, "squeue.calls"))
		return strings.Count(string(b), "call")
	}
	before := calls()
	// Three status commands (a new Poller each, as separate processes).
	var rs *RunStatus
	for range 3 {
		if rs, err = Status(ctx, st, s.RunID, f.opts.WorkDir, &slurm.Poller{Client: &slurm.Client{}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := calls() - before; n != 1 {
		t.Errorf("3 status commands within 30 s called squeue %d times, want 1", n)
	}
	c := rs.Counts
	if c[batch.Done] != 1 || c[batch.Running] != 1 || c[batch.Pending] != 1 || c[batch.Missing] != 1 || rs.QueueJob != "100" {
		t.Errorf("status counts %v (job %s)", c, rs.QueueJob)
	}
	// An answer older than 30 s is not reused.
	later := time.Now().Add(31 * time.Second)
	if _, err := Status(ctx, st, s.RunID, f.opts.WorkDir, &slurm.Poller{Client: &slurm.Client{}, Now: func() time.Time { return later }}); err != nil {
		t.Fatal(err)
	}
	if n := calls() - before; n != 2 {
		t.Errorf("after 31 s: %d squeue calls, want 2", n)
	}
}

const movielensConfig = `
[experiments.ml]
pipeline = "movielens"
[experiments.ml.settings]
dataset = "ml-latest-small"
bins = 20
split = [0.5, 0.2, 0.3]
optimizer = "adagrad"
lr = 1.0
steps = 20
k1 = 10
dim = 3
lambda = 10.0
log_every = 5
valid_every = 10
[experiments.ml.grid]
seed = [1, 2]
[[experiments.ml.variants]]
name = "adagrad"
[[experiments.ml.variants]]
name = "goldstone"
gauge = "goldstone"
`

// The movielens pipeline has stages all trials share (ingest, binning,
// split): Submit runs them on the submit host and the tasks find them in
// the shared cache.
func TestSlurmSharedStagesMatchLocal(t *testing.T) {
	data := testdata.Dir(t, "ml-latest-small")
	fakeSlurm(t)
	f := newFixture(t)
	os.WriteFile(f.cfg, []byte(movielensConfig), 0o644)
	f.opts.DataDir = data
	ctx := context.Background()
	e := f.named("ml")
	lst := openStore(t, filepath.Join(f.dir, "local.db"))
	lout, err := sweep.Execute(ctx, lst, e, sweep.Local{}, sweep.RunOptions{WorkDir: filepath.Join(f.dir, "localwork"), DataDir: data, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	want, wantSeries := f.read(lst, lout.RunID)

	st := openStore(t, f.opts.DB)
	s, err := Submit(ctx, st, f.named("ml"), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	// The shared stages ran at submission, into the shared cache.
	for _, stage := range []string{"ingest-movielens", "split"} {
		all, _ := os.ReadDir(filepath.Join(f.opts.WorkDir, "cache", stage))
		var ents []string
		for _, de := range all {
			if !strings.HasSuffix(de.Name(), ".lock") { // an entry's lock file
				ents = append(ents, de.Name())
			}
		}
		if len(ents) != 1 {
			t.Errorf("shared cache has %d %s entries after submission, want 1: %v", len(ents), stage, ents)
		}
	}
	if s.MemMB <= 512 {
		t.Errorf("memory per task %d MiB: not derived from the data's size", s.MemMB)
	}
	runTasks(t, s)
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil || c.Finished == nil || c.Finished.Status != runs.StatusFinished {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	got, gotSeries := f.read(st, s.RunID)
	sameBits(t, "movielens summaries", got, want)
	if !reflect.DeepEqual(gotSeries, wantSeries) {
		t.Errorf("movielens series differ from the local run")
	}
}

// TestResourcesResolvedAtEachSubmission: a resubmission asks for the
// resources of its own options (cpus, memory, further arguments added to
// the experiment's), says so, and the collect job gets none of the
// trials' further arguments. Before, cpus and memory were frozen at the
// first submission, and the collect job got --slurm-extra too.
func TestResourcesResolvedAtEachSubmission(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	f.opts.Extra = []string{"--qos=long"}
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	args := func(n int) string {
		b, _ := os.ReadFile(filepath.Join(fake, fmt.Sprintf("sbatch.%d.args", n)))
		return string(b)
	}
	if !strings.Contains(args(100), "--qos=long") || strings.Contains(args(101), "--qos=long") || !strings.Contains(args(101), "--mem=2048M") {
		t.Errorf("first submission: trials\n%s\ncollect\n%s", args(100), args(101))
	}
	runTasks(t, s, 3) // task 3 was lost (out of memory, say)
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || !c.MarkedInterrupted {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	o := f.opts
	o.MemMB = 4096
	o.Extra = []string{"--qos=long", "--constraint=avx2", "--cpus-per-task=3"}
	s2, err := Submit(ctx, st, f.experiment(), o)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Array != "3" || s2.MemMB != 4096 || s2.CPUs != 3 {
		t.Errorf("resubmission: %+v", s2)
	}
	a := args(102)
	for _, want := range []string{"--mem=4096M", "--qos=long", "--constraint=avx2", "--cpus-per-task=3"} {
		if !strings.Contains(a, want) {
			t.Errorf("resubmitted trials lack %s:\n%s", want, a)
		}
	}
	if c := args(103); strings.Contains(c, "avx2") || strings.Contains(c, "--cpus-per-task=3") {
		t.Errorf("collect job got the trials' arguments:\n%s", c)
	}
}

func TestParseMem(t *testing.T) {
	for in, want := range map[string]int{"4096": 4096, "4G": 4096, "512M": 512, "1.5g": 1536, "2048K": 2, "1T": 1 << 20} {
		if got, err := ParseMem(in); err != nil || got != want {
			t.Errorf("ParseMem(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1", "4X"} {
		if _, err := ParseMem(in); err == nil {
			t.Errorf("ParseMem(%q): no error", in)
		}
	}
}

// TestFailedSbatchFailsTheRun: an sbatch that refuses the array (after
// --test-only accepted it) leaves no "running" run (before, the run stayed running with nothing queued); the
// same command resubmits once sbatch works.
func TestFailedSbatchFailsTheRun(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	sbatch := filepath.Join(fake, "bin", "sbatch")
	good, _ := os.ReadFile(sbatch)
	// --test-only passes; the submission itself fails (a limit reached
	// in between, a refusal the test cannot foresee).
	os.WriteFile(sbatch, []byte("#!/bin/sh\n[ \"$1\" = --test-only ] && exit 0\necho 'sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified' >&2\nexit 1\n"), 0o755)
	_, err := Submit(ctx, st, f.experiment(), f.opts)
	if err == nil || !strings.Contains(err.Error(), "Invalid account") || !strings.Contains(err.Error(), "marked failed") {
		t.Fatalf("submission with a failing sbatch: %v", err)
	}
	runs1, _ := st.Runs(ctx, "")
	if len(runs1) != 1 || runs1[0].Status != runs.StatusFailed {
		t.Fatalf("runs after a failed sbatch: %+v", runs1)
	}
	os.WriteFile(sbatch, good, 0o755)
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || !s.Resumed || s.RunID != runs1[0].ID || len(s.Submitted) != 4 {
		t.Fatalf("resubmission once sbatch works: %+v, %v", s, err)
	}
	if ri, _ := st.Run(ctx, s.RunID); ri.Status != runs.StatusRunning {
		t.Errorf("run %s after the resubmission, want running", ri.Status)
	}
}

// TestStatusSaysWhyATaskIsMissing: a task that left no result (killed for
// memory, past its time limit, its node lost) is reported with the state
// sacct gives it; without accounting, status says it cannot tell.
func TestStatusSaysWhyATaskIsMissing(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	runTasks(t, s, 1, 2, 3)
	p := &slurm.Poller{Client: &slurm.Client{Retries: -1}}
	rs, err := Status(ctx, st, s.RunID, f.opts.WorkDir, p)
	if err != nil || rs.AcctErr == nil || rs.Trials[1].Ended != "" {
		t.Fatalf("without accounting: %+v, %v", rs, err)
	}
	os.WriteFile(filepath.Join(fake, "sacct.out"), []byte("100_0|COMPLETED\n100_1|OUT_OF_MEMORY\n100_2|TIMEOUT\n100_3|NODE_FAIL\n101|PENDING\n"), 0o644)
	rs, err = Status(ctx, st, s.RunID, f.opts.WorkDir, &slurm.Poller{Client: &slurm.Client{Retries: -1}})
	if err != nil || rs.AcctErr != nil {
		t.Fatal(err, rs.AcctErr)
	}
	var got []string
	for _, tr := range rs.Trials {
		got = append(got, tr.State+"/"+tr.Ended)
	}
	if want := []string{"done/", "missing/OUT_OF_MEMORY", "missing/TIMEOUT", "missing/NODE_FAIL"}; !reflect.DeepEqual(got, want) {
		t.Errorf("states %v, want %v", got, want)
	}
	if a, _ := os.ReadFile(filepath.Join(fake, "sacct.args")); !strings.Contains(string(a), "100") {
		t.Errorf("sacct args: %s", a)
	}
}

// TestSacctAtMostOncePerTaskPerMinute: a waiting submit polls every few
// seconds; while a task is missing, Status asks sacct about it at most
// once per the Poller's AcctInterval (a minute), not at every poll (it
// was 18 calls in a minute at a 3.3 s poll).
func TestSacctAtMostOncePerTaskPerMinute(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	runTasks(t, s, 1, 2, 3)
	os.WriteFile(filepath.Join(fake, "sacct.out"), []byte("100_1|OUT_OF_MEMORY\n"), 0o644)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &slurm.Poller{Client: &slurm.Client{Retries: -1}, Interval: time.Second, Now: func() time.Time { return now }}
	calls := func() int {
		b, _ := os.ReadFile(filepath.Join(fake, "sacct.calls"))
		return strings.Count(string(b), "call")
	}
	for k := 0; k < 18; k++ { // a minute of polls every 3.33 s
		rs, err := Status(ctx, st, s.RunID, f.opts.WorkDir, p)
		if err != nil || rs.Trials[1].Ended != "OUT_OF_MEMORY" {
			t.Fatalf("poll %d: %+v, %v", k, rs, err)
		}
		now = now.Add(3333 * time.Millisecond)
	}
	if n := calls(); n != 1 {
		t.Errorf("sacct called %d times in a minute of polls, want 1", n)
	}
	now = now.Add(time.Minute)
	Status(ctx, st, s.RunID, f.opts.WorkDir, p)
	if n := calls(); n != 2 {
		t.Errorf("sacct called %d times after the minute, want 2", n)
	}
	// A shorter configured interval asks again sooner.
	p.AcctInterval = 5 * time.Second
	now = now.Add(5 * time.Second)
	Status(ctx, st, s.RunID, f.opts.WorkDir, p)
	if n := calls(); n != 3 {
		t.Errorf("sacct called %d times with a 5 s interval, want 3", n)
	}
}

// TestMemoryScaledAfterOOM: with MemRetryScale, a resubmission of trials
// whose tasks sacct says ran out of memory asks for the previous memory
// times the scale; without it, or when the lost task ended otherwise, for
// the memory the options say.
func TestMemoryScaledAfterOOM(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	f.opts.MemMB, f.opts.MemRetryScale = 1000, 1.5
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s.MemMB != 1000 {
		t.Fatalf("first submission: %+v, %v", s, err)
	}
	runTasks(t, s, 2)
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || !c.MarkedInterrupted {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	os.WriteFile(filepath.Join(fake, "sacct.out"), []byte("100_2|OUT_OF_MEMORY\n100_0|COMPLETED\n"), 0o644)
	s2, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s2.Array != "2" || s2.MemMB != 1500 {
		t.Fatalf("resubmission after an OOM: %+v, %v", s2, err)
	}
	if a, _ := os.ReadFile(filepath.Join(fake, "sbatch.102.args")); !strings.Contains(string(a), "--mem=1500M") {
		t.Errorf("resubmitted with:\n%s", a)
	}
	// The task is lost again, this time by a node failure: no more memory.
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || !c.MarkedInterrupted {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	os.WriteFile(filepath.Join(fake, "sacct.out"), []byte("102_2|NODE_FAIL\n"), 0o644)
	s3, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s3.MemMB != 1000 {
		t.Fatalf("resubmission after a node failure: %+v, %v", s3, err)
	}
}

// TestTimeScaledAfterTimeout: with TimeRetryScale, a resubmission of
// trials whose tasks sacct says reached their time limit asks for the
// previous limit times the scale (rounded up to a minute), after the
// further arguments so that it wins; a task lost otherwise gets the
// options' time again.
func TestTimeScaledAfterTimeout(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	f.opts.Time, f.opts.TimeRetryScale = "1:00:00", 1.5
	f.opts.Extra = []string{"--time=50"} // the further arguments win over Time
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s.Time != "50" {
		t.Fatalf("first submission: %+v, %v", s, err)
	}
	runTasks(t, s, 1)
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || !c.MarkedInterrupted {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	os.WriteFile(filepath.Join(fake, "sacct.out"), []byte("100_1|TIMEOUT\n100_0|COMPLETED\n"), 0o644)
	s2, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s2.Array != "1" || s2.Time != "01:15:00" {
		t.Fatalf("resubmission after a timeout: %+v, %v", s2, err)
	}
	a, _ := os.ReadFile(filepath.Join(fake, fmt.Sprintf("sbatch.%s.args", s2.ArrayJob)))
	if args := strings.Split(strings.TrimSpace(string(a)), "\n"); args[len(args)-1] != "--time=01:15:00" {
		t.Errorf("resubmitted with:\n%s", a)
	}
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || !c.MarkedInterrupted {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	os.WriteFile(filepath.Join(fake, "sacct.out"), []byte(s2.ArrayJob+"_1|PREEMPTED\n"), 0o644)
	s3, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s3.Time != "50" {
		t.Fatalf("resubmission after a preemption: %+v, %v", s3, err)
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]int64{"50": 3000, "5:30": 330, "1:00:00": 3600, "2-00:00:00": 172800, "1-2": 93600, "1-02:03": 93780} {
		if got, err := ParseTime(in); err != nil || got != want {
			t.Errorf("ParseTime(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2h", "1:2:3:4", "-5"} {
		if _, err := ParseTime(in); err == nil {
			t.Errorf("ParseTime(%q): no error", in)
		}
	}
	if FormatTime(4500) != "01:15:00" || FormatTime(93780) != "1-02:03:00" {
		t.Errorf("FormatTime: %s %s", FormatTime(4500), FormatTime(93780))
	}
}

// TestRefusedRequestRecordsNoRun: a request sbatch --test-only refuses (a
// time limit over the partition's) ends the submission with sbatch's
// message before anything is recorded: no run (running or other), no
// shared stage run, nothing queued; once the request is fixed the same
// command submits. A resumed run refused so is left as it was.
func TestRefusedRequestRecordsNoRun(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	const msg = "sbatch: error: Batch job submission failed: Requested time limit is invalid (missing or exceeds some limit)"
	os.WriteFile(filepath.Join(fake, "refuse"), []byte(msg+"\n"), 0o644)
	f.opts.Time = "30-00:00:00"
	_, err := Submit(ctx, st, f.experiment(), f.opts)
	if err == nil || !strings.Contains(err.Error(), "Requested time limit is invalid") || !strings.Contains(err.Error(), "no run recorded") {
		t.Fatalf("refused request: %v", err)
	}
	if rs, _ := st.Runs(ctx, ""); len(rs) != 0 {
		t.Errorf("runs after a refused request: %+v", rs)
	}
	if m, _ := filepath.Glob(filepath.Join(fake, "sbatch.*.args")); len(m) != 0 {
		t.Errorf("submitted: %v", m)
	}
	if _, err := os.Stat(filepath.Join(f.opts.WorkDir, "batch")); err == nil {
		t.Errorf("a run directory was written")
	}
	a, _ := os.ReadFile(filepath.Join(fake, "testonly.args"))
	if !strings.Contains(string(a), "--time=30-00:00:00") || !strings.Contains(string(a), "--array=0-3%2") {
		t.Errorf("test-only request:\n%s", a)
	}
	os.Remove(filepath.Join(fake, "refuse"))
	f.opts.Time = "1:00:00"
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || s.Resumed || s.ArrayJob != "100" {
		t.Fatalf("submission once the request is fixed: %+v, %v", s, err)
	}
	// A resumed run whose new request is refused stays as it was.
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || !c.MarkedInterrupted {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	os.WriteFile(filepath.Join(fake, "refuse"), []byte(msg+"\n"), 0o644)
	if _, err := Submit(ctx, st, f.experiment(), f.opts); err == nil || !strings.Contains(err.Error(), "left as it was") {
		t.Fatalf("refused resubmission: %v", err)
	}
	if ri, _ := st.Run(ctx, s.RunID); ri.Status != runs.StatusInterrupted {
		t.Errorf("run %s after a refused resubmission, want interrupted", ri.Status)
	}
}

// TestLargeSweepSplitIntoArrays: a sweep larger than the cluster's
// MaxArraySize (scontrol show config) is submitted as several arrays
// whose task indices stay below it (each task runs trial offset + its
// index), with the throttle on each and the collect job after all; the
// run is collected as one, its status maps every array's tasks to their
// trials, and a resubmission of lost trials splits again.
func TestLargeSweepSplitIntoArrays(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	os.WriteFile(filepath.Join(fake, "scontrol.out"), []byte("MaxJobCount             = 10000\nMaxArraySize            = 3\n"), 0o644)
	f.opts.MaxParallel = 2
	s, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	// Trials 0-3 with MaxArraySize 3: 0-2 as they are, then trial 3 as
	// task 0 of a second array (offset 3). The test-only request asked
	// for the first array.
	if !reflect.DeepEqual(s.Arrays, []string{"0-2%2", "3+0"}) || !reflect.DeepEqual(s.ArrayJobs, []string{"100", "101"}) ||
		s.CollectJob != "102" || !reflect.DeepEqual(s.Submitted, []int{0, 1, 2, 3}) {
		t.Fatalf("submission %+v", s)
	}
	for id, want := range map[string][]string{"100": {"--array=0-2%2", `--index "$SLURM_ARRAY_TASK_ID"`}, "101": {"--array=0\n", `--index "$((3 + SLURM_ARRAY_TASK_ID))"`}} {
		a, _ := os.ReadFile(filepath.Join(fake, "sbatch."+id+".args"))
		sc, _ := os.ReadFile(filepath.Join(fake, "sbatch."+id+".script"))
		if !strings.Contains(string(a), want[0]) || !strings.Contains(string(sc), want[1]) {
			t.Errorf("job %s:\n%s\n%s", id, a, sc)
		}
	}
	if a, _ := os.ReadFile(filepath.Join(fake, "sbatch.102.args")); !strings.Contains(string(a), "--dependency=afterany:100:101") {
		t.Errorf("collect job args:\n%s", a)
	}
	if a, _ := os.ReadFile(filepath.Join(fake, "testonly.args")); !strings.Contains(string(a), "--array=0-2%2") {
		t.Errorf("test-only request:\n%s", a)
	}
	// Task 0 of the second array (trial 3) is running, trial 1 is lost:
	// status maps the second array's task to trial 3.
	runTasks(t, s, 1, 3)
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte("101_0|RUNNING|None\n"), 0o644)
	os.MkdirAll(s.Dir.Logs(), 0o755)
	os.WriteFile(filepath.Join(s.Dir.Logs(), "101_0.out"), []byte("step 40 of 150\n"), 0o644)
	rs, err := Status(ctx, st, s.RunID, f.opts.WorkDir, &slurm.Poller{Client: &slurm.Client{Retries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if q := rs.Trials[3].Queue; q != "RUNNING" || rs.Task(3) != "101_0" || rs.Trials[0].Queue != "" {
		t.Errorf("status: trial 3 queue %q task %q, trial 0 queue %q", q, rs.Task(3), rs.Trials[0].Queue)
	}
	os.Remove(filepath.Join(fake, "squeue.out"))
	runTasks(t, &Submission{Dir: s.Dir, Attempt: 1, Submitted: []int{3}})
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil || c.Done != 3 || !c.MarkedInterrupted {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	os.WriteFile(filepath.Join(fake, "scontrol.out"), []byte("MaxArraySize = 1\n"), 0o644)
	s2, err := Submit(ctx, st, f.experiment(), f.opts)
	if err != nil || !reflect.DeepEqual(s2.Arrays, []string{"1+0"}) {
		t.Fatalf("resubmission: %+v, %v", s2, err)
	}
	runTasks(t, s2)
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || c.Finished == nil || c.Finished.Status != runs.StatusFinished {
		t.Fatalf("collect: %+v, %v", c, err)
	}
}

// TestMemoryBelowTheLeastRefused: a memory request below what a task of
// the data set needs (--slurm-mem 1M) is refused before anything is
// recorded, naming the flag, the value and the least; the least itself is
// accepted.
func TestMemoryBelowTheLeastRefused(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	for _, tc := range []struct {
		mem, shared int
		extra       []string
		want        string
	}{
		{1, 0, nil, "--slurm-mem 1M is below the least a task needs, 128M (128 MiB for the runner and twice the data set's 0 MiB): want at least 128M"},
		{0, 0, []string{"--mem=100M"}, "--slurm-extra --mem 100M is below the least a task needs, 128M"},
		{0, 64, nil, "--slurm-shared-mem 64M is below the least"},
	} {
		o := f.opts
		o.MemMB, o.SharedMemMB, o.Extra = tc.mem, tc.shared, tc.extra
		if _, err := Submit(ctx, st, f.experiment(), o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %s", tc, err, tc.want)
		}
	}
	if rs, _ := st.Runs(ctx, "small"); len(rs) != 0 {
		t.Errorf("runs recorded: %+v", rs)
	}
	if _, err := os.Stat(filepath.Join(fake, "sbatch.100.args")); err == nil {
		t.Errorf("sbatch called")
	}
	f.opts.MemMB = MinBaseMB
	if _, err := Submit(ctx, st, f.experiment(), f.opts); err != nil {
		t.Fatal(err)
	}
	if got, want := minMem(3<<20+1), MinBaseMB+7; got != want {
		t.Errorf("minMem(3 MiB + 1) = %d, want %d", got, want)
	}
}

// TestMaxSubmitJobsRespected: a user's MaxSubmitJobs (sacctmgr) that
// the run's tasks and its collect job would exceed, with the user's jobs
// already queued, is refused before anything is recorded, naming the
// limit and what to do; without accounting there is no
// limit.
func TestMaxSubmitJobsRespected(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	f.opts.User = "ann"
	os.WriteFile(filepath.Join(fake, "sacctmgr.out"), []byte("\n5\n"), 0o644)
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte("77\n"), 0o644)
	_, err := Submit(ctx, st, f.experiment(), f.opts)
	want := "the trials of small (nothing submitted, no run recorded) need 5 jobs in the queue (4 array tasks and 1 other jobs) but user ann may have 5 (MaxSubmitJobs, sacctmgr) and has 1 queued: wait for some of the queued jobs to end, pack several trials into each task (--slurm-trials-per-task), or run the sweep in one allocation (docs/slurm.md, \"Many short trials: one allocation\")"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("over the limit: %v\nwant %s", err, want)
	}
	if a, _ := os.ReadFile(filepath.Join(fake, "sacctmgr.args")); !strings.Contains(string(a), "user=ann") || !strings.Contains(string(a), "format=MaxSubmitJobs") {
		t.Errorf("sacctmgr args: %s", a)
	}
	if rs, _ := st.Runs(ctx, "small"); len(rs) != 0 {
		t.Errorf("runs recorded: %+v", rs)
	}
	if _, err := os.Stat(filepath.Join(fake, "sbatch.100.args")); err == nil {
		t.Errorf("sbatch called")
	}
	// Without accounting: no limit.
	os.Remove(filepath.Join(fake, "sacctmgr.out"))
	if _, err := Submit(ctx, st, f.experiment(), f.opts); err != nil {
		t.Fatalf("without accounting: %v", err)
	}
}

// TestSplitArraysShareOneThrottle: Slurm's %K limits each array on its
// own; when a sweep goes as several arrays and its trials outnumber the
// throttle, each array waits for the one before it (afterany), so that at
// most K of the sweep's tasks run at once. With no throttle, or one that
// the whole sweep fits, the arrays run side by side.
func TestSplitArraysShareOneThrottle(t *testing.T) {
	for _, tc := range []struct {
		maxSize, maxParallel int
		arrays               []string
		deps                 []string // of each trials job, by id
	}{
		// Four trials, arrays of two, throttle two: each array alone keeps
		// within it (no %), together they would run four.
		{2, 2, []string{"0-1", "2+0-1"}, []string{"", "--dependency=afterany:100"}},
		{2, 1, []string{"0-1%1", "2+0-1%1"}, []string{"", "--dependency=afterany:100"}},
		{3, 1, []string{"0-2%1", "3+0"}, []string{"", "--dependency=afterany:100"}},
		{2, 0, []string{"0-1", "2+0-1"}, []string{"", ""}},
		{2, 4, []string{"0-1", "2+0-1"}, []string{"", ""}},
	} {
		fake := fakeSlurm(t)
		f := newFixture(t)
		ctx := context.Background()
		st := openStore(t, f.opts.DB)
		f.opts.MaxArraySize, f.opts.MaxParallel = tc.maxSize, tc.maxParallel
		s, err := Submit(ctx, st, f.experiment(), f.opts)
		if err != nil || !reflect.DeepEqual(s.Arrays, tc.arrays) {
			t.Fatalf("%+v: submission %+v, %v", tc, s, err)
		}
		for k, id := range s.ArrayJobs {
			a, _ := os.ReadFile(filepath.Join(fake, "sbatch."+id+".args"))
			dep := ""
			for _, l := range strings.Split(string(a), "\n") {
				if strings.HasPrefix(l, "--dependency") {
					dep = l
				}
			}
			if dep != tc.deps[k] {
				t.Errorf("%+v: array %d (job %s): dependency %q, want %q", tc, k, id, dep, tc.deps[k])
			}
		}
	}
}

func TestChunks(t *testing.T) {
	for _, tc := range []struct {
		todo []int
		max  int
		want []chunk
	}{
		{[]int{0, 1, 2}, 1001, []chunk{{0, []int{0, 1, 2}}}},
		{[]int{0, 1, 2, 3, 4}, 2, []chunk{{0, []int{0, 1}}, {2, []int{2, 3}}, {4, []int{4}}}},
		{[]int{1, 5, 6, 9}, 4, []chunk{{0, []int{1}}, {5, []int{5, 6}}, {9, []int{9}}}},
	} {
		if got := chunks(tc.todo, tc.max); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("chunks(%v, %d) = %v, want %v", tc.todo, tc.max, got, tc.want)
		}
	}
}

// plantedConfig has stages all trials share (generate, ingest, binarize,
// split) and needs no data set.
const plantedConfig = `
[experiments.planted]
pipeline = "movielens"
[experiments.planted.settings]
dataset = "planted"
planted_users = 120
planted_items = 60
planted_ratings = 4000
planted_dim = 3
bins = 3
dim = 10
steps = 30
valid_every = 10
gauge_gap_every = 10
k1 = 10
optimizer = "adagrad"
lr = 0.5
gamma = 1.0
[[experiments.planted.variants]]
name = "goldstone"
gauge = "goldstone"
[[experiments.planted.variants]]
name = "procrustes"
gauge = "procrustes"
`

// argsOf returns the arguments the fake sbatch got for job id.
func argsOf(t *testing.T, fake, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fake, "sbatch."+id+".args"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSlurmSharedJob: with SharedJob, the stages all trials share run as a
// Slurm job before the array (afterok, kill-on-invalid-dep), not on the
// submit host, and the run's values equal a local run's; when they are
// cached no shared job is submitted.
func TestSlurmSharedJob(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	os.WriteFile(f.cfg, []byte(testConfig+plantedConfig), 0o644)
	ctx := context.Background()
	lst := openStore(t, filepath.Join(f.dir, "local.db"))
	lout, err := sweep.Execute(ctx, lst, f.named("planted"), sweep.Local{}, sweep.RunOptions{WorkDir: filepath.Join(f.dir, "localwork"), Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	want, wantSeries := f.read(lst, lout.RunID)

	f.opts.SharedJob = true
	st := openStore(t, f.opts.DB)
	s, err := Submit(ctx, st, f.named("planted"), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.SharedJob != "100" || s.ArrayJob != "101" {
		t.Fatalf("shared job %q, array %q; want 100 then 101", s.SharedJob, s.ArrayJob)
	}
	if a := argsOf(t, fake, "101"); !strings.Contains(a, "--dependency=afterok:100\n") || !strings.Contains(a, "--kill-on-invalid-dep=yes\n") {
		t.Errorf("the array does not wait for the shared job:\n%s", a)
	}
	if sc, _ := os.ReadFile(filepath.Join(fake, "sbatch.100.script")); !strings.Contains(string(sc), " worker --shared ") || !strings.Contains(string(sc), "--run 1 --attempt 1") {
		t.Errorf("shared job's script:\n%s", sc)
	}
	// Nothing of the shared stages ran on the submit host.
	entries := func() []string {
		all, _ := filepath.Glob(filepath.Join(f.opts.WorkDir, "cache", "*", "*"))
		var es []string
		for _, e := range all {
			if !strings.HasSuffix(e, ".lock") { // an entry's lock file
				es = append(es, e)
			}
		}
		return es
	}
	if es := entries(); len(es) != 0 {
		t.Fatalf("the submit host ran the shared stages: cache entries %v", es)
	}
	r, err := SharedWorker(ctx, SharedOptions{Dir: s.Dir, Attempt: 1, Workers: 1})
	if err != nil || r.Status != batch.Done || !slices.Contains(r.Ran, "planted/generate") {
		t.Fatalf("shared job: %+v, %v", r, err)
	}
	if es := entries(); len(es) != len(r.Ran) {
		t.Errorf("the shared job ran %v, the cache holds %v", r.Ran, es)
	}
	rs, err := Status(ctx, st, s.RunID, f.opts.WorkDir, &slurm.Poller{Client: &slurm.Client{Retries: -1}})
	if err != nil || rs.Shared == nil || rs.Shared.Job != "100" || rs.Shared.State != batch.Done {
		t.Fatalf("status of the shared job: %+v, %v", rs.Shared, err)
	}
	runTasks(t, s)
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil || c.Finished == nil || c.Finished.Status != runs.StatusFinished {
		t.Fatalf("collect: %+v, %v", c, err)
	}
	got, gotSeries := f.read(st, s.RunID)
	sameBits(t, "planted summaries", got, want)
	if !reflect.DeepEqual(gotSeries, wantSeries) {
		t.Errorf("planted series differ from the local run")
	}
	jobs, _ := st.SlurmJobs(ctx, s.RunID)
	if len(jobs) != 3 || jobs[0].Role != runs.RoleShared || jobs[0].JobID != "100" {
		t.Errorf("recorded jobs %+v", jobs)
	}

	// Other trials over the same data (k1 is the goldstone gauge's, used
	// by no shared stage): the shared stages are cached, no shared job,
	// the array depends on nothing.
	f.opts.Sets = []string{"k1=5"}
	e2 := f.named("planted")
	if err := e2.Override(f.opts.Sets); err != nil {
		t.Fatal(err)
	}
	s2, err := Submit(ctx, st, e2, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	// (102 is run 1's collect job.)
	if s2.RunID == s.RunID || s2.SharedJob != "" || s2.ArrayJob != "103" || strings.Contains(argsOf(t, fake, "103"), "--dependency=afterok") {
		t.Fatalf("cached shared stages: run %d, shared job %q, array %q:\n%s", s2.RunID, s2.SharedJob, s2.ArrayJob, argsOf(t, fake, "103"))
	}
}

// TestSlurmFailedSharedJob: a shared job that fails (here killed for
// memory, without a result) leaves its array cancelled by Slurm; Collect
// then ends the run failed with one line naming the job, how it ended and
// its log, and the same submission resubmits a shared job and the trials.
func TestSlurmFailedSharedJob(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	os.WriteFile(f.cfg, []byte(testConfig+plantedConfig), 0o644)
	ctx := context.Background()
	f.opts.SharedJob = true
	st := openStore(t, f.opts.DB)
	s, err := Submit(ctx, st, f.named("planted"), f.opts)
	if err != nil || s.SharedJob != "100" {
		t.Fatalf("submit: %+v, %v", s, err)
	}
	// While it is queued the array waits: the run goes on.
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte("100|RUNNING|None\n101_0|PENDING|Dependency\n"), 0o644)
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil || c.SharedFailed != "" || c.MarkedInterrupted {
		t.Fatalf("collect while the shared job runs: %+v, %v", c, err)
	}
	// Killed for memory: no result; Slurm cancels the array.
	os.WriteFile(filepath.Join(fake, "squeue.out"), nil, 0o644)
	os.WriteFile(filepath.Join(fake, "sacct.out"), []byte("100|OUT_OF_MEMORY\n"), 0o644)
	c, err = Collect(ctx, st, s.RunID, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(s.Dir.Logs(), "shared-100.out")
	for _, w := range []string{"job 100", "OUT_OF_MEMORY", log} {
		if !strings.Contains(c.SharedFailed, w) || strings.Contains(c.SharedFailed, "\n") {
			t.Errorf("failure %q does not say %q on one line", c.SharedFailed, w)
		}
	}
	if ri, _ := st.Run(ctx, s.RunID); ri.Status != runs.StatusFailed || c.MarkedInterrupted {
		t.Fatalf("run %s (marked interrupted %v), want failed", ri.Status, c.MarkedInterrupted)
	}
	// Collecting again says the same and changes nothing.
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || c.SharedFailed == "" {
		t.Errorf("second collect: %+v, %v", c, err)
	}
	rs, err := Status(ctx, st, s.RunID, f.opts.WorkDir, &slurm.Poller{Client: &slurm.Client{Retries: -1}})
	if err != nil || rs.Shared == nil || rs.Shared.State != "ended" || rs.Shared.Reason != "sacct: OUT_OF_MEMORY" {
		t.Fatalf("status: %+v, %v", rs.Shared, err)
	}
	// The same command resubmits: the shared stages are still not cached.
	s2, err := Submit(ctx, st, f.named("planted"), f.opts)
	if err != nil || !s2.Resumed || s2.RunID != s.RunID || s2.SharedJob != "103" || s2.Attempt != 2 {
		t.Fatalf("resubmission: %+v, %v", s2, err)
	}
	if a := argsOf(t, fake, "104"); !strings.Contains(a, "--dependency=afterok:103\n") {
		t.Errorf("resubmitted array:\n%s", a)
	}
	if r, err := SharedWorker(ctx, SharedOptions{Dir: s.Dir, Attempt: 2, Workers: 1}); err != nil || r.Status != batch.Done {
		t.Fatalf("shared job: %+v, %v", r, err)
	}
	runTasks(t, s2)
	if c, err := Collect(ctx, st, s.RunID, f.opts); err != nil || c.Finished == nil || c.Finished.Status != runs.StatusFinished {
		t.Fatalf("collect: %+v, %v", c, err)
	}
}

// TestSlurmSharedJobAdopted: a shared job of the run still queued but not
// recorded (its submitting runner was killed between sbatch and recording
// it) is adopted, not submitted a second time: the array depends on it.
func TestSlurmSharedJobAdopted(t *testing.T) {
	fake := fakeSlurm(t)
	f := newFixture(t)
	os.WriteFile(f.cfg, []byte(testConfig+plantedConfig), 0o644)
	f.opts.SharedJob, f.opts.NoCollectJob = true, true
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	// (The fake squeue answers every name with this job.)
	os.WriteFile(filepath.Join(fake, "squeue.out"), []byte("77|PENDING|Priority\n"), 0o644)
	s, err := Submit(ctx, st, f.named("planted"), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.SharedJob != "77" || s.ArrayJob != "100" || !strings.Contains(argsOf(t, fake, "100"), "--dependency=afterok:77\n") {
		t.Fatalf("shared job %q, array %q:\n%s", s.SharedJob, s.ArrayJob, argsOf(t, fake, "100"))
	}
	jobs, _ := st.SlurmJobs(ctx, s.RunID)
	if len(jobs) != 2 || jobs[0].JobID != "77" && jobs[1].JobID != "77" {
		t.Errorf("recorded jobs %+v", jobs)
	}
}

// TestSlurmSharedJobStageFails: a shared stage that fails (a bad row in
// the ratings table) makes the shared job write a failed result with the
// stage's error, which Collect reports, naming the file and line.
func TestSlurmSharedJobStageFails(t *testing.T) {
	fakeSlurm(t)
	f := newFixture(t)
	table := filepath.Join(f.dir, "ratings.csv")
	var b strings.Builder
	b.WriteString("userId,movieId,rating,timestamp\n")
	for i := range 4000 {
		fmt.Fprintf(&b, "%d,%d,%d.0,%d\n", 1+i%80, 1+i%40, 1+i%5, 1_500_000_000+i*1000)
	}
	b.WriteString("7,3,four,1600000000\n")
	os.WriteFile(table, []byte(b.String()), 0o644)
	os.WriteFile(f.cfg, []byte(testConfig+strings.Replace(plantedConfig, `dataset = "planted"`, `dataset = "`+table+`"`, 1)), 0o644)
	f.opts.SharedJob = true
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	s, err := Submit(ctx, st, f.named("planted"), f.opts)
	if err != nil || s.SharedJob == "" {
		t.Fatalf("submit: %+v, %v", s, err)
	}
	r, err := SharedWorker(ctx, SharedOptions{Dir: s.Dir, Attempt: 1, Workers: 1})
	if err == nil || r.Status != batch.Failed || !strings.Contains(r.Error, "ratings.csv:4002") {
		t.Fatalf("shared job: %+v, %v", r, err)
	}
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil || !strings.Contains(c.SharedFailed, "ratings.csv:4002") || !strings.Contains(c.SharedFailed, "log: ") {
		t.Fatalf("collect: %+v, %v", c, err)
	}
}

// TestSlurmOneTrialReport: a run of one trial (its name is "") through the
// Slurm executor ends finished with its report, and gets its report back
// from the same command once the report folder was removed. Before, the
// report was looked up by trial name: collect failed with 'trial "" has
// no result in run 1 (status "")' and left the run running, on every
// collect.
func TestSlurmOneTrialReport(t *testing.T) {
	fakeSlurm(t)
	f := newFixture(t)
	ctx := context.Background()
	st := openStore(t, f.opts.DB)
	e := f.named("one")
	s, err := Submit(ctx, st, e, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Submitted) != 1 {
		t.Fatalf("submitted %v, want one task", s.Submitted)
	}
	runTasks(t, s)
	c, err := Collect(ctx, st, s.RunID, f.opts)
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	if c.Finished == nil || c.Finished.Status != runs.StatusFinished || c.Finished.ReportPath == "" {
		t.Fatalf("collect: %+v %+v", c.Collected, c.Finished)
	}
	if ri, _ := st.Run(ctx, s.RunID); ri.Status != runs.StatusFinished {
		t.Fatalf("run %s after collect, want finished", ri.Status)
	}
	summary := filepath.Join(c.Finished.ReportPath, "summary.md")
	if _, err := os.Stat(summary); err != nil {
		t.Fatalf("report: %v", err)
	}
	// The report folder removed: the same command writes it again.
	if err := os.RemoveAll(f.opts.Reports); err != nil {
		t.Fatal(err)
	}
	s2, err := Submit(ctx, st, e, f.opts)
	if err != nil {
		t.Fatalf("resubmission after the report was removed: %v", err)
	}
	if !s2.UpToDate || s2.RunID != s.RunID {
		t.Fatalf("resubmission: %+v", s2)
	}
	if _, err := os.Stat(summary); err != nil {
		t.Fatalf("report after the resubmission: %v", err)
	}
}
