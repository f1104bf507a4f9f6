// Package artificial is the pipeline of the paper's Section 5.1: dense
// dynamic Gaussian matrix factorisation on artificial data, one train stage
// per trial and a report.
package artificial

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/internal/atomicfile"
	"goldstone/internal/checkpoint"
	"goldstone/models"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/report"
	"goldstone/runs"
	"goldstone/train"
	"goldstone/trialio"
)

func init() { experiment.Register(Pipeline{}) }

// Pipeline is the artificial pipeline.
type Pipeline struct{}

// Name implements experiment.Pipeline.
func (Pipeline) Name() string { return "artificial" }

// Headline: the steps to the paper's Fig. 2 targets, the final excess loss
// and the steps until the gauge gap relaxed (experiment.Headliner).
func (Pipeline) Headline() []runs.Headline {
	return []runs.Headline{
		{Metric: "steps_to_excess_1", Lower: true, Range: runs.NonNegative},
		{Metric: "steps_to_excess_0.01", Lower: true, Range: runs.NonNegative},
		{Metric: "final_excess", Lower: true, Range: runs.NonNegative}, // L* is the optimum
		{Metric: "steps_to_gap_1pct", Lower: true, Range: runs.NonNegative},
	}
}

// Refuses implements experiment.Refuser: early stopping keeps the state
// of the best validation metric, and the artificial data set has no
// held-out data (the loss is that of the whole fully observed X).
func (Pipeline) Refuses(key string) string {
	switch key {
	case "early_stopping", "patience", "valid_every":
		return "early stopping needs held-out validation data, and the artificial pipeline fits the whole of its fully observed X (no validation split); use the movielens or dwe pipeline"
	}
	return ""
}

// Settings implements experiment.Pipeline: the train stage's settings are all
// the pipeline reads.
func (Pipeline) Settings() any { return &TrainSettings{} }

// Data are the settings of the artificial data set.
type Data struct {
	TimeSteps int     `set:"time_steps" default:"30" check:">0" doc:"number of time steps T"`
	Rows      int     `set:"rows" default:"10" check:">0" doc:"rows of X"`
	Cols      int     `set:"cols" default:"10" check:">0" doc:"columns of X"`
	Rank      int     `set:"rank" default:"3" check:">0" doc:"rank of the planted X"`
	NoiseVar  float64 `set:"noise_var" default:"1e-3" check:">=0" doc:"variance of the noise added to X"`
	// InitShared starts every time step from the same draw (issue 27: a
	// start without reflection domain walls or twists, psi = 0 at step 0,
	// so what remains is the slow-twist phase the paper describes).
	InitShared bool `set:"init_shared" default:"false" doc:"start every time step from time step 0's random draw (no domain walls or twists at step 0: psi = 0); false draws every time step independently (the paper)"`
}

// PruneKeys leaves init_shared out of the key at its default, so trials
// made before it existed keep their keys.
func (Data) PruneKeys(m map[string]any) {
	if v, ok := m["init_shared"].(bool); ok && !v {
		delete(m, "init_shared")
	}
}

// TrainSettings are what the train stage reads.
type TrainSettings struct {
	Loop      train.LoopSettings
	Prior     train.MFPrior
	Data      Data
	Snapshots []float64 `set:"snapshots" default:"[0, 500, 2000, 20000]" doc:"steps at which embeddings are saved for the trajectory figure"`
}

// Build implements experiment.Pipeline: one train node per trial and a report.
func (Pipeline) Build(_ context.Context, b *experiment.Built, e *experiment.Experiment, trials []experiment.Trial, _ experiment.Env) error {
	reportIn := map[string]pipeline.Ref{}
	for _, tr := range trials {
		id := "train/" + tr.Slug()
		ts := settings.MustDecode[TrainSettings](tr.Settings)
		if err := ts.Loop.RequireFloat64("artificial", tr.ID); err != nil {
			return err
		}
		b.Add(&pipeline.Node{ID: id, Stage: &TrainStage{Settings: ts}, Outputs: []string{"result"}})
		b.AddTrial(tr, id, id)
		reportIn[tr.ID] = pipeline.Out(id, "result")
	}
	report.Add(b, e, trials, reportIn, report.Def{Stage: "report-artificial", Version: ReportVersion, Draw: Report})
	return nil
}

// TrainStage trains one trial (output "result": series.arrow, series.parquet, summary.json,
// snapshots.json).
type TrainStage struct{ Settings TrainSettings }

func (*TrainStage) Name() string    { return "train-artificial" }
func (*TrainStage) Version() string { return TrainVersion }
func (s *TrainStage) Params() any   { return settings.Keys(s.Settings) }

// ResumeParams are the settings without the steps (pipeline.Resumable): the
// first s steps of a trial do not depend on its budget, so a longer run of
// it continues a shorter one's checkpoint (pruning).
func (s *TrainStage) ResumeParams() any { return train.ResumeKeys(s.Settings) }
func (s *TrainStage) Run(ctx context.Context, io *pipeline.IO) error {
	// The problem is tiny: one core per trial, whatever the budget.
	return Train(ctx, s.Settings, nil, io.Output("result"), train.FromIO(io))
}

// Snapshot is the embedding tensor of a dense MF trial at one step, laid out
// as optim.Blocks: z_{t,i} = Z[(t*N+i)*D : (t*N+i+1)*D].
type Snapshot struct {
	Step int       `json:"step"`
	T    int       `json:"t"`
	N    int       `json:"n"`
	D    int       `json:"d"`
	Z    []float64 `json:"z"`
}

// Train runs one trial of the paper's artificial experiment
// (Section 5.1): dense dynamic Gaussian MF on X = Ubar^T Vbar + noise, the
// same X at every time step. It writes series.arrow, series.parquet,
// summary.json and snapshots.json into dir, also when the training
// diverged (a result: train.Loop.Diverged; the summary says where, and the
// snapshots end before it).
func Train(ctx context.Context, s TrainSettings, pool *optim.Pool, dir string, sio train.StageIO) error {
	seed := uint64(s.Loop.Seed)
	rows, cols, T, d := s.Data.Rows, s.Data.Cols, s.Data.TimeSteps, s.Loop.Dim
	x0 := models.Artificial(seed, rows, cols, s.Data.Rank, s.Data.NoiseVar)
	lstar := models.OptimalLoss(x0, rows, cols, d, T)
	m := &models.DenseMF{
		X: [][]float64{x0}, Rows: rows, Cols: cols, D: d, T: T,
		Lambda: s.Prior.Lambda, Gamma: s.Prior.Gamma, InitStd: s.Loop.InitScale,
	}
	if err := m.Validate(); err != nil {
		return err
	}
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(seed, 0x696e6974)))
	if s.Data.InitShared {
		b := m.Blocks()
		for t := 1; t < b.T; t++ {
			copy(b.Block(x, t), b.Block(x, 0))
		}
	}

	series := &trialio.Series{}
	sum := trialio.Summary{"l_star": lstar}
	want := map[int]bool{}
	for _, st := range s.Snapshots {
		want[int(st)] = true
	}
	var snaps []Snapshot
	steps := s.Loop.Steps
	loop := s.Loop.Loop(models.ProblemOf(m), pool)
	loop.Series, loop.Summary = series, sum
	loop.Attach(sio)
	loop.Extra = func(it *optim.Iter, _ []float64) error {
		series.Add("excess", it.Step, it.Loss-lstar)
		return nil
	}
	loop.AtStep = func(step int, x []float64) {
		if want[step] || step == steps { // the last step always: the trajectory figure ends there
			snaps = append(snaps, Snapshot{Step: step, T: T, N: rows + cols, D: d, Z: append([]float64(nil), x...)})
		}
	}
	loop.State = train.StateHooks{
		Save: func(st *checkpoint.State) { saveSnapshots(st, snaps) },
		Load: func(st *checkpoint.State) (err error) {
			snaps, err = loadSnapshots(st, T, rows+cols, d, len(x))
			return err
		},
	}
	if err := loop.Run(ctx, x); err != nil {
		return err
	}
	if loop.Diverged != nil {
		// A result: the series up to the divergence, the snapshots
		// before it, and every threshold never reached (see
		// train.DivergedSummary).
		sum["final_excess"] = math.NaN()
		for _, thr := range train.ExcessThresholds {
			sum[train.ExcessMetric(thr)] = runs.Never
		}
	} else {
		final := optim.Psi(x, m.Blocks(), m.Graph())
		grad := make([]float64, len(x))
		finalLoss := m.LocalLoss(grad, x) + final
		sum["final_loss"] = finalLoss
		sum["final_psi"] = final
		sum["final_excess"] = finalLoss - lstar
		for _, thr := range train.ExcessThresholds {
			sum[train.ExcessMetric(thr)] = train.FirstBelow(series, "excess", thr)
		}
	}
	if err := trialio.WriteTrialSeries(dir, series); err != nil {
		return err
	}
	if err := trialio.WriteSummary(filepath.Join(dir, "summary.json"), sum); err != nil {
		return err
	}
	b, err := json.Marshal(snaps)
	if err != nil {
		return fmt.Errorf("snapshots: %w", err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, "snapshots.json"), b)
}

// saveSnapshots adds the snapshots taken so far to a checkpoint.
func saveSnapshots(st *checkpoint.State, snaps []Snapshot) {
	steps := make([]int64, len(snaps))
	var z []float64
	for i, sn := range snaps {
		steps[i] = int64(sn.Step)
		z = append(z, sn.Z...)
	}
	st.Ints("snapshots.step", steps...)
	st.Floats("snapshots.z", z)
}

// loadSnapshots reads the snapshots of a checkpoint (each of size values).
func loadSnapshots(st *checkpoint.State, T, n, d, size int) ([]Snapshot, error) {
	steps, err := st.ReadInts("snapshots.step", -1)
	if err != nil {
		return nil, err
	}
	z := make([]float64, len(steps)*size)
	if err := st.ReadFloats("snapshots.z", z); err != nil {
		return nil, err
	}
	snaps := make([]Snapshot, len(steps))
	for i, s := range steps {
		snaps[i] = Snapshot{Step: int(s), T: T, N: n, D: d, Z: z[i*size : (i+1)*size : (i+1)*size]}
	}
	return snaps, nil
}
