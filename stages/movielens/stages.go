package stages

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"goldstone/models"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/stages/movielens"
)

// Setting keys read by each MovieLens stage (their cache parameters).
var (
	mlDataKeys    = []string{"dataset"}
	mlPlantedKeys = []string{"planted_users", "planted_items", "planted_ratings", "planted_dim", "planted_seed", "bins"}
	mlTrainKeys   = []string{
		"seed", "steps", "log_every", "gauge_gap_every", "init_scale",
		"optimizer", "lr", "lr_s0", "lr_kappa", "clip", "adagrad_eps", "adam_beta1", "adam_beta2", "adam_eps",
		"gauge", "k1", "k2", "gauge_lr", "rotation", "keep_fields", "guard", "flip_walls", "reflections",
		"dim", "lambda", "gamma", "minibatch", "valid_every",
	}
)

// plantedConfig is the generator configuration of the planted data set.
func plantedConfig(s Settings) movielens.PlantedConfig {
	return movielens.PlantedConfig{
		Users: s.Int("planted_users"), Items: s.Int("planted_items"), Ratings: int64(s.Int("planted_ratings")),
		Bins: s.Int("bins"), D: s.Int("planted_dim"), Seed: uint64(s.Int("planted_seed")),
		Start: time.Date(1995, 1, 9, 0, 0, 0, 0, time.UTC), End: time.Date(2015, 3, 31, 0, 0, 0, 0, time.UTC),
		Drift: 0.1, Growth: 10,
	}
}

// binInfo is what the bin stage tells later stages.
type binInfo struct {
	T       int   `json:"t"`
	Users   int   `json:"users"`
	Items   int   `json:"items"`
	Ratings int64 `json:"ratings"`
	MinTime int64 `json:"min_time"`
	MaxTime int64 `json:"max_time"`
}

func buildMovieLens(ctx context.Context, b *Built, e *Experiment, trials []Trial, env Env) error {
	// Data preparation is shared by every trial; the settings it reads must
	// not vary across the sweep.
	s0, err := sharedSettings(e, trials, append([]string{"dataset", "bins", "split", "split_seed"}, mlPlantedKeys...))
	if err != nil {
		return err
	}
	dataset := s0.String("dataset")
	planted := dataset == "planted"
	var ratingsRef pipeline.Ref
	switch {
	case planted:
		cfg := plantedConfig(s0)
		b.Graph.Add(&pipeline.Node{
			ID: "generate",
			Stage: &funcStage{name: "generate-planted", version: "1", params: s0.Subset(mlPlantedKeys...),
				run: func(ctx context.Context, io *pipeline.IO) error {
					cfg := cfg
					cfg.Workers = io.Workers()
					st, err := movielens.GenerateFile(ctx, io.Output("ratings.csv"), io.Output("vectors.bin"), cfg)
					if err == nil {
						io.Logf("generated %d ratings (%d at the median)", st.Ratings, st.Mid)
					}
					return err
				}},
			Outputs: []string{"ratings.csv", "vectors.bin"},
		})
		ratingsRef = pipeline.Out("generate", "ratings.csv")
	default:
		path, err := movielens.Locate(env.DataDir, dataset)
		if err != nil {
			if !s0.Bool("fetch") || !env.Fetch || !errors.Is(err, movielens.ErrNotFound) {
				return fmt.Errorf("dataset %s: %w", dataset, err)
			}
			if _, known := movielens.Releases[dataset]; !known {
				return fmt.Errorf("dataset %s: %w", dataset, err)
			}
			// Fetch now, before the graph runs: the data set is an external input.
			// GOLDSTONE_MOVIELENS_URL points at a mirror (or a test server) with
			// the official layout: <base>/<name>.zip and <base>/<name>.zip.md5.
			path, err = movielens.Fetch(ctx, os.Getenv("GOLDSTONE_MOVIELENS_URL"), dataset, env.DataDir, nil)
			if err != nil {
				return fmt.Errorf("dataset %s: fetch: %w", dataset, err)
			}
		}
		ratingsRef = pipeline.File(path)
	}
	b.Graph.Add(&pipeline.Node{
		ID: "ingest",
		Stage: &funcStage{name: "ingest-movielens", version: "1", params: map[string]any{},
			run: func(ctx context.Context, io *pipeline.IO) error {
				st, err := movielens.Ingest(ctx, io.Input("ratings"), io.Output("ratings.parquet"), movielens.IngestOptions{Workers: io.Workers()})
				if err == nil {
					io.Logf("ingested %d ratings (%d users, %d items, %.1f MB)", st.Ratings, st.Users, st.Items, float64(st.Bytes)/1e6)
				}
				return err
			}},
		Inputs:  map[string]pipeline.Ref{"ratings": ratingsRef},
		Outputs: []string{"ratings.parquet"},
	})
	b.Graph.Add(&pipeline.Node{
		ID: "binarize",
		Stage: &funcStage{name: "binarize", version: "1", params: map[string]any{},
			run: func(ctx context.Context, io *pipeline.IO) error {
				st, err := movielens.Binarize(ctx, io.Input("ratings"), io.Output("binary.parquet"))
				if err != nil {
					return err
				}
				io.Logf("median %.1f: kept %d positive, %d negative, dropped %d", st.Median, st.Positive, st.Negative, st.Dropped)
				return writeJSON(io.Output("binarize.json"), st)
			}},
		Inputs:  map[string]pipeline.Ref{"ratings": pipeline.Out("ingest", "ratings.parquet")},
		Outputs: []string{"binary.parquet", "binarize.json"},
	})
	b.Graph.Add(&pipeline.Node{
		ID: "bin",
		Stage: &funcStage{name: "bin", version: "1", params: s0.Subset("bins"),
			run: func(ctx context.Context, io *pipeline.IO) error {
				dir := io.Output("binned")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				res, err := movielens.Bin(ctx, io.Input("binary"), filepath.Join(dir, "binned.parquet"), s0.Int("bins"))
				if err != nil {
					return err
				}
				info := binInfo{T: res.T, Users: len(res.Users), Items: len(res.Items), Ratings: res.Ratings, MinTime: res.MinTime, MaxTime: res.MaxTime}
				io.Logf("%d bins of %.1f days: %d users, %d items", res.T, float64(res.MaxTime-res.MinTime)/86400/float64(res.T), info.Users, info.Items)
				return writeJSON(filepath.Join(dir, "info.json"), info)
			}},
		Inputs:  map[string]pipeline.Ref{"binary": pipeline.Out("binarize", "binary.parquet")},
		Outputs: []string{"binned"},
	})
	b.Graph.Add(&pipeline.Node{
		ID: "split",
		Stage: &funcStage{name: "split", version: "1", params: s0.Subset("split", "split_seed"),
			run: func(ctx context.Context, io *pipeline.IO) error {
				dir := io.Output("split")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				f := s0.Floats("split")
				st, err := movielens.Split(ctx, filepath.Join(io.Input("binned"), "binned.parquet"),
					filepath.Join(dir, "train.parquet"), filepath.Join(dir, "valid.parquet"), filepath.Join(dir, "test.parquet"),
					[3]float64{f[0], f[1], f[2]}, uint64(s0.Int("split_seed")))
				if err == nil {
					io.Logf("split: %d train, %d validation, %d test", st.Train, st.Valid, st.Test)
				}
				return err
			}},
		Inputs:  map[string]pipeline.Ref{"binned": pipeline.Out("bin", "binned")},
		Outputs: []string{"split"},
	})
	reportIn := map[string]pipeline.Ref{}
	for _, tr := range trials {
		s := tr.Settings
		tid, eid := "train/"+tr.Slug(), "evaluate/"+tr.Slug()
		b.Graph.Add(&pipeline.Node{
			ID: tid,
			Stage: &funcStage{name: "train-logistic-mf", version: "1", params: s.Params(mlTrainKeys...),
				run: func(ctx context.Context, io *pipeline.IO) error {
					return TrainMovieLens(ctx, s, io.Input("binned"), io.Input("split"), io.Workers(), io.Output("model"), progressFunc(io))
				}},
			Inputs:  map[string]pipeline.Ref{"binned": pipeline.Out("bin", "binned"), "split": pipeline.Out("split", "split")},
			Outputs: []string{"model"},
		})
		in := map[string]pipeline.Ref{"model": pipeline.Out(tid, "model"), "split": pipeline.Out("split", "split"), "binned": pipeline.Out("bin", "binned")}
		if planted {
			in["vectors"] = pipeline.Out("generate", "vectors.bin")
		}
		evalParams := map[string]any{"planted": planted}
		if planted {
			for k, v := range s.Subset(mlPlantedKeys...) {
				evalParams[k] = v
			}
		}
		b.Graph.Add(&pipeline.Node{
			ID: eid,
			Stage: &funcStage{name: "evaluate-logistic-mf", version: "1", params: evalParams,
				run: func(ctx context.Context, io *pipeline.IO) error {
					var pc *movielens.PlantedConfig
					if planted {
						c := plantedConfig(s)
						pc = &c
					}
					return EvaluateMovieLens(ctx, io, pc, io.Output("result"))
				}},
			Inputs:  in,
			Outputs: []string{"result"},
		})
		b.Trials = append(b.Trials, TrialNodes{Trial: tr, Result: eid, Nodes: []string{tid, eid}})
		reportIn[tr.ID] = pipeline.Out(eid, "result")
	}
	addReport(b, e, trials, "report-movielens", reportIn, ReportMovieLens)
	return nil
}

// sharedSettings checks that the data preparation settings keys are the same
// in every trial (the data stages are shared by the sweep) and returns the
// settings of the first trial (the experiment's when there is none).
func sharedSettings(e *Experiment, trials []Trial, keys []string) (Settings, error) {
	for _, k := range keys {
		for _, tr := range trials {
			if FormatValue(tr.Settings[k]) != FormatValue(trials[0].Settings[k]) {
				return nil, fmt.Errorf("experiment %s: setting %s varies across trials; data preparation settings must be the same for the whole sweep", e.Name, k)
			}
		}
	}
	if len(trials) == 0 {
		return e.Settings, nil
	}
	return trials[0].Settings, nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// loadRatings reads a binned Parquet table into the models' layout.
func loadRatings(ctx context.Context, path string) (*models.Ratings, error) {
	c, err := movielens.LoadColumns(ctx, path)
	if err != nil {
		return nil, err
	}
	return &models.Ratings{T: c.Bin, User: c.User, Item: c.Item, X: c.X}, nil
}

// TrainMovieLens trains Model 2 (sparse dynamic logistic MF) on the training
// split and writes the parameters (params.f64, little-endian float64),
// series.arrow and summary.json into dir.
func TrainMovieLens(ctx context.Context, s Settings, binnedDir, splitDir string, workers int, dir string, progress func(step, total int)) error {
	var info binInfo
	if err := readJSON(filepath.Join(binnedDir, "info.json"), &info); err != nil {
		return err
	}
	train, err := loadRatings(ctx, filepath.Join(splitDir, "train.parquet"))
	if err != nil {
		return err
	}
	valid, err := loadRatings(ctx, filepath.Join(splitDir, "valid.parquet"))
	if err != nil {
		return err
	}
	opt, err := BuildOptimizer(s, workers)
	if err != nil {
		return err
	}
	defer opt.Close()
	m := &models.LogisticMF{
		Train: train, Users: info.Users, Items: info.Items, D: s.Int("dim"), T: info.T,
		Lambda: s.Float("lambda"), Gamma: s.Float("gamma"), InitStd: s.Float("init_scale"),
		MinibatchSize: s.Int("minibatch"), Seed: uint64(s.Int("seed")),
	}
	if opt.Pool != nil {
		m.Pool = opt.Pool
	}
	if err := m.Validate(); err != nil {
		return err
	}
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(uint64(s.Int("seed")), 0x696e6974)))
	series := &Series{}
	sum := Summary{}
	validEvery := s.Int("valid_every")
	steps := s.Int("steps")
	loop := &Loop{
		Problem: models.ProblemOf(m), Opt: opt, Steps: steps,
		LogEvery: s.Int("log_every"), GapEvery: s.Int("gauge_gap_every"),
		Series: series, Summary: sum,
		Extra: func(it *optim.Iter, x []float64) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if it.Step%validEvery == 0 || it.Step == steps-1 {
				met, err := m.Evaluate(x, valid)
				if err != nil {
					return err
				}
				series.Add("valid_ll", it.Step+1, met.LogLik)
			}
			return nil
		},
		Progress: progress,
	}
	if err := loop.Run(x); err != nil {
		return err
	}
	sum["psi_settle_step"] = settleStep(series, "psi", 0.01)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeFloats(filepath.Join(dir, "params.f64"), x); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "model.json"), map[string]any{"t": info.T, "users": info.Users, "items": info.Items, "d": s.Int("dim")}); err != nil {
		return err
	}
	if err := WriteSeries(filepath.Join(dir, "series.arrow"), series); err != nil {
		return err
	}
	return WriteSummary(filepath.Join(dir, "summary.json"), sum)
}

// EvaluateMovieLens computes held-out metrics of a trained model: mean
// log-likelihood per rating on validation and test, test AUC and accuracy,
// and the base-rate predictor's test log-likelihood; on the planted data set
// also the distance of the learned vectors to the planted ones after the
// best global rotation. It writes summary.json (train's summary plus these)
// and series.arrow (train's) into dir.
func EvaluateMovieLens(ctx context.Context, io *pipeline.IO, planted *movielens.PlantedConfig, dir string) error {
	mdir, sdir := io.Input("model"), io.Input("split")
	var meta struct{ T, Users, Items, D int }
	if err := readJSON(filepath.Join(mdir, "model.json"), &meta); err != nil {
		return err
	}
	b := optim.Blocks{T: meta.T, N: meta.Users + meta.Items, D: meta.D}
	x, err := readFloats(filepath.Join(mdir, "params.f64"), b.Len())
	if err != nil {
		return err
	}
	sum, err := ReadSummary(filepath.Join(mdir, "summary.json"))
	if err != nil {
		return err
	}
	parts := map[string]*models.Ratings{}
	for _, p := range []string{"train", "valid", "test"} {
		r, err := loadRatings(ctx, filepath.Join(sdir, p+".parquet"))
		if err != nil {
			return err
		}
		parts[p] = r
	}
	for _, p := range []string{"valid", "test"} {
		if parts[p].Len() == 0 {
			continue
		}
		met, err := models.EvaluateRatings(x, b, meta.Users, parts[p])
		if err != nil {
			return err
		}
		sum[p+"_ll"] = met.LogLik
		if p == "test" {
			sum["test_auc"] = met.AUC
			sum["test_acc"] = met.Accuracy
			base := models.BaseRate(parts["train"], parts[p])
			sum["baseline_test_ll"] = base.LogLik
			sum["baseline_test_acc"] = base.Accuracy
		}
	}
	if planted != nil {
		truth, err := plantedTruth(io.Input("vectors"), filepath.Join(io.Input("binned")), *planted, meta.T, meta.Users, meta.Items, meta.D)
		if err != nil {
			return err
		}
		if truth != nil {
			pd := models.PlantedDistance(x, truth, b)
			sum["planted_rel_err"] = pd.RelErr
			sum["planted_mean_cos"] = pd.MeanCos
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ser, err := os.ReadFile(filepath.Join(mdir, "series.arrow"))
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, "series.arrow"), ser); err != nil {
		return err
	}
	return WriteSummary(filepath.Join(dir, "summary.json"), sum)
}

// plantedTruth returns the planted vectors in the learned layout, or nil
// when the planted and learned dimensions or bins differ (no comparison).
func plantedTruth(vectorsPath, binnedDir string, cfg movielens.PlantedConfig, T, users, items, d int) ([]float64, error) {
	if cfg.D != d || cfg.Bins != T {
		return nil, nil
	}
	uids, err := movielens.ReadIDMap(context.Background(), filepath.Join(binnedDir, "binned.users.parquet"))
	if err != nil {
		return nil, err
	}
	iids, err := movielens.ReadIDMap(context.Background(), filepath.Join(binnedDir, "binned.items.parquet"))
	if err != nil {
		return nil, err
	}
	f, err := os.Open(vectorsPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	u := make([]float64, cfg.Users*d)
	v := make([]float64, cfg.Items*d)
	n := users + items
	out := make([]float64, T*n*d)
	for t := 0; t < T; t++ {
		if err := movielens.ReadPlanted(f, cfg, t, u, v); err != nil {
			return nil, err
		}
		blk := out[t*n*d : (t+1)*n*d]
		movielens.AlignRows(blk[:users*d], u, uids, d)
		movielens.AlignRows(blk[users*d:], v, iids, d)
	}
	return out, nil
}

func writeFloats(path string, x []float64) error {
	return writeAtomic(path, func(f *os.File) error {
		buf := make([]byte, 1<<20)
		for lo := 0; lo < len(x); lo += len(buf) / 8 {
			hi := min(lo+len(buf)/8, len(x))
			for i, v := range x[lo:hi] {
				binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
			}
			if _, err := f.Write(buf[:8*(hi-lo)]); err != nil {
				return err
			}
		}
		return nil
	})
}

func readFloats(path string, n int) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x := make([]float64, n)
	buf := make([]byte, 1<<20)
	for lo := 0; lo < n; lo += len(buf) / 8 {
		hi := min(lo+len(buf)/8, n)
		if _, err := io.ReadFull(f, buf[:8*(hi-lo)]); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for i := range x[lo:hi] {
			x[lo+i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
		}
	}
	return x, nil
}
