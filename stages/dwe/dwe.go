package stages

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"goldstone/models/dwe"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/stages/corpus"
)

// Setting keys read by each dynamic word embedding stage.
var (
	dweBinKeys   = []string{"bins", "bin_years", "heldout", "valid_steps", "split_seed", "from_year", "to_year"}
	dweTrainKeys = []string{
		"seed", "steps", "log_every", "gauge_gap_every", "init_scale",
		"optimizer", "lr", "lr_s0", "lr_kappa", "clip", "adagrad_eps", "adam_beta1", "adam_beta2", "adam_eps",
		"gauge", "k1", "k2", "gauge_lr", "rotation", "keep_fields", "guard", "flip_walls", "reflections",
		"dim", "diffusion", "sigma0_sq", "inference", "minibatch_words", "batch_contexts", "minibatch_steps",
	}
)

// dweSteps is the time-step table of a corpus: bins, their time stamps and roles.
type dweSteps struct {
	bins  *corpus.Bins
	split corpus.Split
}

func buildDWE(b *Built, e *Experiment, trials []Trial, env Env) error {
	s0, err := sharedSettings(e, trials, append([]string{"corpus", "corpus_format", "vocab", "window", "ngram_scheme"}, dweBinKeys...))
	if err != nil {
		return err
	}
	src := s0.String("corpus")
	if !filepath.IsAbs(src) {
		if _, err := os.Stat(src); err != nil {
			src = filepath.Join(env.DataDir, src)
		}
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("corpus %s: not found (looked at %s; set --data-dir or GOLDSTONE_DATA, or corpus = a path)", s0.String("corpus"), src)
	}
	format := s0.String("corpus_format")
	b.Graph.Add(&pipeline.Node{
		ID: "ingest",
		Stage: &funcStage{name: "ingest-corpus", version: "1", params: s0.Subset("corpus_format"),
			run: func(ctx context.Context, io *pipeline.IO) error {
				in, out := io.Input("corpus"), io.Output("segments.parquet")
				var st corpus.IngestStats
				var err error
				switch format {
				case "text":
					st, err = corpus.IngestDir(ctx, in, out, corpus.Tokenizer{})
				case "csv":
					st, err = corpus.IngestCSV(ctx, in, out, corpus.Tokenizer{})
				case "ngram-v2", "ngram-v3":
					files, ferr := ngramFiles(in)
					if ferr != nil {
						return ferr
					}
					opt := corpus.CountingNgramOptions
					opt.Format = corpus.FormatV2
					if format == "ngram-v3" {
						opt.Format = corpus.FormatV3
					}
					opt.Lower = true
					st, err = corpus.IngestNgrams(ctx, files, out, opt)
				}
				if err == nil {
					io.Logf("ingested %d segments, %d tokens", st.Segments, st.Tokens)
				}
				return err
			}},
		Inputs:  map[string]pipeline.Ref{"corpus": pipeline.File(src)},
		Outputs: []string{"segments.parquet"},
	})
	b.Graph.Add(&pipeline.Node{
		ID: "bin",
		Stage: &funcStage{name: "bin-corpus", version: "1", params: s0.Subset(dweBinKeys...),
			run: func(ctx context.Context, io *pipeline.IO) error {
				years, err := corpus.YearTotals(ctx, io.Input("segments"))
				if err != nil {
					return err
				}
				for y := range years {
					if (s0.Int("from_year") != 0 && y < s0.Int("from_year")) || (s0.Int("to_year") != 0 && y > s0.Int("to_year")) {
						delete(years, y)
					}
				}
				opt := corpus.BinOptions{Width: s0.Int("bin_years")}
				if opt.Width == 0 {
					opt.Count = s0.Int("bins")
				}
				bins, err := corpus.MakeBins(years, opt)
				if err != nil {
					return err
				}
				sp, err := corpus.SplitSteps(bins.Len(), corpus.SplitOptions{Test: s0.Int("heldout"), Valid: s0.Int("valid_steps"), Seed: uint64(s0.Int("split_seed"))})
				if err != nil {
					return err
				}
				io.Logf("%d time steps: %d train, %d validation, %d test", bins.Len(), len(sp.Train), len(sp.Valid), len(sp.Test))
				return corpus.WriteSteps(io.Output("steps.parquet"), bins, sp)
			}},
		Inputs:  map[string]pipeline.Ref{"segments": pipeline.Out("ingest", "segments.parquet")},
		Outputs: []string{"steps.parquet"},
	})
	b.Graph.Add(&pipeline.Node{
		ID: "vocab",
		Stage: &funcStage{name: "vocab", version: "1", params: s0.Subset("vocab"),
			run: func(ctx context.Context, io *pipeline.IO) error {
				bins, _, err := corpus.ReadSteps(ctx, io.Input("steps"))
				if err != nil {
					return err
				}
				uni, err := corpus.StepUnigrams(ctx, io.Input("segments"), bins)
				if err != nil {
					return err
				}
				v, err := corpus.BuildVocab(uni, corpus.VocabOptions{Size: s0.Int("vocab")})
				if err != nil {
					return err
				}
				io.Logf("vocabulary: %d words", v.Len())
				return corpus.WriteVocab(io.Output("vocab.parquet"), v)
			}},
		Inputs:  map[string]pipeline.Ref{"segments": pipeline.Out("ingest", "segments.parquet"), "steps": pipeline.Out("bin", "steps.parquet")},
		Outputs: []string{"vocab.parquet"},
	})
	b.Graph.Add(&pipeline.Node{
		ID: "count",
		Stage: &funcStage{name: "count", version: "1", params: s0.Subset("window", "ngram_scheme"),
			run: func(ctx context.Context, io *pipeline.IO) error {
				bins, _, err := corpus.ReadSteps(ctx, io.Input("steps"))
				if err != nil {
					return err
				}
				v, err := corpus.ReadVocab(ctx, io.Input("vocab"))
				if err != nil {
					return err
				}
				scheme, err := corpus.ParseScheme(s0.String("ngram_scheme"))
				if err != nil {
					return err
				}
				n, err := corpus.CountToFiles(ctx, io.Input("segments"), bins, v, corpus.CountOptions{Window: s0.Int("window"), Scheme: scheme}, 0,
					io.Output("counts.parquet"), io.Output("marginals.parquet"))
				if err == nil {
					io.Logf("%d non-zero co-occurrence counts", n)
				}
				return err
			}},
		Inputs: map[string]pipeline.Ref{"segments": pipeline.Out("ingest", "segments.parquet"), "steps": pipeline.Out("bin", "steps.parquet"),
			"vocab": pipeline.Out("vocab", "vocab.parquet")},
		Outputs: []string{"counts.parquet", "marginals.parquet"},
	})
	data := map[string]pipeline.Ref{
		"steps": pipeline.Out("bin", "steps.parquet"), "vocab": pipeline.Out("vocab", "vocab.parquet"),
		"counts": pipeline.Out("count", "counts.parquet"), "marginals": pipeline.Out("count", "marginals.parquet"),
	}
	reportIn := map[string]pipeline.Ref{}
	for _, tr := range trials {
		s := tr.Settings
		tid, eid := "train/"+tr.Slug(), "evaluate/"+tr.Slug()
		b.Graph.Add(&pipeline.Node{
			ID: tid,
			Stage: &funcStage{name: "train-dwe", version: "1", params: s.Params(dweTrainKeys...),
				run: func(ctx context.Context, io *pipeline.IO) error {
					return TrainDWE(ctx, s, io, io.Output("model"))
				}},
			Inputs:  data,
			Outputs: []string{"model"},
		})
		in := map[string]pipeline.Ref{"model": pipeline.Out(tid, "model")}
		for k, v := range data {
			in[k] = v
		}
		b.Graph.Add(&pipeline.Node{
			ID: eid,
			Stage: &funcStage{name: "evaluate-dwe", version: "1", params: s.Subset("queries"),
				run: func(ctx context.Context, io *pipeline.IO) error {
					return EvaluateDWE(ctx, s, io, io.Output("result"))
				}},
			Inputs:  in,
			Outputs: []string{"result"},
		})
		b.Trials = append(b.Trials, TrialNodes{Trial: tr, Result: eid, Nodes: []string{tid, eid}})
		reportIn[tr.ID] = pipeline.Out(eid, "result")
	}
	addReport(b, e, trials, "report-dwe", reportIn, ReportDWE)
	return nil
}

// ngramFiles lists the n-gram files of a path: the file itself, or the
// regular files of a directory in name order.
func ngramFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && !strings.Contains(e.Name(), "totalcounts") {
			out = append(out, filepath.Join(path, e.Name()))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no n-gram files", path)
	}
	return out, nil
}

// dweData is a corpus's counts split into training and held-out steps.
type dweData struct {
	vocab       []string
	train       *dwe.Counts
	valid, test *dwe.Counts
}

// loadDWE reads the counted corpus and splits its steps by role.
func loadDWE(ctx context.Context, io *pipeline.IO) (*dweData, error) {
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
	mk := func(steps []int) (*dwe.Counts, error) {
		c := &dwe.Counts{V: cs.V}
		for _, t := range steps {
			st, ok := byT[t]
			if !ok {
				st = &corpus.Step{T: t, Unigram: make([]float64, cs.V)}
			}
			sc := dwe.StepCounts{I: st.I, J: st.J, Pos: st.N}
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
	d := &dweData{vocab: v.Words}
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

// TrainDWE trains dynamic word embeddings (MAP or variational smoothing) on
// the training time steps and writes the posterior means (means.f64), the
// vocabulary and time stamps, series.arrow and summary.json into dir.
func TrainDWE(ctx context.Context, s Settings, io *pipeline.IO, dir string) error {
	data, err := loadDWE(ctx, io)
	if err != nil {
		return err
	}
	opt, err := BuildOptimizer(s, io.Workers())
	if err != nil {
		return err
	}
	defer opt.Close()
	cfg := dwe.Config{Dim: s.Int("dim"), Sigma0Sq: s.Float("sigma0_sq"), Diffusion: s.Float("diffusion"), InitStd: s.Float("init_scale")}
	if opt.Pool != nil {
		cfg.Pool = opt.Pool
	}
	var model dwe.Trainable
	var means func(x []float64) []float64
	switch s.String("inference") {
	case "map":
		m, err := dwe.NewMAP(data.train, cfg)
		if err != nil {
			return err
		}
		model, means = m, func(x []float64) []float64 { return x[:m.Blocks().Len()] }
	case "vi":
		m, err := dwe.NewVariational(data.train, cfg)
		if err != nil {
			return err
		}
		model, means = m, m.Means
	}
	x := make([]float64, model.NumParams())
	seed := uint64(s.Int("seed"))
	model.Init(x, rand.New(rand.NewPCG(seed, 0x696e6974)))
	rng := rand.New(rand.NewPCG(seed, 0x64776521))
	mbSteps, bw, bc := s.Int("minibatch_steps"), s.Int("minibatch_words"), s.Int("batch_contexts")
	if bc == 0 {
		bc = bw
	}
	series := &Series{}
	sum := Summary{}
	steps := s.Int("steps")
	loop := &Loop{
		Problem: optim.Problem{Local: model.LocalLoss, Blocks: model.Blocks(), Graph: model.Graph()},
		Opt:     opt, Steps: steps, LogEvery: s.Int("log_every"), GapEvery: s.Int("gauge_gap_every"),
		Series: series, Summary: sum,
		Extra: func(it *optim.Iter, _ []float64) error { return ctx.Err() },
		AtStep: func(step int, _ []float64) {
			if step >= steps {
				return
			}
			if step < mbSteps && bw > 0 {
				model.Resample(rng, bw, bc)
			} else {
				model.Resample(rng, 0, 0)
			}
		},
		Progress: progressFunc(io),
	}
	if err := loop.Run(x); err != nil {
		return err
	}
	sum["psi_settle_step"] = settleStep(series, "psi", 0.01)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b := model.Blocks()
	if err := writeFloats(filepath.Join(dir, "means.f64"), means(x)); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "model.json"), dweMeta{T: b.T, V: data.train.V, D: b.D, Times: data.train.Times, Vocab: data.vocab}); err != nil {
		return err
	}
	if err := WriteSeries(filepath.Join(dir, "series.arrow"), series); err != nil {
		return err
	}
	return WriteSummary(filepath.Join(dir, "summary.json"), sum)
}

// dweMeta describes a trained embedding.
type dweMeta struct {
	T, V, D int
	Times   []float64
	Vocab   []string
}

// loadEmbedding reads a train-dwe output.
func loadEmbedding(dir string) (*dweMeta, []float64, optim.Blocks, error) {
	var meta dweMeta
	if err := readJSON(filepath.Join(dir, "model.json"), &meta); err != nil {
		return nil, nil, optim.Blocks{}, err
	}
	b := optim.Blocks{T: meta.T, N: 2 * meta.V, D: meta.D}
	x, err := readFloats(filepath.Join(dir, "means.f64"), b.Len())
	return &meta, x, b, err
}

// EvaluateDWE computes the predictive log-likelihood per test point at the
// held-out time steps (embeddings interpolated between the neighbouring
// training steps), the first-to-last cosines of the word vectors, the aging
// table of the query words, and exports the embeddings (Parquet, and the
// word2vec text format per time step).
func EvaluateDWE(ctx context.Context, s Settings, io *pipeline.IO, dir string) error {
	meta, x, b, err := loadEmbedding(io.Input("model"))
	if err != nil {
		return err
	}
	data, err := loadDWE(ctx, io)
	if err != nil {
		return err
	}
	pool := optim.NewPool(io.Workers()) // the trial's cores
	defer pool.Close()
	sum, err := ReadSummary(filepath.Join(io.Input("model"), "summary.json"))
	if err != nil {
		return err
	}
	for _, part := range []struct {
		name string
		c    *dwe.Counts
	}{{"test_ll", data.test}, {"valid_ll", data.valid}} {
		if len(part.c.Steps) == 0 {
			continue
		}
		ll, err := dwe.PredictiveLogLik(x, b, meta.Times, part.c, pool)
		if err != nil {
			return err
		}
		sum[part.name] = ll
	}
	cos := dwe.FirstLastCosines(x, b)
	sum["median_first_last_cos"] = dwe.Median(cos)
	if err := os.MkdirAll(filepath.Join(dir, "word2vec"), 0o755); err != nil {
		return err
	}
	if err := writeFloats(filepath.Join(dir, "first_last_cos.f64"), cos); err != nil {
		return err
	}
	var aging strings.Builder
	fmt.Fprintf(&aging, "| query (%.0f) | nearest at %.0f |\n|---|---|\n", meta.Times[len(meta.Times)-1], meta.Times[0])
	for _, q := range s.Strings("queries") {
		words, err := AgeWord(x, b, meta.Vocab, q, b.T-1, 0, 5)
		if err != nil {
			fmt.Fprintf(&aging, "| %s | (not in the vocabulary) |\n", q)
			continue
		}
		fmt.Fprintf(&aging, "| %s | %s |\n", q, strings.Join(words, ", "))
	}
	if err := writeFileAtomic(filepath.Join(dir, "aging.md"), []byte(aging.String())); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, "embeddings.parquet"), func(f *os.File) error {
		return dwe.WriteParquet(f, x, b, meta.Times, meta.Vocab)
	}); err != nil {
		return err
	}
	for t := 0; t < b.T; t++ {
		name := filepath.Join(dir, "word2vec", fmt.Sprintf("%04d.txt", int(math.Round(meta.Times[t]))))
		if err := writeAtomic(name, func(f *os.File) error {
			w := bufio.NewWriter(f)
			if err := dwe.WriteWord2Vec(w, x, b, t, meta.Vocab); err != nil {
				return err
			}
			return w.Flush()
		}); err != nil {
			return err
		}
	}
	ser, err := os.ReadFile(filepath.Join(io.Input("model"), "series.arrow"))
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, "series.arrow"), ser); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(io.Input("model"), "model.json"), filepath.Join(dir, "model.json")); err != nil {
		return err
	}
	return WriteSummary(filepath.Join(dir, "summary.json"), sum)
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeFileAtomic(dst, b)
}

// AgeWord returns the k words whose word vector at step to has the largest
// cosine with query's word vector at step from (the paper's "word aging":
// from the last step to the first). The query itself is left out.
func AgeWord(means []float64, b optim.Blocks, vocab []string, query string, from, to, k int) ([]string, error) {
	qi := -1
	for i, w := range vocab {
		if w == query {
			qi = i
			break
		}
	}
	if qi < 0 {
		return nil, fmt.Errorf("word %q is not in the vocabulary", query)
	}
	if from < 0 || from >= b.T || to < 0 || to >= b.T {
		return nil, fmt.Errorf("time steps %d, %d out of [0, %d)", from, to, b.T)
	}
	vec := func(t, i int) []float64 {
		blk := b.Block(means, t)
		return blk[i*b.D : (i+1)*b.D]
	}
	q := vec(from, qi)
	type scored struct {
		i int
		c float64
	}
	var all []scored
	for i := range vocab {
		if i == qi {
			continue
		}
		all = append(all, scored{i, cosineSim(q, vec(to, i))})
	}
	sort.SliceStable(all, func(a, c int) bool { return all[a].c > all[c].c })
	var out []string
	for _, sc := range all[:min(k, len(all))] {
		out = append(out, vocab[sc.i])
	}
	return out, nil
}

func cosineSim(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
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
