package movielens

import (
	"context"
	"fmt"
	"path/filepath"

	"goldstone/formats/ratings"

	"goldstone/models"
	"goldstone/optim"
	"goldstone/trialio"
)

// The model seam: a trial's ratings model is the choice "likelihood". Each
// value is a settings struct in models (its options as tagged fields) that
// says which labels the model reads and builds the model; the model reports
// its own held-out metrics and names its parameter arrays. Adding a
// likelihood is its file in models/ and one RegisterChoice line in this
// package's init (stages.go).

// Likelihood is a ratings model's settings: the value of the choice
// "likelihood" (models.LogisticSettings, models.GaussianSettings,
// models.PoissonSettings).
type Likelihood interface {
	// Labels is what the model trains on: binarized ratings (the binarize
	// stage runs) or explicit ones (it does not).
	Labels() models.Labels
	// New builds the model on spec.
	New(spec models.RatingsSpec) models.RatingsModel
}

// ModelSettings choose a trial's ratings model.
type ModelSettings struct {
	Likelihood Likelihood `set:"likelihood" default:"logistic" doc:"ratings likelihood: logistic (binarized at the median, the paper's), gaussian (explicit ratings; held-out RMSE and MAE) or poisson (implicit counts in the rating column, rate softplus(score); held-out Poisson deviance)"`
}

// PruneKeys leaves the default likelihood out of a trial's keys (the trials
// of the paper's model keep their ids).
func (s ModelSettings) PruneKeys(m map[string]any) {
	if m["likelihood"] == "logistic" {
		delete(m, "likelihood")
	}
}

// Labels is what the chosen model trains on.
func (s ModelSettings) Labels() models.Labels { return s.Likelihood.Labels() }

// loadRatings reads a binned Parquet table into the models' layout, with
// the labels l: the binary x or the explicit rating.
func loadRatings(ctx context.Context, path string, l models.Labels) (*models.Ratings, error) {
	c, err := ratings.LoadColumns(ctx, path)
	if err != nil {
		return nil, err
	}
	r := &models.Ratings{T: c.Bin, User: c.User, Item: c.Item}
	switch l {
	case models.Binary:
		r.X = c.X
	case models.Explicit:
		r.Value = c.Rating
	default:
		return nil, fmt.Errorf("load %s: labels %v", path, l)
	}
	return r, nil
}

// splitRatings are the three parts of a split with the labels l.
type splitRatings struct{ train, valid, test *models.Ratings }

func loadSplit(ctx context.Context, splitDir string, l models.Labels) (splitRatings, error) {
	var s splitRatings
	for _, p := range []struct {
		name string
		dst  **models.Ratings
	}{{"train", &s.train}, {"valid", &s.valid}, {"test", &s.test}} {
		r, err := loadRatings(ctx, filepath.Join(splitDir, p.name+".parquet"), l)
		if err != nil {
			return s, err
		}
		*p.dst = r
	}
	return s, nil
}

// modelSpec is the RatingsSpec of a trial's settings on the binned data.
func modelSpec(s TrainSettings, info binInfo, train *models.Ratings, pool *optim.Pool) models.RatingsSpec {
	return models.RatingsSpec{
		Train: train, Users: info.Users, Items: info.Items, D: s.Loop.Dim, T: info.T,
		Lambda: s.Prior.Lambda, Gamma: s.Prior.Gamma, InitStd: s.Loop.InitScale,
		MinibatchSize: s.Minibatch, Seed: uint64(s.Loop.Seed), Pool: pool,
	}
}

// addMetrics adds metrics to sum as prefix_<name>.
func addMetrics(sum trialio.Summary, prefix string, met []models.Metric) {
	for _, m := range met {
		sum[prefix+"_"+m.Name] = m.Value
	}
}
