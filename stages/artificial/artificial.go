// Package artificial is the pipeline of the paper's Section 5.1: dense
// dynamic Gaussian matrix factorisation on artificial data, one train stage
// per trial and a report.
package artificial

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"goldstone/internal/atomicfile"
	"goldstone/models"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/stages"
)

func init() { stages.Register(Pipeline{}) }

// Pipeline is the artificial pipeline.
type Pipeline struct{}

// Name implements stages.Pipeline.
func (Pipeline) Name() string { return "artificial" }

// Specs implements stages.Pipeline: the training settings, the MF prior and
// the artificial data.
func (Pipeline) Specs() []*stages.Spec {
	specs := append(stages.TrainingSpecs(), stages.MFSpecs()...)
	return append(specs,
		&stages.Spec{Key: "time_steps", Kind: stages.Int, Default: int64(30), Doc: "number of time steps T", Check: stages.Positive},
		&stages.Spec{Key: "rows", Kind: stages.Int, Default: int64(10), Doc: "rows of X", Check: stages.Positive},
		&stages.Spec{Key: "cols", Kind: stages.Int, Default: int64(10), Doc: "columns of X", Check: stages.Positive},
		&stages.Spec{Key: "rank", Kind: stages.Int, Default: int64(3), Doc: "rank of the planted X", Check: stages.Positive},
		&stages.Spec{Key: "noise_var", Kind: stages.Float, Default: 1e-3, Doc: "variance of the noise added to X", Check: stages.NonNegative},
		&stages.Spec{Key: "snapshots", Kind: stages.FloatList, Default: []float64{0, 500, 2000, 20000}, Doc: "steps at which embeddings are saved for the trajectory figure"},
	)
}

// Build implements stages.Pipeline: one train node per trial and a report.
func (Pipeline) Build(_ context.Context, b *stages.Built, e *stages.Experiment, trials []stages.Trial, _ stages.Env) error {
	reportIn := map[string]pipeline.Ref{}
	for _, tr := range trials {
		id := "train/" + tr.Slug()
		b.Add(&pipeline.Node{ID: id, Stage: &TrainStage{Settings: tr.Settings}, Outputs: []string{"result"}})
		b.AddTrial(tr, id, id)
		reportIn[tr.ID] = pipeline.Out(id, "result")
	}
	b.AddReport(e, trials, "report-artificial", reportIn, Report)
	return nil
}

// TrainStage trains one trial (output "result": series.arrow, summary.json,
// snapshots.json).
type TrainStage struct{ Settings stages.Settings }

func (*TrainStage) Name() string    { return "train-artificial" }
func (*TrainStage) Version() string { return "1" }
func (s *TrainStage) Params() any   { return s.Settings.Params(trainKeys...) }
func (s *TrainStage) Run(ctx context.Context, io *pipeline.IO) error {
	return Train(ctx, s.Settings, io.Workers(), io.Output("result"), stages.ProgressFunc(io))
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

// trainKeys are the settings the artificial train stage reads.
var trainKeys = []string{
	"seed", "steps", "log_every", "gauge_gap_every", "init_scale",
	"optimizer", "lr", "lr_s0", "lr_kappa", "clip", "adagrad_eps", "adam_beta1", "adam_beta2", "adam_eps",
	"gauge", "k1", "k2", "gauge_lr", "rotation", "keep_fields", "guard", "flip_walls", "reflections",
	"dim", "lambda", "gamma", "time_steps", "rows", "cols", "rank", "noise_var", "snapshots",
}

// Train runs one trial of the paper's artificial experiment
// (Section 5.1): dense dynamic Gaussian MF on X = Ubar^T Vbar + noise, the
// same X at every time step. It writes series.arrow, summary.json and
// snapshots.json into dir.
func Train(ctx context.Context, s stages.Settings, workers int, dir string, progress func(step, total int)) error {
	seed := uint64(s.Int("seed"))
	rows, cols, T, d := s.Int("rows"), s.Int("cols"), s.Int("time_steps"), s.Int("dim")
	x0 := models.Artificial(seed, rows, cols, s.Int("rank"), s.Float("noise_var"))
	lstar := models.OptimalLoss(x0, rows, cols, d, T)
	m := &models.DenseMF{
		X: [][]float64{x0}, Rows: rows, Cols: cols, D: d, T: T,
		Lambda: s.Float("lambda"), Gamma: s.Float("gamma"), InitStd: s.Float("init_scale"),
	}
	if err := m.Validate(); err != nil {
		return err
	}
	opt, err := stages.BuildOptimizer(s, 1) // the problem is tiny: one core per trial
	if err != nil {
		return err
	}
	defer opt.Close()
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(seed, 0x696e6974)))

	series := &stages.Series{}
	sum := stages.Summary{"l_star": lstar}
	want := map[int]bool{}
	for _, st := range s.Floats("snapshots") {
		want[int(st)] = true
	}
	var snaps []Snapshot
	steps := s.Int("steps")
	loop := &stages.Loop{
		Problem:  models.ProblemOf(m),
		Opt:      opt,
		Steps:    steps,
		LogEvery: s.Int("log_every"),
		GapEvery: s.Int("gauge_gap_every"),
		Series:   series,
		Summary:  sum,
		Extra: func(it *optim.Iter, _ []float64) error {
			series.Add("excess", it.Step, it.Loss-lstar)
			if it.Step%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			return nil
		},
		AtStep: func(step int, x []float64) {
			if want[step] || (step == steps && want[-1]) {
				snaps = append(snaps, Snapshot{Step: step, T: T, N: rows + cols, D: d, Z: append([]float64(nil), x...)})
			}
		},
		Progress: progress,
	}
	if err := loop.Run(x); err != nil {
		return err
	}
	final := optim.Psi(x, m.Blocks(), m.Graph())
	grad := make([]float64, len(x))
	finalLoss := m.LocalLoss(grad, x) + final
	sum["final_loss"] = finalLoss
	sum["final_psi"] = final
	sum["final_excess"] = finalLoss - lstar
	sum["steps_to_excess_1"] = stages.FirstBelow(series, "excess", 1)
	sum["steps_to_excess_0.01"] = stages.FirstBelow(series, "excess", 0.01)
	if err := stages.WriteSeries(filepath.Join(dir, "series.arrow"), series); err != nil {
		return err
	}
	if err := stages.WriteSummary(filepath.Join(dir, "summary.json"), sum); err != nil {
		return err
	}
	b, err := json.Marshal(snaps)
	if err != nil {
		return fmt.Errorf("snapshots: %w", err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, "snapshots.json"), b)
}
