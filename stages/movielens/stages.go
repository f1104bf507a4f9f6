package movielens

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"goldstone/formats/ratings"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/internal/checkpoint"
	"goldstone/models"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/report"
	"goldstone/runs"
	"goldstone/train"
	"goldstone/trialio"
)

func init() {
	// The ratings models (see Likelihood): one line per likelihood.
	settings.RegisterChoice("likelihood", "logistic", models.LogisticSettings{})
	settings.RegisterChoice("likelihood", "gaussian", models.GaussianSettings{})
	settings.RegisterChoice("likelihood", "poisson", models.PoissonSettings{})
	experiment.Register(Pipeline{})
}

// Pipeline is the movielens pipeline (the paper's Section 5.2): ingest,
// binarize, bin and split a ratings file (a MovieLens release or the
// planted generator's output), then train and evaluate a sparse dynamic
// ratings model per trial (the likelihood choice: the paper's logistic MF
// of binarized ratings, or Gaussian MF of explicit ratings, which skips
// binarize), and draw a report.
type Pipeline struct{}

// Name implements experiment.Pipeline.
func (Pipeline) Name() string { return "movielens" }

// Headline: held-out fit (log-likelihood, AUC; RMSE for explicit ratings
// and the Poisson deviance for counts, for the models that report them), then the steps until the gauge gap relaxed
// (experiment.Headliner). A run shows those its trials have.
func (Pipeline) Headline() []runs.Headline {
	return []runs.Headline{
		{Metric: "test_ll"},
		{Metric: "valid_ll"},
		{Metric: "test_auc", Range: runs.UnitInterval},
		{Metric: "test_rmse", Lower: true, Range: runs.NonNegative},
		{Metric: "test_deviance", Lower: true, Range: runs.NonNegative},
		{Metric: "steps_to_gap_1pct", Lower: true, Range: runs.NonNegative},
	}
}

// Settings implements experiment.Pipeline.
func (Pipeline) Settings() any { return &Settings{} }

// Settings are every setting the movielens pipeline reads.
type Settings struct {
	Data   DataSettings
	Train  TrainSettings
	Export ExportSettings
}

// DataSettings are the settings of the data stages, shared by every trial.
type DataSettings struct {
	Dataset  string `set:"dataset" default:"ml-latest-small" doc:"MovieLens release name under the data directory, \"planted\", or a path to a ratings table (text, gzip, zstd or Parquet; relative: to the working directory, else the data directory)"`
	Fetch    bool   `set:"fetch" default:"false" doc:"download the release from GroupLens when it is missing"`
	Table    ratings.TableSettings
	Limits   IngestLimits
	Binarize BinarizeSettings
	Bin      BinSettings
	Split    SplitSettings
	Planted  PlantedSettings
}

// IngestLimits bound what the ingest reads of a ratings table (a decompression bomb
// stops with an error naming the file and the setting to raise). They are in no cache
// key: they decide whether the ingest may finish, never what it writes.
type IngestLimits struct {
	Input experiment.InputLimits
	Rows  int `set:"max_input_rows" default:"2147483648" check:">0" doc:"the most ratings (rows) the ingest reads of a ratings table (memory holds 8 bytes per rating for the duplicate check); reading stops with an error naming the file beyond it"`
}

// PruneKeys leaves the limits out of every key.
func (IngestLimits) PruneKeys(m map[string]any) { delete(m, "max_input_rows") }

// BinSettings are the bin stage's settings.
type BinSettings struct {
	Bins int `set:"bins" default:"100" check:">0" doc:"number of time bins T"`
}

// SplitSettings are the split stage's settings.
type SplitSettings struct {
	Fractions []float64 `set:"split" default:"[0.5, 0.2, 0.3]" check:"fractions3" doc:"train, validation, test fractions"`
	Seed      int       `set:"split_seed" default:"1" check:">=0" doc:"seed of the random train/validation/test split (MovieLens: ratings; dwe: whole time steps)"`
}

// PlantedSettings configure the planted data set's generator.
type PlantedSettings struct {
	Users   int `set:"planted_users" default:"138000" check:">0" doc:"planted data set: users"`
	Items   int `set:"planted_items" default:"27000" check:">0" doc:"planted data set: items"`
	Ratings int `set:"planted_ratings" default:"20000000" check:">0" doc:"planted data set: ratings"`
	Dim     int `set:"planted_dim" default:"10" check:">0" doc:"planted data set: dimension of the planted vectors"`
	Seed    int `set:"planted_seed" default:"1" check:">=0" doc:"planted data set: seed"`
	Bins    int `set:"bins" default:"100" check:">0" doc:"number of time bins T"`
	// ActiveBins: ml-latest-small's mean active bins per user (of 100), ActiveBinsSmall.
	Drift      float64 `set:"planted_drift" default:"0.1" check:"[0,1)" doc:"planted data set: per-bin innovation of the planted vectors (AR(1), keeps their scale); PriorDrift(lambda, gamma) is the model's own prior (0.684 for lambda 10, gamma 1)"`
	Scale      float64 `set:"planted_scale" default:"0" check:">=0" doc:"planted data set: standard deviation of the vectors' entries, the signal strength (0: (4/planted_dim)^(1/4)); ScaleForGain gives the scale of a target held-out gain"`
	ActiveBins float64 `set:"planted_active_bins" default:"2.55" check:">=0" doc:"planted data set: mean number of bins a user is active in (1 + geometric; 0: every user spread over all bins); 2.55 is measured on ml-latest-small"`
	Growth     float64 `json:"-" set:"planted_growth" default:"10" check:">0" doc:"planted data set: ratio of the last bin's rating volume to the first's, growing exponentially in between (1: every bin as many ratings; the paper-density set, issue 27)"`
}

// PruneKeys leaves planted_growth out of the generate stage's key at its
// default, so the data sets made before the setting existed keep their keys.
func (PlantedSettings) PruneKeys(m map[string]any) {
	if g, ok := m["planted_growth"].(float64); ok && g == DefaultGrowth {
		delete(m, "planted_growth")
	}
}

// Config is the generator configuration of the planted data set.
func (s PlantedSettings) Config() PlantedConfig {
	return PlantedConfig{
		Users: s.Users, Items: s.Items, Ratings: int64(s.Ratings),
		Bins: s.Bins, D: s.Dim, Seed: uint64(s.Seed),
		Start: time.Date(1995, 1, 9, 0, 0, 0, 0, time.UTC), End: time.Date(2015, 3, 31, 0, 0, 0, 0, time.UTC),
		Drift: s.Drift, Growth: s.Growth, ActiveBinsMean: s.ActiveBins, Scale: s.Scale,
	}
}

// TrainSettings are the train stage's settings.
type TrainSettings struct {
	Loop       train.LoopSettings
	Prior      train.MFPrior
	Model      ModelSettings
	Minibatch  int  `set:"minibatch" default:"0" check:">=0" doc:"ratings per minibatch; 0 uses full batches"`
	ValidEvery int  `set:"valid_every" default:"50" check:">0" doc:"record the validation metrics (log-likelihood; gaussian: also RMSE and MAE) every this many steps"`
	RoundLoss  bool `set:"round_loss" default:"false" doc:"record the full-batch local loss before and after every gauge round (round_loss_pred, round_loss_real; two loss evaluations and one more parameter-sized buffer per round)"`
	EarlyStop  train.EarlyStopSettings
	Keep       KeepSettings
}

// binInfo is what the bin stage tells later stages.
type binInfo struct {
	T       int    `json:"t"`
	Users   int    `json:"users"`
	Items   int    `json:"items"`
	Ratings int64  `json:"ratings"`
	MinTime int64  `json:"min_time"`
	MaxTime int64  `json:"max_time"`
	Regime  Regime `json:"regime"` // the density of the binned data (issue 27)
}

// Build implements experiment.Pipeline.
func (Pipeline) Build(ctx context.Context, b *experiment.Built, e *experiment.Experiment, trials []experiment.Trial, env experiment.Env) error {
	// Data preparation is shared by every trial; the settings it reads must
	// not vary across the sweep.
	data, err := experiment.Shared[DataSettings](e, trials)
	if err != nil {
		return err
	}
	dataset := data.Dataset
	planted := dataset == "planted"
	var ratingsRef pipeline.Ref
	switch {
	case planted:
		if data.Table.Custom() || data.Table.Layout != ratings.DefaultTableSettings.Layout {
			return errors.New("dataset = \"planted\" generates a ratings.csv: leave layout, user_column, item_column, rating_column, time_column, delimiter, header and time_format at their defaults")
		}
		b.Add(&pipeline.Node{ID: "generate", Stage: &GenerateStage{Settings: data.Planted, Budget: env.Budget}, Outputs: []string{"ratings.csv", "vectors.npy"}})
		ratingsRef = pipeline.Out("generate", "ratings.csv")
	default:
		if ratingsRef, err = tableRef(ctx, b, data, trials, env); err != nil {
			return err
		}
	}
	b.Add(&pipeline.Node{ID: "ingest", Stage: &IngestStage{Settings: data.Table, Limits: data.Limits},
		Inputs: map[string]pipeline.Ref{"ratings": ratingsRef}, Outputs: []string{"ratings.parquet", "ratings.ids.parquet", "ingest.json"}})
	reportIn := map[string]pipeline.Ref{}
	if planted { // the generated activity next to the reference release's
		cal := &Calibration{Planted: data.Planted, Lambda: math.NaN(), Gamma: math.NaN()}
		if prior, err := experiment.Shared[train.MFPrior](e, trials); err == nil {
			cal.Lambda, cal.Gamma = prior.Lambda, prior.Gamma
		}
		act := &ActivityStage{Bins: data.Bin.Bins, Reference: ReferenceRelease, Calibration: cal}
		actIn := map[string]pipeline.Ref{"ratings": pipeline.Out("ingest", "ratings.parquet")}
		if ref, err := Locate(env.DataDir, ReferenceRelease); err == nil {
			actIn["reference"] = pipeline.File(ref)
		}
		b.Add(&pipeline.Node{ID: "activity", Stage: act, Inputs: actIn, Outputs: []string{"activity.md"}})
		reportIn["activity"] = pipeline.Out("activity", "activity.md")
	}
	byLabels := map[models.Labels]labelledData{}
	dataOf := func(l models.Labels) labelledData {
		d, ok := byLabels[l]
		if !ok {
			d = addLabelledData(b, data, l)
			byLabels[l] = d
		}
		return d
	}
	refs := map[string]bool{} // the reference nodes added, by id
	for _, tr := range trials {
		tid, eid := "train/"+tr.Slug(), "evaluate/"+tr.Slug()
		ts := settings.MustDecode[TrainSettings](tr.Settings)
		if err := checkKeep(tr, ts); err != nil {
			return err
		}
		labels := ts.Model.Labels()
		dn := dataOf(labels)
		in := map[string]pipeline.Ref{"split": dn.split, "binned": dn.binned}
		if dn.binarize != (pipeline.Ref{}) {
			in["binarize"] = dn.binarize
		}
		if rs, ok := referenceSettings(ts); ok {
			in["references"] = pipeline.Out(addReferences(b, refs, rs, dn, env.Budget), ReferencesFile)
		}
		ev := &EvaluateStage{Model: ts.Model, Prior: ts.Prior}
		if planted {
			in["vectors"] = pipeline.Out("generate", "vectors.npy")
			ev.Planted = &data.Planted
		}
		nodes := []string{tid}
		if ts.Keep.Keep == KeepFinal {
			b.Add(&pipeline.Node{ID: tid, Stage: &TrainStage{Settings: ts, Budget: env.Budget},
				Inputs:  map[string]pipeline.Ref{"binned": dn.binned, "split": dn.split},
				Outputs: []string{"model"}})
			in["model"] = pipeline.Out(tid, "model")
			b.Add(&pipeline.Node{ID: eid, Stage: ev, Inputs: in, Outputs: []string{"result"}})
			nodes = append(nodes, eid)
		} else { // one node: train, evaluate, keep what the policy says (keep.go)
			eid = tid
			outs := []string{"result"}
			if ts.Keep.Keep == KeepBest {
				outs = append(outs, "model")
			}
			b.Add(&pipeline.Node{ID: tid, Stage: &TrialStage{Train: ts, Eval: *ev, Budget: env.Budget}, Inputs: in, Outputs: outs})
		}
		b.AddTrial(tr, eid, append(nodes, addEmbeddings(b, tr, tid, dn)...)...)
		b.SetDisk(diskEstimate(ts, data))
		reportIn[tr.ID] = pipeline.Out(eid, "result")
	}
	report.Add(b, e, trials, reportIn, report.Def{Stage: "report-movielens", Version: ReportVersion, Draw: Report})
	return nil
}

// tableRef locates the ratings table of data (fetching a missing release when
// data and env allow it), checks its header and first rows and, when env.Scan
// and a trial binarizes, whether its ratings can be binarized
// (checkBinarize), all before anything runs (plan too); it returns the
// table as the ingest's input.
func tableRef(ctx context.Context, b *experiment.Built, data DataSettings, trials []experiment.Trial, env experiment.Env) (pipeline.Ref, error) {
	dataset := data.Dataset
	layout, err := data.Table.Resolve()
	if err != nil {
		return pipeline.Ref{}, fmt.Errorf("dataset %s: %w", dataset, err)
	}
	path, err := Locate(env.DataDir, dataset)
	if err != nil {
		if !data.Fetch || !env.Fetch || !errors.Is(err, ErrNotFound) {
			return pipeline.Ref{}, fmt.Errorf("dataset %s: %w", dataset, err)
		}
		if _, known := Releases[dataset]; !known {
			return pipeline.Ref{}, fmt.Errorf("dataset %s: %w", dataset, err)
		}
		// Fetch now, before the graph runs: the data set is an external input.
		// GOLDSTONE_MOVIELENS_URL points at a mirror (or a test server) with
		// the official layout: <base>/<name>.zip and <base>/<name>.zip.md5.
		path, err = Fetch(ctx, os.Getenv("GOLDSTONE_MOVIELENS_URL"), dataset, env.DataDir, nil)
		if err != nil {
			return pipeline.Ref{}, fmt.Errorf("dataset %s: fetch: %w", dataset, err)
		}
	}
	if err := ratings.CheckTable(ctx, path, layout); err != nil {
		return pipeline.Ref{}, fmt.Errorf("dataset %s: %w", dataset, err)
	}
	if env.Scan && needsBinary(trials) {
		if err := checkBinarize(ctx, b, dataset, path, layout, data); err != nil {
			return pipeline.Ref{}, err
		}
	}
	return pipeline.File(path), nil
}

// addReferences adds the node of the static references rs on the data dn
// unless refs (the nodes added, by id) has it, and returns its id.
func addReferences(b *experiment.Built, refs map[string]bool, rs ReferenceSettings, dn labelledData, budget *optim.Budget) string {
	rid := "references/" + rs.key()
	if !refs[rid] {
		refs[rid] = true
		b.Add(&pipeline.Node{ID: rid, Stage: &ReferenceStage{Settings: rs, Budget: budget},
			Inputs:  map[string]pipeline.Ref{"binned": dn.binned, "split": dn.split},
			Outputs: []string{ReferencesFile}})
	}
	return rid
}

// addEmbeddings adds a trial's export-embeddings node when its settings ask
// for one, and returns the ids of the nodes added.
func addEmbeddings(b *experiment.Built, tr experiment.Trial, tid string, dn labelledData) []string {
	if !settings.MustDecode[ExportSettings](tr.Settings).Embeddings {
		return nil
	}
	xid := "embeddings/" + tr.Slug()
	b.Add(&pipeline.Node{ID: xid, Stage: &EmbeddingsStage{},
		Inputs: map[string]pipeline.Ref{"model": pipeline.Out(tid, "model"), "binned": dn.binned,
			"ids": pipeline.Out("ingest", "ratings.ids.parquet")},
		Outputs: []string{EmbeddingsFile}})
	return []string{xid}
}

// labelledData are the binned and split outputs of one kind of labels, and
// for binarized ratings the binarization's counts (binarize.json).
type labelledData struct{ binned, split, binarize pipeline.Ref }

// needsBinary reports whether a trial trains on binarized ratings.
func needsBinary(trials []experiment.Trial) bool {
	for _, tr := range trials {
		if settings.MustDecode[TrainSettings](tr.Settings).Model.Labels() == models.Binary {
			return true
		}
	}
	return false
}

// checkBinarize reads the ratings of the table path (layout l) whole, before anything
// runs, and refuses ratings that cannot be binarized with data's binarize_ties (see
// Binarizable), naming the data file and the setting to change; binarizing that drops
// more than binarize_warn_share of them as ties is a warning. A table that cannot be
// read whole (a bad line or a limit further on) is left to the ingest, which says
// where.
func checkBinarize(ctx context.Context, b *experiment.Built, dataset, path string, l *ratings.Layout, data DataSettings) error {
	hist, err := ratings.RatingCounts(ctx, path, l, ratings.IngestOptions{MaxBytes: int64(data.Limits.Input.Bytes), MaxRows: int64(data.Limits.Rows)})
	if err != nil {
		return ctx.Err()
	}
	ties := data.Binarize.Ties
	if err := Binarizable(hist, ties); err != nil {
		return fmt.Errorf("dataset %s: %s: %w", dataset, path, err)
	}
	st, err := CountBinarize(hist, ties)
	if err != nil {
		return fmt.Errorf("dataset %s: %s: %w", dataset, path, err)
	}
	if share := float64(st.Dropped) / float64(st.Ratings); share > data.Binarize.WarnShare {
		b.Warn("dataset %s: binarizing drops %d of %d ratings (%.1f%%, more than binarize_warn_share = %v): those equal to the median %v (binarize_ties = %q, as the paper does); binarize_ties = \"positive\" or \"negative\" keeps them",
			dataset, st.Dropped, st.Ratings, 100*share, data.Binarize.WarnShare, st.Median, TiesDrop)
	}
	return nil
}

// addLabelledData adds the nodes that prepare the data a likelihood with
// labels l trains on: binarize, bin and split for binarized ratings; for
// explicit ratings bin-explicit and split-explicit, straight from the
// ingested table.
func addLabelledData(b *experiment.Built, data DataSettings, l models.Labels) labelledData {
	suffix, labelled := "", pipeline.Out("ingest", "ratings.parquet")
	var counts pipeline.Ref
	if l == models.Binary {
		b.Add(&pipeline.Node{ID: "binarize", Stage: &BinarizeStage{Settings: data.Binarize, Source: data.Dataset},
			Inputs:  map[string]pipeline.Ref{"ratings": labelled},
			Outputs: []string{"binary.parquet", "binarize.json"}})
		labelled = pipeline.Out("binarize", "binary.parquet")
		counts = pipeline.Out("binarize", "binarize.json")
	} else {
		suffix = "-" + l.String()
	}
	bid, sid := "bin"+suffix, "split"+suffix
	b.Add(&pipeline.Node{ID: bid, Stage: &BinStage{Settings: data.Bin},
		Inputs: map[string]pipeline.Ref{"binary": labelled}, Outputs: []string{"binned"}})
	b.Add(&pipeline.Node{ID: sid, Stage: &SplitStage{Settings: data.Split},
		Inputs: map[string]pipeline.Ref{"binned": pipeline.Out(bid, "binned")}, Outputs: []string{"split"}})
	return labelledData{binned: pipeline.Out(bid, "binned"), split: pipeline.Out(sid, "split"), binarize: counts}
}

// GenerateStage writes the planted data set (ratings.csv) and its planted
// vectors (vectors.npy, shape (bins, users+items, d); see GenerateFile), on
// a pool of the sweep's core budget (nil outside a sweep).
type GenerateStage struct {
	Settings PlantedSettings
	Budget   *optim.Budget
}

func (*GenerateStage) Name() string    { return "generate-planted" }
func (*GenerateStage) Version() string { return GenerateVersion }
func (s *GenerateStage) Params() any   { return settings.Keys(s.Settings) }
func (s *GenerateStage) Run(ctx context.Context, io *pipeline.IO) error {
	cfg := s.Settings.Config()
	cfg.Pool = train.NewPool(s.Budget, io.Workers())
	defer cfg.Pool.Close()
	st, err := GenerateFile(ctx, io.Output("ratings.csv"), io.Output("vectors.npy"), cfg)
	if err == nil {
		io.Logf("generated %d ratings (%d at the median)", st.Ratings, st.Mid)
	}
	return err
}

// IngestStage parses a ratings table into ratings.parquet, its id dictionary
// ratings.ids.parquet (IDNamesPath) and ingest.json (Stats); Limits (no cache
// parameter) bound what it reads.
type IngestStage struct {
	Settings ratings.TableSettings
	Limits   IngestLimits
}

func (*IngestStage) Name() string    { return "ingest-movielens" }
func (*IngestStage) Version() string { return IngestVersion }
func (s *IngestStage) Params() any   { return settings.Keys(s.Settings) }
func (s *IngestStage) Run(ctx context.Context, io *pipeline.IO) error {
	layout, err := s.Settings.Resolve()
	if err != nil {
		return err
	}
	dst := io.Output("ratings.parquet")
	if ratings.IDNamesPath(dst) != io.Output("ratings.ids.parquet") {
		return fmt.Errorf("ingest: outputs %s and %s are not side by side", dst, io.Output("ratings.ids.parquet"))
	}
	st, err := ratings.Ingest(ctx, io.Input("ratings"), dst, ratings.IngestOptions{Workers: io.Workers(), Layout: layout,
		MaxBytes: int64(s.Limits.Input.Bytes), MaxRows: int64(s.Limits.Rows)})
	if err != nil {
		return err
	}
	first, last := st.FirstLast()
	io.Logf("ingested %d ratings (%s layout; %d users, %d items; %s to %s; %.1f MB)", st.Ratings, st.Layout, st.Users, st.Items, first, last, float64(st.Bytes)/1e6)
	if st.TextUsers+st.TextItems > 0 {
		io.Logf("text ids: %d users, %d items (dictionary in ratings.ids.parquet)", st.TextUsers, st.TextItems)
	}
	if st.Duplicates > 0 {
		io.Logf("dropped %d duplicate rows (same user, item and time as a later row; the last is kept)", st.Duplicates)
	}
	if st.Before1970+st.After2100 > 0 {
		io.Logf("odd times: %d before 1970, %d after 2100 (check time_format: milliseconds read as seconds? missing values written as 0?)", st.Before1970, st.After2100)
	}
	return trialio.WriteJSON(io.Output("ingest.json"), ingestSummary(st))
}

// ingestSummary is ingest.json: Stats with the time span also as RFC 3339 text.
func ingestSummary(st ratings.Stats) any {
	first, last := st.FirstLast()
	return struct {
		ratings.Stats
		FirstTime string `json:"first_time"`
		LastTime  string `json:"last_time"`
	}{st, first, last}
}

// BinarizeStage labels the ratings above the median +1 and those below -1;
// those equal to it are dropped or labelled as Settings.Ties says. Source
// (the data set, no cache parameter) names the data in errors.
type BinarizeStage struct {
	Settings BinarizeSettings
	Source   string
}

func (*BinarizeStage) Name() string    { return "binarize" }
func (*BinarizeStage) Version() string { return BinarizeVersion }
func (s *BinarizeStage) Params() any   { return settings.Keys(s.Settings) }
func (s *BinarizeStage) Run(ctx context.Context, io *pipeline.IO) error {
	st, err := BinarizeWith(ctx, io.Input("ratings"), io.Output("binary.parquet"), BinarizeOptions{Ties: s.Settings.Ties, Name: "dataset " + s.Source})
	if err != nil {
		return err
	}
	if st.Tied > 0 {
		io.Logf("median %v: kept %d positive, %d negative; the %d equal to the median count as %s", st.Median, st.Positive, st.Negative, st.Tied, st.Ties)
	} else {
		io.Logf("median %v: kept %d positive, %d negative, dropped %d equal to the median", st.Median, st.Positive, st.Negative, st.Dropped)
	}
	return trialio.WriteJSON(io.Output("binarize.json"), st)
}

// BinStage bins the ratings' times into T bins and renumbers users and items.
type BinStage struct{ Settings BinSettings }

func (*BinStage) Name() string    { return "bin" }
func (*BinStage) Version() string { return BinVersion }
func (s *BinStage) Params() any   { return settings.Keys(s.Settings) }
func (s *BinStage) Run(ctx context.Context, io *pipeline.IO) error {
	dir := io.Output("binned")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	res, err := Bin(ctx, io.Input("binary"), filepath.Join(dir, "binned.parquet"), s.Settings.Bins)
	if err != nil {
		return err
	}
	info := binInfo{T: res.T, Users: len(res.Users), Items: len(res.Items), Ratings: res.Ratings, MinTime: res.MinTime, MaxTime: res.MaxTime, Regime: res.Regime}
	io.Logf("%d bins of %.1f days: %d users, %d items", res.T, float64(res.MaxTime-res.MinTime)/86400/float64(res.T), info.Users, info.Items)
	return trialio.WriteJSON(filepath.Join(dir, "info.json"), info)
}

// SplitStage splits the binned ratings into train, validation and test.
type SplitStage struct{ Settings SplitSettings }

func (*SplitStage) Name() string    { return "split" }
func (*SplitStage) Version() string { return SplitVersion }
func (s *SplitStage) Params() any   { return settings.Keys(s.Settings) }
func (s *SplitStage) Run(ctx context.Context, io *pipeline.IO) error {
	dir := io.Output("split")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f := s.Settings.Fractions
	st, err := Split(ctx, filepath.Join(io.Input("binned"), "binned.parquet"),
		filepath.Join(dir, "train.parquet"), filepath.Join(dir, "valid.parquet"), filepath.Join(dir, "test.parquet"),
		[3]float64{f[0], f[1], f[2]}, uint64(s.Settings.Seed))
	if err == nil {
		io.Logf("split: %d train, %d validation, %d test", st.Train, st.Valid, st.Test)
	}
	return err
}

// TrainStage trains one trial's model (output "model") on a pool of the
// sweep's core budget (nil outside a sweep).
type TrainStage struct {
	Settings TrainSettings
	Budget   *optim.Budget
}

func (*TrainStage) Name() string    { return "train-movielens" }
func (*TrainStage) Version() string { return TrainVersion }
func (s *TrainStage) Params() any   { return settings.Keys(s.Settings) }

// ResumeParams are the settings without the steps (pipeline.Resumable): the
// first s steps of a trial do not depend on its budget, so a longer run of
// it continues a shorter one's checkpoint (pruning).
func (s *TrainStage) ResumeParams() any { return train.ResumeKeys(s.Settings) }
func (s *TrainStage) Run(ctx context.Context, io *pipeline.IO) error {
	pool := train.NewPool(s.Budget, io.Workers())
	defer pool.Close()
	return Train(ctx, s.Settings, io.Input("binned"), io.Input("split"), pool, io.Output("model"), train.FromIO(io))
}

// EvaluateStage computes a trained model's held-out metrics (output
// "result"); on the planted data set also the distance to the planted vectors.
type EvaluateStage struct {
	Model   ModelSettings
	Prior   train.MFPrior    // the trial's prior (the bias-only reference's ridge)
	Planted *PlantedSettings // nil: not the planted data set
}

func (*EvaluateStage) Name() string    { return "evaluate-movielens" }
func (*EvaluateStage) Version() string { return EvaluateVersion }
func (s *EvaluateStage) Params() any {
	p := settings.Keys(s.Model)
	maps.Copy(p, settings.Keys(s.Prior))
	p["planted"] = s.Planted != nil
	if s.Planted != nil {
		maps.Copy(p, settings.Keys(s.Planted))
	}
	return p
}
func (s *EvaluateStage) Run(ctx context.Context, io *pipeline.IO) error {
	var planted *PlantedConfig
	if s.Planted != nil {
		c := s.Planted.Config()
		planted = &c
	}
	return Evaluate(ctx, io, s.Model, s.Prior, planted, io.Output("result"))
}

// batched is a ratings model whose only state between steps is where it
// is in its minibatch sequence (models.LogisticMF, models.GaussianMF): a
// checkpoint keeps it.
type batched interface {
	Batch() uint64
	SetBatch(b uint64)
}

// modelMeta is a trained model's model.json.
type modelMeta struct {
	T      int            `json:"t"`
	Users  int            `json:"users"`
	Items  int            `json:"items"`
	D      int            `json:"d"`
	Labels string         `json:"labels"` // "binary" or "explicit"
	Arrays []models.Array `json:"arrays"` // the parameter arrays after the blocks (ParamsFile)
	// Best is the subdirectory holding the best-validation parameters
	// (early_stopping; the same files as the final ones), "" for none.
	Best string `json:"best,omitempty"`
}

// Train trains the trial's ratings model (the likelihood choice) on the
// training split and writes the parameters (params.npy and one .npy file
// per array of the model, e.g. item_bias.npy; see ParamsFile), model.json,
// series.arrow, series.parquet and summary.json into dir. Every
// valid_every steps it records the model's cheap validation metrics as
// series valid_<name> (valid_ll; gaussian: also valid_rmse, valid_mae).
// With early_stopping it also keeps the best-validation parameters (in
// BestDir; earlystop.go) and may stop before steps.
// A training that diverged is a result too (train.Loop.Diverged): the
// same files, the parameters as the driver left them, the summary saying
// where (evaluate then reports no held-out metric of the model).
// With dtype = "float32" the parameters, gradients and optimizer state
// are float32 (models.SparseMF's float32 mode); the files hold them
// widened to float64 (exactly), so evaluate reads every trial alike.
func Train(ctx context.Context, s TrainSettings, binnedDir, splitDir string, pool *optim.Pool, dir string, sio train.StageIO) error {
	var info binInfo
	if err := trialio.ReadJSON(filepath.Join(binnedDir, "info.json"), &info); err != nil {
		return err
	}
	labels := s.Model.Labels()
	tr, err := loadRatings(ctx, filepath.Join(splitDir, "train.parquet"), labels)
	if err != nil {
		return err
	}
	valid, err := loadRatings(ctx, filepath.Join(splitDir, "valid.parquet"), labels)
	if err != nil {
		return err
	}
	m := s.Model.Likelihood.New(modelSpec(s, info, tr, pool))
	if err := m.Validate(); err != nil {
		return err
	}
	meta := modelMeta{T: info.T, Users: info.Users, Items: info.Items, D: s.Loop.Dim, Labels: labels.String(), Arrays: m.Arrays()}
	if meta.Arrays == nil {
		meta.Arrays = []models.Array{} // [] in model.json
	}
	rng := rand.New(rand.NewPCG(uint64(s.Loop.Seed), 0x696e6974))
	if s.Loop.Float32() {
		m32, ok := m.(float32Model)
		if !ok {
			return fmt.Errorf("dtype = \"float32\": the %T model has no float32 mode", m)
		}
		x := make([]float32, m.NumParams())
		m32.Init32(x, rng)
		return trainOf(ctx, s, m, dtypeOps[float32]{problem: m32.Problem32(), fullLoss: m32.FullLoss32, heldOut: m32.HeldOut32}, x, valid, meta, pool, dir, sio)
	}
	x := make([]float64, m.NumParams())
	m.Init(x, rng)
	return trainOf(ctx, s, m, dtypeOps[float64]{problem: models.ProblemOf(m), fullLoss: m.FullLoss, heldOut: m.HeldOut}, x, valid, meta, pool, dir, sio)
}

// float32Model is a ratings model with a float32 mode (the models.SparseMF
// core's: LogisticMF, GaussianMF, PoissonMF).
type float32Model interface {
	Init32(x []float32, rng *rand.Rand)
	Problem32() optim.ProblemOf[float32]
	FullLoss32(grad, x []float32) float64
	HeldOut32(x []float32, r *models.Ratings, all bool) ([]models.Metric, error)
}

// dtypeOps are what trainOf needs of the model on parameters of type F.
type dtypeOps[F optim.Float] struct {
	problem  optim.ProblemOf[F]
	fullLoss func(grad, x []F) float64
	heldOut  func(x []F, r *models.Ratings, all bool) ([]models.Metric, error) // RatingsModel.HeldOut on []F
}

// trainOf is Train on parameters x of type F, initialised.
func trainOf[F optim.Float](ctx context.Context, s TrainSettings, m models.RatingsModel, ops dtypeOps[F], x []F, valid *models.Ratings,
	meta modelMeta, pool *optim.Pool, dir string, sio train.StageIO) error {
	series := &trialio.Series{}
	sum := trialio.Summary{}
	validEvery := s.ValidEvery
	loop := train.LoopFor(s.Loop, ops.problem, pool)
	loop.Series, loop.Summary = series, sum
	loop.Attach(sio)
	if s.RoundLoss {
		scratch := make([]F, len(x))
		loop.Eval = func(x []F) float64 { return ops.fullLoss(scratch, x) }
	}
	best, err := bestTracker[F](s, m, valid)
	if err != nil {
		return err
	}
	loop.Extra = func(it *optim.Iter, x []F) error {
		if it.Step%validEvery == 0 { // not the last step: budget-independent series (pruning)
			met, err := ops.heldOut(x, valid, false)
			if err != nil {
				return err
			}
			for _, v := range met {
				series.Add("valid_"+v.Name, it.Step+1, v.Value)
			}
			return best.check(it.Step+1, met, x)
		}
		return nil
	}
	// The minibatch sequence goes with the checkpoints. A model that keeps
	// other state between steps, or does not say where it is in its
	// sequence, cannot be resumed bit-identically: no checkpoints then.
	if b, ok := m.(batched); ok {
		loop.State.Save = func(st *checkpoint.State) { st.Ints("lmf.batch", int64(b.Batch())) }
		loop.State.Load = func(st *checkpoint.State) error {
			n, err := st.ReadInts("lmf.batch", 1)
			if err == nil {
				b.SetBatch(uint64(n[0]))
			}
			return err
		}
	} else {
		loop.Checkpoint.Policy.Off = true
	}
	best.hook(&loop.State, len(x))
	if err := loop.Run(ctx, x); err != nil {
		return err
	}
	best.summarize(sum, loop)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var xw []float64 // the float32 mode's widened x
	if err := writeParams(dir, train.Wide(x, &xw), meta); err != nil {
		return err
	}
	if best != nil {
		if meta.Best, err = best.write(dir, x, meta); err != nil {
			return err
		}
	}
	if err := trialio.WriteJSON(filepath.Join(dir, "model.json"), meta); err != nil {
		return err
	}
	if err := trialio.WriteTrialSeries(dir, series); err != nil {
		return err
	}
	return trialio.WriteSummary(filepath.Join(dir, "summary.json"), sum)
}

// biasOnly is a ratings model that fits its own bias-only predictor
// (models.GaussianMF): the parameters with the embeddings at 0 and the
// biases at their MAP on the training ratings.
type biasOnly interface{ BiasOnly() []float64 }

// Evaluate computes the held-out metrics of a trained model, each model its
// own (models.RatingsModel.HeldOut): on validation those recorded along
// training (valid_ll; gaussian: valid_rmse, valid_mae), on test all of them
// (logistic: test_ll, test_auc, test_acc; gaussian: test_ll, test_rmse,
// test_mae), the constant predictor's (baseline_test_*: the base rate; the
// global mean) and, for a model that fits one (biasOnly: gaussian), its
// bias-only predictor's (ref_bias_test_*); on the planted data set also the distance of the
// learned vectors to the planted ones after the best global rotation; the
// binarization's counts and the static references' metrics of its inputs
// (addInputSummaries). It writes summary.json (train's summary plus these)
// and train's series.arrow and series.parquet into dir. The model of a
// trial that diverged (its summary has diverged_step) is not evaluated:
// its own held-out metrics and planted distances are NaN (no value), never
// the numbers of blown-up parameters; the constant, bias-only,
// planted-oracle and static references, which do not read it, are
// reported as usual. A model trained with early stopping (model.json's
// best) is evaluated in its best-validation state under these names, and
// its final state's held-out metrics are added as final_valid_* and
// final_test_* (NaN when it diverged; see earlystop.go).
func Evaluate(ctx context.Context, io Inputs, ms ModelSettings, prior train.MFPrior, planted *PlantedConfig, dir string) error {
	mdir, sdir := io.Input("model"), io.Input("split")
	var meta modelMeta
	if err := trialio.ReadJSON(filepath.Join(mdir, "model.json"), &meta); err != nil {
		return err
	}
	labels := ms.Labels()
	if meta.Labels != labels.String() {
		return fmt.Errorf("evaluate: %s: the model was trained on %s labels, the likelihood reads %s", mdir, meta.Labels, labels)
	}
	parts, err := loadSplit(ctx, sdir, labels)
	if err != nil {
		return err
	}
	m := ms.Likelihood.New(models.RatingsSpec{Train: parts.train, Users: meta.Users, Items: meta.Items, D: meta.D, T: meta.T,
		Lambda: prior.Lambda, Gamma: prior.Gamma})
	if err := m.Validate(); err != nil {
		return err
	}
	if got, want := m.Arrays(), meta.Arrays; !slices.Equal(got, want) {
		return fmt.Errorf("evaluate: %s lists the arrays %v, the model has %v", filepath.Join(mdir, "model.json"), want, got)
	}
	sum, err := trainedSummary(mdir, io.Input("binned"))
	if err != nil {
		return err
	}
	_, diverged := sum.Divergence()
	// The state evaluated under the usual names: the final parameters, or
	// with early stopping the best-validation ones (the final state's
	// metrics then as final_valid_*, final_test_*).
	x, err := readParams(mdir, meta, false)
	if err != nil {
		return err
	}
	if meta.Best != "" {
		if err := heldOutMetrics(m, sum, parts, x, "final_", diverged); err != nil {
			return err
		}
		if x, err = readParams(filepath.Join(mdir, meta.Best), meta, false); err != nil {
			return err
		}
		diverged = math.IsNaN(sum["best_valid_step"]) // no check gave a finite value
	}
	if err := heldOutMetrics(m, sum, parts, x, "", diverged); err != nil {
		return err
	}
	if err := referenceMetrics(m, sum, parts.test); err != nil {
		return err
	}
	if planted != nil {
		if err := plantedMetrics(ctx, sum, io, *planted, meta, parts, x, labels, diverged); err != nil {
			return err
		}
	}
	if err := addInputSummaries(io, sum); err != nil {
		return err
	}
	addEmbeddingSummaries(sum, m.Problem().Blocks, x, diverged)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := trialio.CopyTrialSeries(mdir, dir); err != nil {
		return err
	}
	return trialio.WriteSummary(filepath.Join(dir, "summary.json"), sum)
}

// Inputs is where an evaluation finds its inputs (a *pipeline.IO).
type Inputs interface {
	Input(name string) string
	HasInput(name string) bool
}

// heldOutMetrics adds the model metrics of the parameters x on the
// validation and test ratings as prefix+"valid_*" and prefix+"test_*"
// (NaN when the state diverged: no value, never the numbers of blown-up
// parameters).
func heldOutMetrics(m models.RatingsModel, sum trialio.Summary, parts splitRatings, x []float64, prefix string, diverged bool) error {
	for _, p := range []struct {
		name string
		r    *models.Ratings
	}{{"valid", parts.valid}, {"test", parts.test}} {
		if p.r.Len() == 0 {
			continue
		}
		xe := x
		if diverged {
			xe = make([]float64, len(x)) // for the metrics' names only
		}
		met, err := m.HeldOut(xe, p.r, p.name == "test")
		if err != nil {
			return err
		}
		if diverged {
			for i := range met {
				met[i].Value = math.NaN()
			}
		}
		addMetrics(sum, prefix+p.name, met)
	}
	return nil
}

// referenceMetrics adds the constant predictor's test metrics
// (baseline_test_*) and, for a model that fits one, its bias-only
// predictor's (ref_bias_test_*).
func referenceMetrics(m models.RatingsModel, sum trialio.Summary, test *models.Ratings) error {
	if test.Len() == 0 {
		return nil
	}
	addMetrics(sum, "baseline_test", m.Baseline(test))
	if bo, ok := m.(biasOnly); ok {
		ref, err := m.HeldOut(bo.BiasOnly(), test, true)
		if err != nil {
			return err
		}
		addMetrics(sum, "ref_bias_test", ref)
	}
	return nil
}

// addEmbeddingSummaries adds what says whether the embeddings carry
// anything (issue 27: on small sets the model with biases collapsed to a
// bias model): embedding_rms, the root mean square of the learned vectors'
// entries (every user and item vector of every bin), and, where the static
// user + item bias reference was fitted, gain_over_bias_test_ll = test_ll -
// ref_user_item_test_ll, the held-out nats per rating that the model gains
// over it. A diverged trial gets neither (NaN).
func addEmbeddingSummaries(sum trialio.Summary, b optim.Blocks, x []float64, diverged bool) {
	rms := math.NaN()
	if n := b.Len(); n > 0 && !diverged {
		var s float64
		for _, v := range x[b.Offset : b.Offset+n] {
			s += float64(v * v)
		}
		rms = math.Sqrt(s / float64(n))
	}
	sum["embedding_rms"] = rms
	ll, ok1 := sum["test_ll"]
	ref, ok2 := sum["ref_user_item_test_ll"]
	if ok1 && ok2 {
		sum["gain_over_bias_test_ll"] = ll - ref
	}
}

// addInputSummaries adds to a trial's summary what its other inputs say:
// the binarization's counts (input "binarize", when the trial's ratings were
// binarized: binarize_kept, binarize_ties_dropped, binarize_positive,
// binarize_negative) and the static references' metrics (input
// "references"), those the summary lacks.
func addInputSummaries(io Inputs, sum trialio.Summary) error {
	if io.HasInput("binarize") {
		var st BinarizeStats
		if err := trialio.ReadJSON(io.Input("binarize"), &st); err != nil {
			return err
		}
		sum["binarize_kept"] = float64(st.Kept())
		sum["binarize_ties_dropped"] = float64(st.Dropped)
		sum["binarize_positive"] = float64(st.Positive)
		sum["binarize_negative"] = float64(st.Negative)
	}
	if io.HasInput("references") {
		refs, err := trialio.ReadSummary(io.Input("references"))
		if err != nil {
			return err
		}
		for k, v := range refs {
			if _, ok := sum[k]; !ok { // the trial's own baseline_test_ll is the same
				sum[k] = v
			}
		}
	}
	return nil
}

// plantedMetrics adds to sum the distance of the learned vectors x to the
// planted ones (NaN when the training diverged) and the planted model's own
// test log-likelihood, when the planted and learned dimensions and bins
// agree.
func plantedMetrics(ctx context.Context, sum trialio.Summary, io Inputs, cfg PlantedConfig, meta modelMeta, parts splitRatings, x []float64, labels models.Labels, diverged bool) error {
	b := optim.Blocks{T: meta.T, N: meta.Users + meta.Items, D: meta.D}
	truth, err := plantedTruth(ctx, io.Input("vectors"), filepath.Join(io.Input("binned")), cfg, meta.T, meta.Users, meta.Items, meta.D)
	if err != nil || truth == nil {
		return err
	}
	keep := RatedPairs(parts.train, b, meta.Users, PlantedMinRatings)
	if diverged {
		sum["planted_rel_err"], sum["planted_mean_cos"] = math.NaN(), math.NaN()
		sum["planted_mean_cos_rated"], sum["planted_rel_err_rated"] = math.NaN(), math.NaN()
		sum["planted_rated_pairs"] = float64(countTrue(keep))
	} else {
		pd := models.PlantedDistance(x[:b.Len()], truth, b)
		sum["planted_rel_err"] = pd.RelErr
		sum["planted_mean_cos"] = pd.MeanCos
		rated := models.PlantedDistanceOf(x[:b.Len()], truth, b, keep)
		sum["planted_mean_cos_rated"] = rated.MeanCos
		sum["planted_rel_err_rated"] = rated.RelErr
		sum["planted_rated_pairs"] = float64(rated.Pairs)
	}
	// The planted (logistic) model itself on the binarized test split:
	// the gain a trained model could reach at best (compare
	// baseline_test_ll).
	if labels == models.Binary && parts.test.Len() > 0 {
		oracle, err := models.EvaluateRatings(truth, b, meta.Users, parts.test)
		if err != nil {
			return err
		}
		sum["planted_oracle_test_ll"] = oracle.LogLik
	}
	return nil
}

// countTrue counts the true values of keep.
func countTrue(keep []bool) int {
	n := 0
	for _, k := range keep {
		if k {
			n++
		}
	}
	return n
}

// PlantedMinRatings is the number of training ratings from which an
// (entity, bin) pair counts as rated in planted_mean_cos_rated (issue 10's
// recovery criterion).
const PlantedMinRatings = 10

// RatedPairs marks the vectors c = t*b.N + e (e: user index, or Users + item
// index, as in the model's blocks) that have at least min ratings in r.
func RatedPairs(r *models.Ratings, b optim.Blocks, users, min int) []bool {
	n := make([]int32, b.T*b.N)
	for k := range r.Len() {
		t := int(r.T[k])
		n[t*b.N+int(r.User[k])]++
		n[t*b.N+users+int(r.Item[k])]++
	}
	keep := make([]bool, len(n))
	for c, k := range n {
		keep[c] = int(k) >= min
	}
	return keep
}

// plantedTruth returns the planted vectors in the learned layout, or nil
// when the planted and learned dimensions or bins differ (no comparison).
// It stops with ctx's error when ctx is cancelled while it reads.
func plantedTruth(ctx context.Context, vectorsPath, binnedDir string, cfg PlantedConfig, T, users, items, d int) ([]float64, error) {
	if cfg.D != d || cfg.Bins != T {
		return nil, nil
	}
	uids, err := ratings.ReadIDMap(ctx, filepath.Join(binnedDir, "binned.users.parquet"))
	if err != nil {
		return nil, err
	}
	iids, err := ratings.ReadIDMap(ctx, filepath.Join(binnedDir, "binned.items.parquet"))
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
		if err := ReadPlanted(f, cfg, t, u, v); err != nil {
			return nil, err
		}
		blk := out[t*n*d : (t+1)*n*d]
		AlignRows(blk[:users*d], u, uids, d)
		AlignRows(blk[users*d:], v, iids, d)
	}
	return out, nil
}
