package movielens

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"goldstone/experiment/settings"
	"goldstone/models"
	"goldstone/optim"
	"goldstone/pipeline"
	"goldstone/report"
	"goldstone/train"
	"goldstone/trialio"
)

// The static references of a MovieLens run (issue 23: how good is the
// model): on the same split as the dynamic model, the held-out
// log-likelihood of
//
//   - the base rate (one probability for every rating: baseline_test_ll),
//   - item biases, s = c + b_j (ref_item_test_ll),
//   - user and item biases, s = c + a_i + b_j (ref_user_item_test_ll),
//     both MAP fits with the trial's L2 prior gamma on the biases
//     (models.FitBiases),
//   - static MF (ref_static_mf_test_ll): the trial's own model with a
//     single time bin (every rating in bin 0, no coupling; with the trial's
//     bias setting its user, item and one bin bias), trained the same way:
//     the trial's optimizer, learning rate, schedule, steps, seed,
//     initialisation and minibatch size, without gauge rounds.
//
// A dynamic model that does not beat static MF gains nothing from its time
// bins; one that does not beat the user + item biases gains nothing from
// its embeddings.

// ReferenceSettings are what the static references of a trial depend on.
// Trials that differ only in the coupling or the symmetry step share them.
type ReferenceSettings struct {
	Optim     train.OptimSettings // the base optimizer; Gauge is nil
	Model     ModelSettings       // the trial's likelihood and its options (bias)
	Dim       int                 `set:"dim"`
	Seed      int                 `set:"seed"`
	Steps     int                 `set:"steps"`
	InitScale float64             `set:"init_scale"`
	Minibatch int                 `set:"minibatch"`
	Gamma     float64             `set:"gamma"`
}

// referenceSettings picks a trial's reference settings; false for a model
// of explicit ratings (the references are logistic models of the binarized
// ratings; the Gaussian likelihood reports its own bias-only reference,
// ref_bias_test_*).
func referenceSettings(t TrainSettings) (ReferenceSettings, bool) {
	if t.Model.Labels() != models.Binary {
		return ReferenceSettings{}, false
	}
	o := t.Loop.Optim
	o.Gauge = nil
	return ReferenceSettings{Optim: o, Model: t.Model, Dim: t.Loop.Dim, Seed: t.Loop.Seed, Steps: t.Loop.Steps,
		InitScale: t.Loop.InitScale, Minibatch: t.Minibatch, Gamma: t.Prior.Gamma}, true
}

// key names the reference settings (the node id of their stage).
func (s ReferenceSettings) key() string {
	b, err := json.Marshal(settings.Keys(s))
	if err != nil {
		panic(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:6])
}

// ReferencesFile is the references stage's output: a JSON object of the
// summary metrics it adds to every trial that shares it.
const ReferencesFile = "references.json"

// ReferenceStage computes the static references (output references.json).
type ReferenceStage struct {
	Settings ReferenceSettings
	Budget   *optim.Budget
}

func (*ReferenceStage) Name() string    { return "references-movielens" }
func (*ReferenceStage) Version() string { return ReferenceVersion }
func (s *ReferenceStage) Params() any   { return settings.Keys(s.Settings) }
func (s *ReferenceStage) Run(ctx context.Context, io *pipeline.IO) error {
	pool := train.NewPool(s.Budget, io.Workers())
	defer pool.Close()
	refs, err := References(ctx, s.Settings, io.Input("binned"), io.Input("split"), pool)
	if err != nil {
		return err
	}
	io.Logf("references: base rate %.4f, item %.4f, user+item %.4f, static MF %.4f", refs["baseline_test_ll"],
		refs["ref_item_test_ll"], refs["ref_user_item_test_ll"], refs["ref_static_mf_test_ll"])
	return trialio.WriteSummary(io.Output(ReferencesFile), refs)
}

// References computes the static references of s on the split in splitDir
// (binned data: binnedDir) as summary metrics: baseline_test_ll,
// ref_item_test_ll, ref_user_item_test_ll, ref_static_mf_test_ll and
// ref_static_mf_valid_ll.
func References(ctx context.Context, s ReferenceSettings, binnedDir, splitDir string, pool *optim.Pool) (trialio.Summary, error) {
	var info binInfo
	if err := trialio.ReadJSON(filepath.Join(binnedDir, "info.json"), &info); err != nil {
		return nil, err
	}
	parts := map[string]*models.Ratings{}
	for _, p := range []string{"train", "valid", "test"} {
		r, err := loadRatings(ctx, filepath.Join(splitDir, p+".parquet"), models.Binary)
		if err != nil {
			return nil, err
		}
		parts[p] = r
	}
	trainR, test := parts["train"], parts["test"]
	sum := trialio.Summary{"baseline_test_ll": models.BaseRate(trainR, test).LogLik}
	item, err := models.FitBiases(trainR, 0, info.Items, s.Gamma)
	if err != nil {
		return nil, err
	}
	sum["ref_item_test_ll"] = item.Evaluate(test).LogLik
	ui, err := models.FitBiases(trainR, info.Users, info.Items, s.Gamma)
	if err != nil {
		return nil, err
	}
	sum["ref_user_item_test_ll"] = ui.Evaluate(test).LogLik
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Static MF: the same model and training with one bin.
	flat := func(r *models.Ratings) *models.Ratings {
		return &models.Ratings{T: make([]int32, r.Len()), User: r.User, Item: r.Item, X: r.X}
	}
	m := s.Model.Likelihood.New(models.RatingsSpec{
		Train: flat(trainR), Users: info.Users, Items: info.Items, D: s.Dim, T: 1,
		Gamma: s.Gamma, InitStd: s.InitScale, MinibatchSize: s.Minibatch, Seed: uint64(s.Seed),
		Pool: pool,
	})
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("static MF: %w", err)
	}
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(uint64(s.Seed), 0x696e6974)))
	d := &optim.Driver{Method: s.Optim.Method.Method(s.Optim.Schedule()), Pool: pool}
	_, err = d.Run(m.Problem(), x, s.Steps, func(it *optim.Iter) error {
		if it.Step%100 == 0 {
			return ctx.Err()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("static MF: %w", err)
	}
	for _, p := range []string{"valid", "test"} {
		if parts[p].Len() == 0 {
			continue
		}
		met, err := m.HeldOut(x, flat(parts[p]), false)
		if err != nil {
			return nil, err
		}
		sum["ref_static_mf_"+p+"_ll"] = met[0].Value // "ll"
	}
	return sum, nil
}

// ReferencesTable renders, per trial, the dynamic model's held-out
// log-likelihood next to the static references on the same split, and the
// dynamic model's gain over the best of them (Markdown).
func ReferencesTable(all []report.TrialResult) string {
	cols := []struct{ key, label string }{
		{"test_ll", "dynamic model"},
		{"baseline_test_ll", "base rate"},
		{"ref_item_test_ll", "item biases"},
		{"ref_user_item_test_ll", "user + item biases"},
		{"ref_static_mf_test_ll", "static MF (one bin)"},
	}
	var b strings.Builder
	b.WriteString("\n## Static references (held-out log-likelihood per test rating, the same split)\n\n")
	b.WriteString("Item and user + item biases: MAP with the trial's gamma; static MF: the trial's model and training with a single time bin. ")
	b.WriteString("The last column is the dynamic model's gain over the best static reference (negative: a static model is better).\n\n")
	b.WriteString("| trial |")
	for _, c := range cols {
		b.WriteString(" " + c.label + " |")
	}
	b.WriteString(" dynamic − best static |\n|---|" + strings.Repeat("---|", len(cols)+1) + "\n")
	for _, r := range all {
		fmt.Fprintf(&b, "| %s |", r.Trial.Name)
		best := 0.0
		have := false
		for k, c := range cols {
			v, ok := r.Summary[c.key]
			if !ok {
				b.WriteString(" |")
				continue
			}
			fmt.Fprintf(&b, " %.4f |", v)
			if k > 0 && (!have || v > best) {
				best, have = v, true
			}
		}
		if v, ok := r.Summary["test_ll"]; ok && have {
			fmt.Fprintf(&b, " %+.4f |\n", v-best)
		} else {
			b.WriteString(" |\n")
		}
	}
	return b.String()
}
