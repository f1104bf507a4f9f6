package slurmexec

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"goldstone/internal/slurm"
	"goldstone/internal/testdata"
	"goldstone/runs"
	"goldstone/stages"
	_ "goldstone/stages/pipelines"
	"goldstone/stages/trialio"
	"goldstone/sweep"
	"goldstone/sweep/slurmexec/batch"
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
n=$(cat "$d/n" 2>/dev/null || echo 100); echo $((n+1)) > "$d/n"
printf '%s\n' "$@" > "$d/sbatch.$n.args"; cat > "$d/sbatch.$n.script"
echo $n
`)
	write("squeue", `#!/bin/sh
echo call >> '`+dir+`/squeue.calls'
cat '`+dir+`/squeue.out' 2>/dev/null; true
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

func (f *fixture) experiment() *stages.Experiment { return f.named("small") }

func (f *fixture) named(name string) *stages.Experiment {
	f.t.Helper()
	c, err := stages.LoadConfig(f.cfg)
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
	e := f.named("withnan")
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
			if !strings.Contains(r.Error, "withnan/train/") {
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
	if err != nil || !strings.Contains(string(md), "## Failed trials (1)") || !strings.Contains(string(md), "| lr=1e+200 | step 1: local loss NaN: optim: loss diverged |") {
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
		if ents, _ := os.ReadDir(filepath.Join(f.opts.WorkDir, "cache", stage)); len(ents) != 1 {
			t.Errorf("shared cache has %d %s entries after submission, want 1", len(ents), stage)
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
