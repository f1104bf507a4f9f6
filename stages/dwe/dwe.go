// Package dwe is the dynamic word embedding pipeline (the paper's Section
// 5.3): ingest a corpus (dated text files, a CSV or Google Books n-grams),
// bin it into time steps, build the vocabulary, count co-occurrences, then
// train and evaluate dynamic skip-gram embeddings per trial, and draw a
// report. It also reads trained embeddings back for word aging.
package dwe

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/formats/corpus"
	"goldstone/internal/atomicfile"
	"goldstone/internal/checkpoint"
	mdwe "goldstone/models/dwe"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/report"
	"goldstone/report/figures"
	"goldstone/runs"
	"goldstone/train"
	"goldstone/trialio"
)

func init() { experiment.Register(Pipeline{}) }

// Pipeline is the dwe pipeline.
type Pipeline struct{}

// Name implements experiment.Pipeline.
func (Pipeline) Name() string { return "dwe" }

// Headline: the paper's Fig. 4 and Table 2 measures, then the steps until
// the gauge gap relaxed (experiment.Headliner).
func (Pipeline) Headline() []runs.Headline {
	return []runs.Headline{
		{Metric: "median_first_last_cos", Range: runs.Cosine},
		{Metric: "test_ll"},
		{Metric: "valid_ll"},
		{Metric: "steps_to_gap_1pct", Lower: true, Range: runs.NonNegative},
	}
}

// Settings implements experiment.Pipeline.
func (Pipeline) Settings() any { return &Settings{} }

// Settings are every setting the dwe pipeline reads.
type Settings struct {
	Data  DataSettings
	Train TrainSettings
	Eval  EvalSettings
}

// DataSettings are the settings of the data stages, shared by every trial.
type DataSettings struct {
	Corpus string `set:"corpus" default:"sotu" doc:"corpus under the data directory or a path"`
	Ingest IngestSettings
	Limits experiment.InputLimits
	Bin    BinSettings
	Vocab  VocabSettings
	Count  CountSettings
}

// IngestSettings are the ingest stage's settings.
type IngestSettings struct {
	Format    string `set:"corpus_format" default:"text" doc:"text (a folder of files whose names start with a year), csv (a header with a time and a text column), jsonl (one JSON object per line with a time and a text field), ngram-v2 or ngram-v3 (Google Books n-grams); csv, jsonl and n-gram files may be gzip or zstd"`
	TimeField string `set:"time_field" default:"time" doc:"csv and jsonl corpora: the column or field of a document's date (a year, or an ISO date or date-time of which the year is kept)"`
	TextField string `set:"text_field" default:"text" doc:"csv and jsonl corpora: the column or field of a document's text"`
}

// Values implements settings.Enumerator: corpus_format takes the names of the
// registered corpus formats (corpus.Formats).
func (IngestSettings) Values(key string) []string {
	if key == "corpus_format" {
		return corpus.Formats.Names()
	}
	return nil
}

// PruneKeys leaves the field names out of the keys of formats that have no fields.
func (s IngestSettings) PruneKeys(m map[string]any) {
	if f, err := corpus.Formats.Lookup(s.Format); err != nil || !f.Fields {
		delete(m, "time_field")
		delete(m, "text_field")
	}
}

// Fields are the csv and jsonl field names.
func (s IngestSettings) Fields() corpus.DocFields {
	return corpus.DocFields{Time: s.TimeField, Text: s.TextField}
}

// Check reads the start of the corpus at path as Ingest would (a wrong header or field
// stops before anything runs).
func (s IngestSettings) Check(ctx context.Context, path string) error {
	f, err := corpus.Formats.Lookup(s.Format)
	if err != nil {
		return err
	}
	return f.Check(ctx, path, corpus.Options{Fields: s.Fields()})
}

// BinSettings are the bin stage's settings: time bins and held-out steps.
type BinSettings struct {
	Bins       int `set:"bins" default:"100" check:">0" doc:"number of time bins T"`
	BinYears   int `set:"bin_years" default:"0" check:">=0" doc:"width of a time bin in years (0: use bins)"`
	Heldout    int `set:"heldout" default:"2" check:">=0" doc:"number of held-out test time steps (never the first or last)"`
	ValidSteps int `set:"valid_steps" default:"0" check:">=0" doc:"number of held-out validation time steps"`
	SplitSeed  int `set:"split_seed" default:"1" check:">=0" doc:"seed of the random train/validation/test split (MovieLens: ratings; dwe: whole time steps)"`
	FromYear   int `set:"from_year" default:"0" check:">=0" doc:"keep only years >= this (0: all)"`
	ToYear     int `set:"to_year" default:"0" check:">=0" doc:"keep only years <= this (0: all)"`
}

// VocabSettings are the vocabulary stage's settings.
type VocabSettings struct {
	Size int `set:"vocab" default:"2000" check:">0" doc:"vocabulary size V"`
}

// CountSettings are the counting stage's settings.
type CountSettings struct {
	Window int    `set:"window" default:"4" check:">0" doc:"c_max of the word2vec window"`
	Scheme string `set:"ngram_scheme" default:"all" oneof:"all ends centre" doc:"n-gram pair counting: all (every pair of every n-gram), ends (HistWords: pairs with the first or last token) or centre (pairs with the middle token)"`
}

// TrainSettings are the train stage's settings.
type TrainSettings struct {
	Loop           train.LoopSettings
	Diffusion      float64   `set:"diffusion" default:"1e-3" check:">0" doc:"D of the OU prior, per year"`
	Sigma0Sq       float64   `set:"sigma0_sq" default:"1" check:">0" doc:"variance sigma_0^2 of the local prior"`
	Inference      Inference `set:"inference" default:"map" doc:"map or vi (smoothing)"`
	MinibatchWords int       `set:"minibatch_words" default:"0" check:">=0" doc:"words per minibatch in the first phase (0: full batches)"`
	BatchContexts  int       `set:"batch_contexts" default:"0" check:">=0" doc:"contexts per minibatch in the first phase (0: as minibatch_words)"`
	MinibatchSteps int       `set:"minibatch_steps" default:"0" check:">=0" doc:"steps of the minibatch phase"`
	EarlyStop      EarlyStopSettings
}

// EvalSettings are the evaluate stage's settings.
type EvalSettings struct {
	Queries []string `set:"queries" default:"['car', 'computer', 'dna', 'electricity', 'tuberculosis']" doc:"words of the aging table"`
}

// Build implements experiment.Pipeline.
func (Pipeline) Build(ctx context.Context, b *experiment.Built, e *experiment.Experiment, trials []experiment.Trial, env experiment.Env) error {
	for _, tr := range trials {
		if err := settings.MustDecode[TrainSettings](tr.Settings).check32(cmp.Or(tr.Name, tr.ID)); err != nil {
			return err
		}
	}
	data, err := experiment.Shared[DataSettings](e, trials)
	if err != nil {
		return err
	}
	src := data.Corpus
	if !filepath.IsAbs(src) {
		if _, err := os.Stat(src); err != nil {
			src = filepath.Join(env.DataDir, src)
		}
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("corpus %s: not found (looked at %s; set --data-dir or GOLDSTONE_DATA, or corpus = a path)", data.Corpus, src)
	}
	// The header and the first documents, before anything runs (plan too).
	if err := data.Ingest.Check(ctx, src); err != nil {
		return fmt.Errorf("corpus %s (corpus_format %s): %w", data.Corpus, data.Ingest.Format, err)
	}
	b.Add(&pipeline.Node{ID: "ingest", Stage: &IngestStage{Settings: data.Ingest, Limits: data.Limits},
		Inputs: map[string]pipeline.Ref{"corpus": pipeline.File(src)}, Outputs: []string{"segments.parquet"}})
	b.Add(&pipeline.Node{ID: "bin", Stage: &BinStage{Settings: data.Bin},
		Inputs: map[string]pipeline.Ref{"segments": pipeline.Out("ingest", "segments.parquet")}, Outputs: []string{"steps.parquet"}})
	b.Add(&pipeline.Node{ID: "vocab", Stage: &VocabStage{Settings: data.Vocab},
		Inputs:  map[string]pipeline.Ref{"segments": pipeline.Out("ingest", "segments.parquet"), "steps": pipeline.Out("bin", "steps.parquet")},
		Outputs: []string{"vocab.parquet"}})
	b.Add(&pipeline.Node{ID: "count", Stage: &CountStage{Settings: data.Count},
		Inputs: map[string]pipeline.Ref{"segments": pipeline.Out("ingest", "segments.parquet"), "steps": pipeline.Out("bin", "steps.parquet"),
			"vocab": pipeline.Out("vocab", "vocab.parquet")},
		Outputs: []string{"counts.parquet", "marginals.parquet"}})
	inputs := map[string]pipeline.Ref{
		"steps": pipeline.Out("bin", "steps.parquet"), "vocab": pipeline.Out("vocab", "vocab.parquet"),
		"counts": pipeline.Out("count", "counts.parquet"), "marginals": pipeline.Out("count", "marginals.parquet"),
	}
	reportIn := map[string]pipeline.Ref{}
	for _, tr := range trials {
		s := settings.MustDecode[Settings](tr.Settings)
		if s.Train.EarlyStop.Enabled && data.Bin.ValidSteps == 0 {
			return fmt.Errorf("trial %s: early_stopping = true keeps the state of the best validation log-likelihood: set valid_steps > 0 (held-out validation time steps)", cmp.Or(tr.Name, tr.ID))
		}
		tid, eid := "train/"+tr.Slug(), "evaluate/"+tr.Slug()
		b.Add(&pipeline.Node{ID: tid, Stage: &TrainStage{Settings: s.Train, Budget: env.Budget}, Inputs: inputs, Outputs: []string{"model"}})
		in := map[string]pipeline.Ref{"model": pipeline.Out(tid, "model")}
		maps.Copy(in, inputs)
		b.Add(&pipeline.Node{ID: eid, Stage: &EvaluateStage{Settings: s.Eval, Budget: env.Budget}, Inputs: in, Outputs: []string{"result"}})
		b.AddTrial(tr, eid, tid, eid)
		reportIn[tr.ID] = pipeline.Out(eid, "result")
	}
	report.Add(b, e, trials, reportIn, report.Def{Stage: "report-dwe", Version: ReportVersion, File: "report.md", Draw: Report})
	return nil
}

// IngestStage parses the corpus into dated segments (segments.parquet); Limits (no
// cache parameter) bound what it decompresses.
type IngestStage struct {
	Settings IngestSettings
	Limits   experiment.InputLimits
}

func (*IngestStage) Name() string    { return "ingest-corpus" }
func (*IngestStage) Version() string { return IngestVersion }
func (s *IngestStage) Params() any   { return settings.Keys(s.Settings) }
func (s *IngestStage) Run(ctx context.Context, io *pipeline.IO) error {
	st, err := Ingest(ctx, s.Settings, s.Limits, io.Input("corpus"), io.Output("segments.parquet"))
	if err == nil {
		io.Logf("ingested %d segments, %d tokens", st.Segments, st.Tokens)
	}
	return err
}

// Ingest parses a corpus of the given format (a name in corpus.Formats: text, a
// folder of dated files; csv or jsonl, a file of dated documents; ngram-v2 or
// ngram-v3, a file or a folder of Google Books n-gram files) into a segments
// table at out.
func Ingest(ctx context.Context, s IngestSettings, lim experiment.InputLimits, in, out string) (corpus.IngestStats, error) {
	f, err := corpus.Formats.Lookup(s.Format)
	if err != nil {
		return corpus.IngestStats{}, err
	}
	return f.Ingest(ctx, in, out, corpus.Options{Fields: s.Fields(), Limits: corpus.ReadLimits{Bytes: int64(lim.Bytes)}})
}

// BinStage bins the corpus's years into time steps and chooses the
// held-out steps (steps.parquet).
type BinStage struct{ Settings BinSettings }

func (*BinStage) Name() string    { return "bin-corpus" }
func (*BinStage) Version() string { return BinVersion }
func (s *BinStage) Params() any   { return settings.Keys(s.Settings) }
func (s *BinStage) Run(ctx context.Context, io *pipeline.IO) error {
	years, err := corpus.YearTotals(ctx, io.Input("segments"))
	if err != nil {
		return err
	}
	s0 := s.Settings
	FilterYears(years, s0.FromYear, s0.ToYear)
	opt := corpus.BinOptions{Width: s0.BinYears}
	if opt.Width == 0 {
		opt.Count = s0.Bins
	}
	bins, err := corpus.MakeBins(years, opt)
	if err != nil {
		return err
	}
	sp, err := corpus.SplitSteps(bins.Len(), corpus.SplitOptions{Test: s0.Heldout, Valid: s0.ValidSteps, Seed: uint64(s0.SplitSeed)})
	if err != nil {
		return err
	}
	io.Logf("%d time steps: %d train, %d validation, %d test", bins.Len(), len(sp.Train), len(sp.Valid), len(sp.Test))
	return corpus.WriteSteps(io.Output("steps.parquet"), bins, sp)
}

// FilterYears deletes the years before from and after to (0: no bound).
func FilterYears[V any](years map[int]V, from, to int) {
	for y := range years {
		if (from != 0 && y < from) || (to != 0 && y > to) {
			delete(years, y)
		}
	}
}

// VocabStage keeps the Size most frequent words (vocab.parquet).
type VocabStage struct{ Settings VocabSettings }

func (*VocabStage) Name() string    { return "vocab" }
func (*VocabStage) Version() string { return VocabVersion }
func (s *VocabStage) Params() any   { return settings.Keys(s.Settings) }
func (s *VocabStage) Run(ctx context.Context, io *pipeline.IO) error {
	bins, _, err := corpus.ReadSteps(ctx, io.Input("steps"))
	if err != nil {
		return err
	}
	uni, err := corpus.StepUnigrams(ctx, io.Input("segments"), bins)
	if err != nil {
		return err
	}
	v, err := corpus.BuildVocab(uni, corpus.VocabOptions{Size: s.Settings.Size})
	if err != nil {
		return err
	}
	io.Logf("vocabulary: %d words", v.Len())
	return corpus.WriteVocab(io.Output("vocab.parquet"), v)
}

// CountStage counts word-context co-occurrences per time step.
type CountStage struct{ Settings CountSettings }

func (*CountStage) Name() string    { return "count" }
func (*CountStage) Version() string { return CountVersion }
func (s *CountStage) Params() any   { return settings.Keys(s.Settings) }
func (s *CountStage) Run(ctx context.Context, io *pipeline.IO) error {
	bins, _, err := corpus.ReadSteps(ctx, io.Input("steps"))
	if err != nil {
		return err
	}
	v, err := corpus.ReadVocab(ctx, io.Input("vocab"))
	if err != nil {
		return err
	}
	scheme, err := corpus.ParseScheme(s.Settings.Scheme)
	if err != nil {
		return err
	}
	n, err := corpus.CountToFiles(ctx, io.Input("segments"), bins, v, corpus.CountOptions{Window: s.Settings.Window, Scheme: scheme}, 0,
		io.Output("counts.parquet"), io.Output("marginals.parquet"))
	if err == nil {
		io.Logf("%d non-zero co-occurrence counts", n)
	}
	return err
}

// TrainStage trains one trial's embeddings (output "model") on a pool of
// the sweep's core budget (nil outside a sweep).
type TrainStage struct {
	Settings TrainSettings
	Budget   *optim.Budget
}

func (*TrainStage) Name() string    { return "train-dwe" }
func (*TrainStage) Version() string { return TrainVersion }
func (s *TrainStage) Params() any   { return settings.Keys(s.Settings) }

// ResumeParams are the settings without the steps (pipeline.Resumable): the
// first s steps of a trial do not depend on its budget (the schedule draws
// step s's minibatch and noise whatever the total), so a longer run of it
// continues a shorter one's checkpoint (pruning).
func (s *TrainStage) ResumeParams() any { return train.ResumeKeys(s.Settings) }
func (s *TrainStage) Run(ctx context.Context, io *pipeline.IO) error {
	pool := train.NewPool(s.Budget, io.Workers())
	defer pool.Close()
	return Train(ctx, s.Settings, io, pool, io.Output("model"))
}

// EvaluateStage computes one trial's held-out metrics, cosines, aging table
// and exports (output "result"), on a pool of the sweep's core budget.
type EvaluateStage struct {
	Settings EvalSettings
	Budget   *optim.Budget
}

func (*EvaluateStage) Name() string    { return "evaluate-dwe" }
func (*EvaluateStage) Version() string { return EvaluateVersion }
func (s *EvaluateStage) Params() any   { return settings.Keys(s.Settings) }
func (s *EvaluateStage) Run(ctx context.Context, io *pipeline.IO) error {
	pool := train.NewPool(s.Budget, io.Workers())
	defer pool.Close()
	return Evaluate(ctx, s.Settings.Queries, io, pool, io.Output("result"))
}

// data is a corpus's counts split into training and held-out steps.
type data struct {
	vocab       []string
	trainYears  []string // years with data of each training step, "1790" or "2020-2021"
	train       *mdwe.Counts
	valid, test *mdwe.Counts
}

// loadData reads the counted corpus and splits its steps by role.
func loadData(ctx context.Context, io *pipeline.IO) (*data, error) {
	bins, sp, err := corpus.ReadSteps(ctx, io.Input("steps"))
	if err != nil {
		return nil, err
	}
	v, err := corpus.ReadVocab(ctx, io.Input("vocab"))
	if err != nil {
		return nil, err
	}
	cs, err := corpus.LoadCounts(ctx, io.Input("counts"), io.Input("marginals"))
	if err != nil {
		return nil, err
	}
	byT := map[int]*corpus.Step{}
	for i := range cs.Steps {
		byT[cs.Steps[i].T] = &cs.Steps[i]
	}
	mk := func(steps []int) (*mdwe.Counts, error) {
		c := &mdwe.Counts{V: cs.V}
		for _, t := range steps {
			st, ok := byT[t]
			if !ok {
				st = &corpus.Step{T: t, Unigram: make([]float64, cs.V)}
			}
			sc := mdwe.StepCounts{I: st.I, J: st.J, Pos: st.N}
			sc.NegA, sc.NegB = st.NegFactors(nil, nil, 1)
			c.Times = append(c.Times, bins.Tau[t])
			c.Steps = append(c.Steps, sc)
		}
		if len(c.Steps) > 0 {
			if err := c.Validate(); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	d := &data{vocab: v.Words}
	for _, t := range sp.Train {
		d.trainYears = append(d.trainYears, YearsLabel(bins.First[t], bins.Last[t]))
	}
	if d.train, err = mk(sp.Train); err != nil {
		return nil, err
	}
	if d.valid, err = mk(sp.Valid); err != nil {
		return nil, err
	}
	if d.test, err = mk(sp.Test); err != nil {
		return nil, err
	}
	if len(d.train.Steps) < 2 {
		return nil, fmt.Errorf("only %d training time steps: need at least 2", len(d.train.Steps))
	}
	return d, nil
}

// Train trains dynamic word embeddings (MAP or variational smoothing) on
// the training time steps and writes the posterior means (means.npy, shape
// T x 2V x d: word vectors 0..V-1 then context vectors), the vocabulary and
// time stamps (model.json), series.arrow, series.parquet and summary.json
// into dir; a training that diverged writes them too (train.Loop.Diverged:
// the means as the driver left them, the summary saying where).
// With dtype = "float32" (inference = "map" only) the parameters, their
// gradients and the optimizer state are float32 (models/dwe's float32
// mode) on the same loop, checkpoints and early stopping; means.npy holds
// them widened to float64 (exactly), so evaluate reads every trial alike.
func Train(ctx context.Context, s TrainSettings, io *pipeline.IO, pool *optim.Pool, dir string) error {
	data, err := loadData(ctx, io)
	if err != nil {
		return err
	}
	cfg := mdwe.Config{Dim: s.Loop.Dim, Sigma0Sq: s.Sigma0Sq, Diffusion: s.Diffusion, InitStd: s.Loop.InitScale, Pool: pool}
	rng := rand.New(rand.NewPCG(uint64(s.Loop.Seed), 0x696e6974))
	if s.Loop.Float32() {
		inf, ok := s.Inference.(inference32)
		if !ok {
			return errNo32(s.Inference)
		}
		model, err := inf.model32(data.train, cfg)
		if err != nil {
			return err
		}
		x := make([]float32, model.NumParams())
		model.Init32(x, rng)
		n := model.Blocks().Len()
		return trainOf(ctx, s, data, model, model.Problem32(), x, func(x []float32) []float32 { return x[:n] }, io, pool, dir)
	}
	model, means, err := s.Inference.model(data.train, cfg)
	if err != nil {
		return err
	}
	x := make([]float64, model.NumParams())
	model.Init(x, rng)
	return trainOf(ctx, s, data, model, model.Problem(), x, means, io, pool, dir)
}

// trainOf is Train on the initialised parameters x of type F of model (p
// its problem on F; means maps x to the posterior means, in F).
func trainOf[F optim.Float](ctx context.Context, s TrainSettings, data *data, model mdwe.Trainable, p optim.ProblemOf[F], x []F,
	means func([]F) []F, io *pipeline.IO, pool *optim.Pool, dir string) error {
	src := mdwe.NewSource(uint64(s.Loop.Seed))
	rng := rand.New(src)
	series := &trialio.Series{}
	sum := trialio.Summary{}
	loop := train.LoopFor(s.Loop, p, pool)
	loop.Series, loop.Summary = series, sum
	loop.Attach(train.FromIO(io))
	sched := mdwe.Schedule{MinibatchSteps: s.MinibatchSteps, BatchWords: s.MinibatchWords, BatchContexts: s.BatchContexts}
	// The minibatch and noise a step uses live in the model, which no
	// checkpoint holds: a checkpoint keeps the source as it was before the
	// draw for its step (pre, saved by AtStep), and a resume draws again
	// where the loop will not (train.Drawn: written after AtStep(Steps) by a
	// run stopped at its end, which a longer run continues).
	var pre []byte
	preStep := -1
	draw := func(step int) {
		pre, _ = src.AppendBinary(pre[:0]) // never fails; no allocation per step
		preStep = step
		sched.Draw(model, rng, step)
	}
	loop.AtStep = func(step int, _ []F) { draw(step) }
	loop.State = train.StateHooks{
		Save: func(st *checkpoint.State) {
			b := slices.Clone(pre)
			if preStep != st.Step { // not drawn yet for st.Step
				b, _ = src.MarshalBinary()
			}
			st.Bytes("dwe.rng", b)
		},
		Load: func(st *checkpoint.State) error {
			b, err := st.ReadBytes("dwe.rng")
			if err == nil {
				err = src.UnmarshalBinary(b)
			}
			if err != nil {
				return err
			}
			drawn, err := train.Drawn(st)
			if err == nil && drawn {
				draw(st.Step)
			}
			return err
		},
	}
	b := model.Blocks()
	best, err := newTracker[F](s.EarlyStop, data.valid)
	if err != nil {
		return err
	}
	if best != nil {
		loop.Extra = best.extra(series, means, b, data.train.Times, data.valid, pool)
		best.Hook(&loop.State, b.Len())
	}
	if err := loop.Run(ctx, x); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var wide []float64 // the float32 mode's widened means
	if err := trialio.WriteNpy(filepath.Join(dir, "means.npy"), train.Wide(means(x), &wide), b.T, b.N, b.D); err != nil {
		return err
	}
	m := meta{T: b.T, V: data.train.V, D: b.D, Times: data.train.Times, Vocab: data.vocab}
	if best != nil {
		best.summarize(sum, loop)
		if m.Best, err = best.write(dir, means(x), b); err != nil {
			return err
		}
	}
	if err := trialio.WriteJSON(filepath.Join(dir, "model.json"), m); err != nil {
		return err
	}
	if err := trialio.WriteTrialSeries(dir, series); err != nil {
		return err
	}
	return trialio.WriteSummary(filepath.Join(dir, "summary.json"), sum)
}

// YearsLabel names the years with data of a time step: "1790", or
// "2020-2021" for a bin whose data span several years.
func YearsLabel(first, last int) string {
	if first == last {
		return strconv.Itoa(first)
	}
	return fmt.Sprintf("%d-%d", first, last)
}

// meta describes a trained embedding.
type meta struct {
	T     int       `json:"t"` // training time steps
	V     int       `json:"v"` // vocabulary size
	D     int       `json:"d"` // embedding dimension
	Times []float64 `json:"times"`
	Vocab []string  `json:"vocab"`
	// Best is the subdirectory of the best-validation means (early
	// stopping: BestDir), "" for none.
	Best string `json:"best,omitempty"`
}

// loadEmbedding reads a train-dwe output: the best-validation means when
// it kept them (early stopping), else the final ones.
func loadEmbedding(dir string) (*meta, []float64, optim.Blocks, error) {
	var meta meta
	if err := trialio.ReadJSON(filepath.Join(dir, "model.json"), &meta); err != nil {
		return nil, nil, optim.Blocks{}, err
	}
	b := optim.Blocks{T: meta.T, N: 2 * meta.V, D: meta.D}
	x, err := readMeans(filepath.Join(dir, meta.Best, "means.npy"), b)
	if err != nil {
		return nil, nil, optim.Blocks{}, err
	}
	return &meta, x, b, nil
}

// readMeans reads a means.npy of the shape of b.
func readMeans(path string, b optim.Blocks) ([]float64, error) {
	x, shape, err := trialio.ReadNpy(path)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(shape, []int{b.T, b.N, b.D}) {
		return nil, fmt.Errorf("%s: shape %v, model.json says (%d, %d, %d)", path, shape, b.T, b.N, b.D)
	}
	return x, nil
}

// Evaluate computes the predictive log-likelihood per test point at the
// held-out time steps (embeddings interpolated between the neighbouring
// training steps), the first-to-last cosines of the word vectors, the aging
// table of the query words, and exports the embeddings (Parquet, and the
// word2vec text format per time step). The embeddings of a trial that
// diverged (its summary has diverged_step) are not evaluated: test_ll,
// valid_ll and median_first_last_cos are NaN, and only summary.json, the
// series and model.json are written.
func Evaluate(ctx context.Context, queries []string, pio *pipeline.IO, pool *optim.Pool, dir string) error {
	sum, err := trialio.ReadSummary(filepath.Join(pio.Input("model"), "summary.json"))
	if err != nil {
		return err
	}
	if _, diverged := sum.Divergence(); diverged {
		for _, k := range []string{"test_ll", "valid_ll", "median_first_last_cos"} {
			sum[k] = math.NaN()
		}
		if _, ok := sum["best_valid_step"]; ok { // early stopping
			sum["final_test_ll"], sum["final_valid_ll"] = math.NaN(), math.NaN()
		}
		return writeEvaluated(pio, dir, sum)
	}
	meta, x, b, err := loadEmbedding(pio.Input("model"))
	if err != nil {
		return err
	}
	data, err := loadData(ctx, pio)
	if err != nil {
		return err
	}
	if err := heldOut(sum, "", x, b, meta.Times, data, pool); err != nil {
		return err
	}
	if meta.Best != "" { // early stopping: x is the best state; the final one's too
		final, err := readMeans(filepath.Join(pio.Input("model"), "means.npy"), b)
		if err != nil {
			return err
		}
		if err := heldOut(sum, "final_", final, b, meta.Times, data, pool); err != nil {
			return err
		}
	}
	cos := mdwe.FirstLastCosines(x, b)
	sum["median_first_last_cos"] = figures.Median(cos)
	if err := os.MkdirAll(filepath.Join(dir, "word2vec"), 0o755); err != nil {
		return err
	}
	if err := trialio.WriteNpy(filepath.Join(dir, "first_last_cos.npy"), cos, len(cos)); err != nil {
		return err
	}
	var aging strings.Builder
	fmt.Fprintf(&aging, "| query (%s) | nearest in %s |\n|---|---|\n", data.trainYears[len(data.trainYears)-1], data.trainYears[0])
	for _, q := range queries {
		words, err := mdwe.WordAging(x, b, meta.Vocab, q, b.T-1, 0, 5)
		if err != nil {
			fmt.Fprintf(&aging, "| %s | (not in the vocabulary) |\n", q)
			continue
		}
		fmt.Fprintf(&aging, "| %s | %s |\n", q, strings.Join(words, ", "))
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "aging.md"), []byte(aging.String())); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, "embeddings.parquet"), func(w io.Writer) error {
		return mdwe.WriteParquet(w, x, b, meta.Times, meta.Vocab)
	}); err != nil {
		return err
	}
	for t := 0; t < b.T; t++ {
		name := filepath.Join(dir, "word2vec", fmt.Sprintf("%04d.txt", int(math.Round(meta.Times[t]))))
		if err := atomicfile.Write(name, func(w io.Writer) error {
			return mdwe.WriteWord2Vec(w, x, b, t, meta.Vocab)
		}); err != nil {
			return err
		}
	}
	return writeEvaluated(pio, dir, sum)
}

// heldOut adds the predictive log-likelihoods of the means x on the test
// and the validation time steps (those there are) to sum, as
// prefix+"test_ll" and prefix+"valid_ll".
func heldOut(sum trialio.Summary, prefix string, x []float64, b optim.Blocks, times []float64, data *data, pool *optim.Pool) error {
	for _, part := range []struct {
		name string
		c    *mdwe.Counts
	}{{"test_ll", data.test}, {"valid_ll", data.valid}} {
		if len(part.c.Steps) == 0 {
			continue
		}
		ll, err := mdwe.PredictiveLogLik(x, b, times, part.c, pool)
		if err != nil {
			return err
		}
		sum[prefix+part.name] = ll
	}
	return nil
}

// writeEvaluated writes what every evaluation does into dir: the training's
// series and model.json, and the summary sum.
func writeEvaluated(pio *pipeline.IO, dir string, sum trialio.Summary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := trialio.CopyTrialSeries(pio.Input("model"), dir); err != nil {
		return err
	}
	if err := trialio.CopyFile(filepath.Join(pio.Input("model"), "model.json"), filepath.Join(dir, "model.json")); err != nil {
		return err
	}
	return trialio.WriteSummary(filepath.Join(dir, "summary.json"), sum)
}

// Embedding is a trained dynamic word embedding, as the words command reads it.
type Embedding struct {
	T, V, D int
	Times   []float64
	Vocab   []string
	Means   []float64
	Blocks  optim.Blocks
}

// LoadEmbedding reads the embedding of a train-dwe output ("model").
func LoadEmbedding(dir string) (*Embedding, error) {
	meta, x, b, err := loadEmbedding(dir)
	if err != nil {
		return nil, err
	}
	return &Embedding{T: meta.T, V: meta.V, D: meta.D, Times: meta.Times, Vocab: meta.Vocab, Means: x, Blocks: b}, nil
}

// NearestStep returns the time step whose time stamp is nearest to tau, or
// def when tau is NaN.
func (e *Embedding) NearestStep(tau float64, def int) int {
	if math.IsNaN(tau) {
		return def
	}
	best := 0
	for t, x := range e.Times {
		if math.Abs(x-tau) < math.Abs(e.Times[best]-tau) {
			best = t
		}
	}
	return best
}
