package movielens_test

import (
	"math"
	"path/filepath"
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/stages/movielens"
	_ "goldstone/stages/pipelines" // every pipeline, to load experiments.toml
	"goldstone/train"
)

// TestPlantedCalibration: the movielens-planted experiment's generator
// settings are the calibrated values, derived from the model's prior and
// the measured real gain of the embeddings (with biases minus bias-only on
// ml-latest-small), not tuned.
func TestPlantedCalibration(t *testing.T) {
	c, err := experiment.LoadConfig(filepath.Join("..", "..", "experiments.toml"))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := c.Experiments["movielens-planted"]
	if !ok {
		t.Fatal("no movielens-planted experiment")
	}
	tr := e.Trials()[0]
	p := settings.MustDecode[movielens.PlantedSettings](tr.Settings)
	prior := settings.MustDecode[train.MFPrior](tr.Settings)
	if got, want := p.Drift, movielens.PriorDrift(prior.Lambda, prior.Gamma); math.Abs(got-want) > 5e-5 {
		t.Errorf("planted_drift %v, want movielens.PriorDrift(lambda, gamma) = %.4f", got, want)
	}
	if got, want := p.Scale, movielens.ScaleForGain(movielens.EmbeddingGainSmall, p.Dim); math.Abs(got-want) > 5e-5 {
		t.Errorf("planted_scale %v, want movielens.ScaleForGain(movielens.EmbeddingGainSmall, planted_dim) = %.4f", got, want)
	}
	if got := p.ActiveBins; got != movielens.ActiveBinsSmall {
		t.Errorf("planted_active_bins %v, want ActiveBinsSmall = %v", got, movielens.ActiveBinsSmall)
	}
}
