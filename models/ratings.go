package models

import (
	"fmt"
	"math"
)

// Ratings is a set of ratings stored as a struct of arrays: rating k is
// given by user User[k] to item Item[k] in time bin T[k]. Its label is the
// binary X[k] in {+1, -1} (binarized ratings, LogisticMF) or the explicit
// rating Value[k] (GaussianMF); a set may hold either or both (an absent
// column is nil). Users and items are dense indices 0..Users-1 and
// 0..Items-1.
type Ratings struct {
	T, User, Item []int32
	X             []int8
	Value         []float32
}

// Labels says which label of the ratings a model reads.
type Labels int

const (
	// Binary labels: X, +1 above the median rating and -1 below (the
	// paper's binarization; ratings at the median are dropped).
	Binary Labels = iota
	// Explicit ratings: Value, as rated.
	Explicit
)

func (l Labels) String() string {
	switch l {
	case Binary:
		return "binary"
	case Explicit:
		return "explicit"
	}
	return fmt.Sprintf("Labels(%d)", int(l))
}

// Len is the number of ratings.
func (r *Ratings) Len() int { return len(r.T) }

// Append adds one rating with binary label x.
func (r *Ratings) Append(t, user, item int32, x int8) {
	r.T = append(r.T, t)
	r.User = append(r.User, user)
	r.Item = append(r.Item, item)
	r.X = append(r.X, x)
}

// AppendValue adds one explicit rating v.
func (r *Ratings) AppendValue(t, user, item int32, v float32) {
	r.T = append(r.T, t)
	r.User = append(r.User, user)
	r.Item = append(r.Item, item)
	r.Value = append(r.Value, v)
}

// Validate checks the array lengths (X and Value: Len() entries or none),
// that every index is in range for the given numbers of bins, users and
// items, that every x is +1 or -1 and every value finite.
func (r *Ratings) Validate(bins, users, items int) error {
	n := len(r.T)
	if len(r.User) != n || len(r.Item) != n {
		return fmt.Errorf("ratings: lengths T=%d User=%d Item=%d differ", n, len(r.User), len(r.Item))
	}
	if r.X != nil && len(r.X) != n || r.Value != nil && len(r.Value) != n {
		return fmt.Errorf("ratings: %d ratings but %d binary labels and %d values", n, len(r.X), len(r.Value))
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("ratings: %d ratings, at most %d supported", n, math.MaxInt32)
	}
	for k := 0; k < n; k++ {
		switch {
		case r.T[k] < 0 || int(r.T[k]) >= bins:
			return fmt.Errorf("ratings: rating %d: bin %d out of range [0,%d)", k, r.T[k], bins)
		case r.User[k] < 0 || int(r.User[k]) >= users:
			return fmt.Errorf("ratings: rating %d: user %d out of range [0,%d)", k, r.User[k], users)
		case r.Item[k] < 0 || int(r.Item[k]) >= items:
			return fmt.Errorf("ratings: rating %d: item %d out of range [0,%d)", k, r.Item[k], items)
		case r.X != nil && r.X[k] != 1 && r.X[k] != -1:
			return fmt.Errorf("ratings: rating %d: x = %d, want +1 or -1", k, r.X[k])
		case r.Value != nil && (math.IsNaN(float64(r.Value[k])) || math.IsInf(float64(r.Value[k]), 0)):
			return fmt.Errorf("ratings: rating %d: value %v, want a finite number", k, r.Value[k])
		}
	}
	return nil
}

// Has reports whether the ratings carry labels l (an empty set carries any).
func (r *Ratings) Has(l Labels) bool {
	if r.Len() == 0 {
		return true
	}
	switch l {
	case Binary:
		return len(r.X) == r.Len()
	case Explicit:
		return len(r.Value) == r.Len()
	}
	return false
}
