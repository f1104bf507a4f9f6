package dwe

import (
	"fmt"
	"math/rand/v2"

	"goldstone/experiment/settings"
	mdwe "goldstone/models/dwe"
	"goldstone/optim"
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

// model32 is a model the float32 mode (dtype = "float32") trains: its
// parameters, their gradients and the optimizer state float32.
type model32 interface {
	mdwe.Trainable
	Init32(x []float32, rng *rand.Rand)
	Problem32() optim.ProblemOf[float32]
}

var _ model32 = (*mdwe.MAP)(nil)

// inference32 is an Inference with a float32 mode (map); its parameters
// are the means.
type inference32 interface {
	model32(c *mdwe.Counts, cfg mdwe.Config) (model32, error)
}

func (MAPInference) model32(c *mdwe.Counts, cfg mdwe.Config) (model32, error) {
	return mdwe.NewMAP(c, cfg)
}

// errNo32 is the error of a float32 trial whose inference has no float32
// mode.
func errNo32(inf Inference) error {
	return fmt.Errorf("dtype = \"float32\": inference = %q has no float32 mode (inference = \"map\" has; or set dtype = \"float64\")", settings.ChoiceName(inf))
}

// check32 is the plan-time error of trial's settings when they set dtype =
// "float32" with an inference that has none (nil otherwise). The gauge
// steps (goldstone, procrustes: optim.Gauge32) and the minibatch phase
// run in float32.
func (s TrainSettings) check32(trial string) error {
	if _, ok := s.Inference.(inference32); s.Loop.Float32() && !ok {
		return fmt.Errorf("trial %s: %w", trial, errNo32(s.Inference))
	}
	return nil
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
