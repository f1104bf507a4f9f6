package models

import "goldstone/optim"

// The model seam of the ratings pipeline: a ratings likelihood is a model
// (a RatingsModel) and a settings struct that builds it from a RatingsSpec.
// The settings struct's fields carry the tags of the pipeline's typed
// settings (set, default, check, doc), so a pipeline registers it as one
// value of its "likelihood" choice and its options key only the trials that
// choose it. Adding a likelihood is its file here (model, settings, metrics)
// and that one registration line; LogisticMF, GaussianMF and PoissonMF are
// the three there are, each a link on the SparseMF core (sparsemf.go).

// RatingsSpec is what every ratings model is built from: the training
// ratings, the layout and the prior shared by the dynamic matrix
// factorisations, and how the training runs.
type RatingsSpec struct {
	Train        *Ratings
	Users, Items int
	D            int // embedding dimension
	T            int // number of time bins

	Lambda   float64      // chain coupling weight when Coupling is nil; 0 means uncoupled
	Coupling *optim.Graph // explicit coupling over the T bins; overrides Lambda
	Gamma    float64      // local L2 weight

	MinibatchSize int    // expected minibatch size; 0 means full batch
	Seed          uint64 // seed of the minibatch sequence
	InitStd       float64
	Pool          *optim.Pool
}

// RatingsModel is a sparse dynamic model of ratings: what a pipeline needs
// to train it, store its parameters and evaluate it. Its parameters are the
// embedding blocks (Blocks, offset 0) followed by the arrays Arrays names,
// which no gauge step touches.
type RatingsModel interface {
	Model
	// Validate reports whether the model is consistent with its data.
	Validate() error
	// Problem is the training problem for optim.Driver.
	Problem() optim.Problem
	// Arrays names the parameters after the blocks, in order (nil: none).
	Arrays() []Array
	// FullLoss is LocalLoss on every training rating whatever the
	// minibatch size, overwriting grad; it changes no training state (the
	// batch sequence), so it may be evaluated between steps.
	FullLoss(grad, x []float64) float64
	// HeldOut returns the held-out metrics of the parameters x on r, in a
	// fixed order. With all false only those cheap enough to record along
	// training (one pass over r); the first is always "ll", the mean
	// log-likelihood per rating.
	HeldOut(x []float64, r *Ratings, all bool) ([]Metric, error)
	// Baseline returns the metrics of the constant predictor fitted to the
	// training ratings (the base rate, the global mean) on test.
	Baseline(test *Ratings) []Metric
}

// Selecting is a RatingsModel that names the held-out metric by which a
// pipeline chooses among its states (early stopping) when that is not
// the log-likelihood: one of HeldOut's cheap metrics, and whether lower is
// better. A model that is not Selecting is chosen on "ll", higher better.
type Selecting interface {
	Selection() (metric string, lowerBetter bool)
}

// Metric is one held-out metric: a pipeline reports it as
// <split>_<Name> (valid_ll, test_rmse, baseline_test_ll).
type Metric struct {
	Name  string
	Value float64
}

// Array is a named parameter array of a RatingsModel after the blocks.
type Array struct {
	Name string `json:"name"` // file stem: item_bias, bin_bias, ...
	Len  int    `json:"len"`
}

// ArraysLen is the total length of arrays.
func ArraysLen(arrays []Array) int {
	var n int
	for _, a := range arrays {
		n += a.Len
	}
	return n
}
