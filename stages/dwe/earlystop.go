package dwe

import (
	"errors"
	"os"
	"path/filepath"

	mdwe "goldstone/models/dwe"
	"goldstone/optim"
	"goldstone/train"
	"goldstone/trialio"
)

// Early stopping (issue 30), as for MovieLens: with early_stopping = true
// the train stage checks the predictive log-likelihood of the validation
// time steps (valid_steps of them, held out by the bin stage) every
// valid_every steps (series valid_ll), keeps the posterior means at its
// best check (BestDir/means.npy), and stops after patience checks without
// improvement. Evaluate then evaluates the best state under the usual
// names (test_ll, valid_ll, the cosines, the aging table and the exports)
// and adds the final state's held-out metrics as final_test_ll and
// final_valid_ll; the summary has best_valid_step, best_valid_ll and
// trained_steps.

// EarlyStopSettings choose whether a dwe trial keeps its best-validation
// state. The three keys are left out of a trial's keys unless it is on.
type EarlyStopSettings struct {
	Enabled    bool `set:"early_stopping" default:"false" doc:"keep the parameters at the best validation metric (movielens: the likelihood's own, valid_ll for logistic, valid_rmse for gaussian, valid_deviance for poisson; dwe: valid_ll on the valid_steps held-out time steps; artificial refuses it: it has no held-out data), report the test metrics of that state (and the final state's as final_test_*), and stop after patience validation checks without improvement"`
	Patience   int  `set:"patience" default:"10" check:">0" doc:"with early_stopping: the validation checks without improvement after which training stops"`
	ValidEvery int  `set:"valid_every" default:"50" check:">0" doc:"record the validation metrics every this many steps (movielens: log-likelihood, gaussian also RMSE and MAE; dwe: with early_stopping, the predictive log-likelihood of the validation time steps)"`
}

// PruneKeys leaves the settings out of a trial's keys unless early
// stopping is on (trials without it keep their ids and cache keys).
func (s EarlyStopSettings) PruneKeys(m map[string]any) {
	if !s.Enabled {
		delete(m, "early_stopping")
		delete(m, "patience")
		delete(m, "valid_every")
	}
}

// BestDir is the subdirectory of a train-dwe output that holds the
// best-validation posterior means (means.npy).
const BestDir = "best"

// esTracker is a dwe trial's early stopping (nil: off).
// It keeps the best means in the parameters' type F (a float32 copy in
// the float32 mode) and evaluates them widened to float64.
type esTracker[F optim.Float] struct {
	train.BestOf[F]
	every int
	last  int       // the iterate index of the last check
	wide  []float64 // the float32 mode's widened means
}

// newTracker returns the tracker of s (nil when early stopping is off).
func newTracker[F optim.Float](s EarlyStopSettings, valid *mdwe.Counts) (*esTracker[F], error) {
	if !s.Enabled {
		return nil, nil
	}
	if len(valid.Steps) == 0 {
		return nil, errors.New("early_stopping = true: no validation time steps (set valid_steps > 0)")
	}
	return &esTracker[F]{BestOf: train.BestOf[F]{Patience: s.Patience}, every: s.ValidEvery}, nil
}

// extra is the loop's Extra: every valid_every steps (not at the last
// step: the series does not depend on the budget) the validation
// log-likelihood of the means of the iterate x, recorded as valid_ll at
// its index and checked; train.ErrStopEarly when patience has run out.
func (b *esTracker[F]) extra(series *trialio.Series, means func([]F) []F, bl optim.Blocks, times []float64, valid *mdwe.Counts, pool *optim.Pool) func(*optim.Iter, []F) error {
	return func(it *optim.Iter, x []F) error {
		if it.Step%b.every != 0 {
			return nil
		}
		mx := means(x)
		ll, err := mdwe.PredictiveLogLik(train.Wide(mx, &b.wide), bl, times, valid, pool)
		if err != nil {
			return err
		}
		series.Add("valid_ll", it.Step+1, ll)
		b.last = it.Step + 1
		if b.Check(it.Step+1, ll, mx) {
			return train.ErrStopEarly
		}
		return nil
	}
}

// summarize adds best_valid_step, best_valid_ll and trained_steps
// (train.BestOf.Summarize).
func (b *esTracker[F]) summarize(sum trialio.Summary, l *train.LoopOf[F]) {
	b.Summarize(sum, "ll", b.last, l)
}

// write writes the best means (the final ones when no check gave a finite
// value) as dir/BestDir/means.npy and returns BestDir.
func (b *esTracker[F]) write(dir string, final []F, bl optim.Blocks) (string, error) {
	bx := b.X
	if bx == nil {
		bx = final
	}
	d := filepath.Join(dir, BestDir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", err
	}
	return BestDir, trialio.WriteNpy(filepath.Join(d, "means.npy"), train.Wide(bx, &b.wide), bl.T, bl.N, bl.D)
}
