package movielens

import (
	"context"
	"fmt"
	"goldstone/formats/ratings"
	"os"
	"path/filepath"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/models"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/train"
	"goldstone/trialio"
)

// What a trial keeps (issue 32): keep = "final" (the default) keeps the
// final parameters in the train stage's cache entry (with early stopping
// the best-validation ones beside them, in BestDir): two nodes, train and
// evaluate, as always. keep = "best" or "none" train and evaluate in one
// node (TrialStage), whose entry holds the result (series and summary,
// what the report reads) and, for "best", the best-validation parameters
// as output "model" (what export_embeddings reads); the parameters not
// kept live in a scratch directory for the evaluation only. The
// pipeline takes no parameter snapshots during training, so there is no
// "snapshots" policy.

// Keep policies.
const (
	KeepFinal = "final"
	KeepBest  = "best"
	KeepNone  = "none"
)

// KeepSettings choose what a trial keeps.
type KeepSettings struct {
	Keep string `set:"keep" default:"final" oneof:"final best none" doc:"what a trial keeps on disk beyond its series and summary: final (the final parameters; with early_stopping also the best-validation ones), best (the best-validation parameters only; needs early_stopping) or none (no parameters; the report needs none); runner plan prints the estimated bytes"`
}

// PruneKeys leaves the default policy out of a trial's keys (trials that
// keep the final parameters keep their ids and cache keys).
func (s KeepSettings) PruneKeys(m map[string]any) {
	if s.Keep == KeepFinal {
		delete(m, "keep")
	}
}

// checkKeep refuses a keep policy the trial's other settings contradict.
func checkKeep(tr experiment.Trial, ts TrainSettings) error {
	switch {
	case ts.Keep.Keep == KeepBest && !ts.EarlyStop.Enabled:
		return fmt.Errorf("trial %s: keep = \"best\" keeps the best-validation parameters: set early_stopping = true (or keep = \"final\")", tr.ID)
	case ts.Keep.Keep == KeepNone && settings.MustDecode[ExportSettings](tr.Settings).Embeddings:
		return fmt.Errorf("trial %s: export_embeddings = true writes the trained vectors, keep = \"none\" keeps no parameters: keep = \"final\" or \"best\"", tr.ID)
	}
	return nil
}

// TrialStage trains and evaluates one trial in one node (keep = "best" or
// "none"): outputs "result" (series.arrow, series.parquet, summary.json:
// the train and evaluate stages' result for the same settings, bit for bit)
// and, for keep = "best", "model" (model.json and the best-validation
// parameters; ParamsFile).
type TrialStage struct {
	Train  TrainSettings
	Eval   EvaluateStage
	Budget *optim.Budget
}

func (*TrialStage) Name() string    { return "trial-movielens" }
func (*TrialStage) Version() string { return TrialVersion }
func (s *TrialStage) Params() any {
	return map[string]any{"train": settings.Keys(s.Train), "evaluate": s.Eval.Params()}
}

func (s *TrialStage) Run(ctx context.Context, io *pipeline.IO) error {
	res := io.Output("result")
	scratch := res + ".scratch" // in the entry's temporary directory, removed before it is kept
	if err := os.RemoveAll(scratch); err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	pool := train.NewPool(s.Budget, io.Workers())
	err := Train(ctx, s.Train, io.Input("binned"), io.Input("split"), pool, scratch, train.FromIO(io))
	pool.Close()
	if err != nil {
		return err
	}
	var planted *PlantedConfig
	if s.Eval.Planted != nil {
		c := s.Eval.Planted.Config()
		planted = &c
	}
	if err := Evaluate(ctx, withModel{io, scratch}, s.Eval.Model, s.Eval.Prior, planted, res); err != nil {
		return err
	}
	if s.Train.Keep.Keep == KeepBest {
		return keepBest(scratch, io.Output("model"))
	}
	return nil
}

// keepBest moves the best-validation parameters of the model directory
// src into dst as a model directory of its own (model.json without Best).
func keepBest(src, dst string) error {
	var meta modelMeta
	if err := trialio.ReadJSON(filepath.Join(src, "model.json"), &meta); err != nil {
		return err
	}
	if meta.Best == "" {
		return fmt.Errorf("keep = \"best\": %s holds no best-validation parameters", src)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	files := []string{ParamsFile}
	for _, a := range meta.Arrays {
		files = append(files, a.Name+".npy")
	}
	for _, f := range files {
		if err := os.Rename(filepath.Join(src, meta.Best, f), filepath.Join(dst, f)); err != nil {
			return err
		}
	}
	meta.Best = ""
	return trialio.WriteJSON(filepath.Join(dst, "model.json"), meta)
}

// withModel is a stage's inputs with input "model" at a directory of its
// own.
type withModel struct {
	Inputs
	model string
}

func (w withModel) Input(name string) string {
	if name == "model" {
		return w.model
	}
	return w.Inputs.Input(name)
}

func (w withModel) HasInput(name string) bool { return name == "model" || w.Inputs.HasInput(name) }

// diskEstimate is a trial's experiment.DiskEstimate: the parameter files
// its keep policy leaves, 8 bytes a value (T x (users+items) x d in
// params.npy, plus the model's bias arrays) and a .npy header per file,
// once per copy kept (final; best; both with early stopping). users and
// items come from the planted settings or, for a table, from the ingest's
// counts once the ingest is cached (every id the table holds: an upper
// bound on what the bins keep).
func diskEstimate(ts TrainSettings, data DataSettings) experiment.DiskEstimate {
	return func(cached func(node, output string) (string, bool)) (int64, string, string) {
		keep := ts.Keep.Keep
		copies := map[string]int{KeepNone: 0, KeepBest: 1, KeepFinal: 1}[keep]
		if keep == KeepFinal && ts.EarlyStop.Enabled {
			copies = 2
		}
		how := "8 bytes x (T x (users+items) x d + bias arrays) per parameter copy kept, plus the .npy headers"
		users, items := data.Planted.Users, data.Planted.Items
		if data.Dataset != "planted" {
			how += "; users and items from the ingest"
			p, ok := cached("ingest", "ingest.json")
			var st ratings.Stats
			if !ok || trialio.ReadJSON(p, &st) != nil {
				if copies == 0 {
					return 0, keep, how
				}
				return -1, keep, how + " (unknown until the ingest has run)"
			}
			users, items = st.Users, st.Items
		}
		m := ts.Model.Likelihood.New(models.RatingsSpec{Users: users, Items: items, T: data.Bin.Bins, D: ts.Loop.Dim})
		arrays := m.Arrays()
		T, d := data.Bin.Bins, ts.Loop.Dim
		bytes := 8*int64(T)*int64(users+items)*int64(d) + int64(len(trialio.NpyHeader(T, users+items, d)))
		for _, a := range arrays {
			bytes += 8*int64(a.Len) + int64(len(trialio.NpyHeader(a.Len)))
		}
		return int64(copies) * bytes, keep, how
	}
}
