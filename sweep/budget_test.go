package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/sweep"
	"goldstone/train"
	"goldstone/trialio"
)

// budgetPipeline is a test pipeline of one node per trial, whose stage
// takes its pool from train.NewPool and records how many workers the pool
// has: a short trial ends once the long one runs; the long one then waits
// until its pool has grown.
type budgetPipeline struct{}

type budgetSettings struct {
	settings.Seeded
	Long bool `set:"long" default:"false" doc:"the trial waits for its pool to get every core"`
}

func (budgetPipeline) Name() string  { return "test-budget" }
func (budgetPipeline) Settings() any { return &budgetSettings{} }
func (budgetPipeline) Build(_ context.Context, b *experiment.Built, _ *experiment.Experiment, trials []experiment.Trial, env experiment.Env) error {
	for _, tr := range trials {
		id := "run/" + tr.Slug()
		s := settings.MustDecode[budgetSettings](tr.Settings)
		b.Add(&pipeline.Node{ID: id, Stage: &budgetStage{long: s.Long, name: tr.Name, budget: env.Budget}, Outputs: []string{"result"}})
		b.AddTrial(tr, id, id)
	}
	return nil
}

func init() { experiment.Register(budgetPipeline{}) }

// budgetLog is what the budget stages saw.
var budgetLog struct {
	sync.Mutex
	longStarted chan struct{} // closed when the long trial runs
	first, last map[string]int
	runErr      error
}

type budgetStage struct {
	long   bool
	name   string
	budget *optim.Budget
}

func (s *budgetStage) Name() string    { return "budget-test" }
func (s *budgetStage) Version() string { return "1" }
func (s *budgetStage) Params() any     { return map[string]any{"long": s.long, "name": s.name} }
func (s *budgetStage) Run(ctx context.Context, io *pipeline.IO) error {
	pool := train.NewPool(s.budget, io.Workers())
	defer pool.Close()
	budgetLog.Lock()
	budgetLog.first[s.name] = pool.Workers()
	started := budgetLog.longStarted
	budgetLog.Unlock()
	if !s.long {
		// End while the long trial runs, so that it is left alone.
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			return errors.New("the long trial did not start")
		}
	} else {
		close(started)
		deadline := time.Now().Add(20 * time.Second)
		for pool.Workers() < 2 && time.Now().Before(deadline) {
			// Loops keep running while the pool grows.
			n := 0
			var mu sync.Mutex
			pool.Chunks(64, 1, func(c, lo, hi int) { mu.Lock(); n++; mu.Unlock() })
			if n != 64 {
				return fmt.Errorf("%d of 64 chunks ran", n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	budgetLog.Lock()
	budgetLog.last[s.name] = pool.Workers()
	budgetLog.Unlock()
	dir := io.Output("result")
	ser := &trialio.Series{}
	ser.Add("loss", 0, 1)
	if err := trialio.WriteSeries(filepath.Join(dir, "series.arrow"), ser); err != nil {
		return err
	}
	return trialio.WriteSummary(filepath.Join(dir, "summary.json"), trialio.Summary{"workers": float64(pool.Workers())})
}

// TestSweepGivesIdleCoresToRunningTrials: a sweep of two trials with
// --jobs 2 on 2 cores starts each with one worker; once the short one has
// ended, the long one's pool grows to 2 workers (the idle core), never
// more.
func TestSweepGivesIdleCoresToRunningTrials(t *testing.T) {
	budgetLog.Lock()
	budgetLog.longStarted = make(chan struct{})
	budgetLog.first, budgetLog.last = map[string]int{}, map[string]int{}
	budgetLog.Unlock()
	cfg, err := experiment.ParseConfig("t.toml", []byte(`
[experiments.x]
pipeline = "test-budget"
[experiments.x.grid]
long = [false, true]
`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out, err := sweep.Execute(ctx, st, cfg.Experiments["x"], sweep.Local{}, sweep.RunOptions{WorkDir: filepath.Join(dir, "work"), Jobs: 2, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	if out.Done != 2 {
		t.Fatalf("%d of 2 trials done: %v", out.Done, out.Failures)
	}
	budgetLog.Lock()
	defer budgetLog.Unlock()
	for name, w := range budgetLog.first {
		if w != 1 {
			t.Errorf("trial %q started with %d workers, want 1 (2 cores, 2 jobs)", name, w)
		}
	}
	if w := budgetLog.last["long=true"]; w != 2 {
		t.Errorf("the long trial ended with %d workers, want 2 after the short one ended (seen: first %v, last %v)", w, budgetLog.first, budgetLog.last)
	}
}

// TestNewPoolWithoutSweep: outside Execute (the Slurm executor's tasks,
// tests) NewPool makes a pool of the stage's own workers, nil for one.
func TestNewPoolWithoutSweep(t *testing.T) {
	if p := train.NewPool(nil, 1); p != nil {
		t.Fatalf("one worker: pool %v, want nil (inline)", p)
	}
	p := train.NewPool(nil, 3)
	defer p.Close()
	if p.Workers() != 3 {
		t.Fatalf("pool of %d workers, want 3", p.Workers())
	}
}
