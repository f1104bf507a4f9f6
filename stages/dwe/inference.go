package dwe

import (
	"goldstone/experiment/settings"
	mdwe "goldstone/models/dwe"
)

func init() {
	settings.RegisterChoice("inference", "map", MAPInference{})
	settings.RegisterChoice("inference", "vi", VIInference{})
}

// Inference is the choice of the inference setting: how the train stage
// fits the embeddings. A new kind is a struct implementing it and one
// RegisterChoice line above.
type Inference interface {
	// model builds the trainable model on the training counts and returns
	// it with the map from its parameters to the posterior means.
	model(c *mdwe.Counts, cfg mdwe.Config) (mdwe.Trainable, func(x []float64) []float64, error)
}

// MAPInference is inference = "map": the MAP estimate of the smoothed
// embeddings; the parameters are the means.
type MAPInference struct{}

func (MAPInference) model(c *mdwe.Counts, cfg mdwe.Config) (mdwe.Trainable, func(x []float64) []float64, error) {
	m, err := mdwe.NewMAP(c, cfg)
	if err != nil {
		return nil, nil, err
	}
	return m, func(x []float64) []float64 { return x[:m.Blocks().Len()] }, nil
}

// VIInference is inference = "vi": variational smoothing (means and
// variances).
type VIInference struct{}

func (VIInference) model(c *mdwe.Counts, cfg mdwe.Config) (mdwe.Trainable, func(x []float64) []float64, error) {
	m, err := mdwe.NewVariational(c, cfg)
	if err != nil {
		return nil, nil, err
	}
	return m, m.Means, nil
}
