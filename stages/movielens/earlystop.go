package movielens

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"goldstone/models"
	"goldstone/optim"
	"goldstone/train"
	"goldstone/trialio"
)

// Early stopping (issue 30): with early_stopping = true the train stage
// keeps the parameters at the best value of the likelihood's own
// validation metric (validationMetric) among its validation checks (every
// valid_every steps), writes them beside the final ones (BestDir), and
// stops after patience checks without improvement. Evaluate then reports
// the best state's held-out metrics under the usual names (test_*,
// valid_*: what reports, claims and searches read) and the final state's
// as final_test_*, final_valid_*.

// BestDir is the subdirectory of a train-movielens output that holds the
// best-validation parameters (the same files as the final ones: ParamsFile
// and the arrays).
const BestDir = "best"

// validationMetric is the held-out metric (models.Metric name) early
// stopping watches for a model, and whether lower is better: the model's
// own choice (models.Selecting: RMSE for gaussian, deviance for poisson),
// else the log-likelihood.
func validationMetric(m models.RatingsModel) (name string, lowerBetter bool) {
	if s, ok := m.(models.Selecting); ok {
		return s.Selection()
	}
	return "ll", false
}

// esTracker is a trial's early stopping (nil: off; every method is a no-op
// on nil).
type esTracker[F optim.Float] struct {
	train.BestOf[F]
	metric string
	last   int // the iterate index of the last check
}

// bestTracker returns the tracker of s (nil when early stopping is off).
func bestTracker[F optim.Float](s TrainSettings, m models.RatingsModel, valid *models.Ratings) (*esTracker[F], error) {
	if !s.EarlyStop.Enabled {
		return nil, nil
	}
	if valid.Len() == 0 {
		return nil, errors.New("early_stopping = true: the validation split is empty (give it a share in split)")
	}
	name, lower := validationMetric(m)
	return &esTracker[F]{BestOf: train.BestOf[F]{Patience: s.EarlyStop.Patience, LowerBetter: lower}, metric: name}, nil
}

// check records the validation metrics met of the iterate x (index step)
// and returns train.ErrStopEarly when patience has run out.
func (b *esTracker[F]) check(step int, met []models.Metric, x []F) error {
	if b == nil {
		return nil
	}
	for _, m := range met {
		if m.Name == b.metric {
			b.last = step
			if b.Check(step, m.Value, x) {
				return train.ErrStopEarly
			}
			return nil
		}
	}
	return fmt.Errorf("early stopping: the model reports no validation %s", b.metric)
}

// hook adds the tracker's state to the loop's checkpoints (train.BestOf.Hook).
func (b *esTracker[F]) hook(h *train.StateHooks, n int) {
	if b != nil {
		b.Hook(h, n)
	}
}

// summarize adds best_valid_step, best_valid_<metric> and trained_steps
// (train.BestOf.Summarize).
func (b *esTracker[F]) summarize(sum trialio.Summary, l *train.LoopOf[F]) {
	if b != nil {
		b.Summarize(sum, b.metric, b.last, l)
	}
}

// write writes the best parameters into dir/BestDir (the final ones when
// no check gave a finite value: evaluate reports NaN for them then) and
// returns BestDir.
func (b *esTracker[F]) write(dir string, x []F, meta modelMeta) (string, error) {
	bx := b.X
	if bx == nil {
		bx = x
	}
	var buf []float64
	d := filepath.Join(dir, BestDir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", err
	}
	return BestDir, writeParams(d, train.Wide(bx, &buf), meta)
}
