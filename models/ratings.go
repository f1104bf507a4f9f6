package models

import (
	"fmt"
	"math"
)

// Ratings is a set of binary ratings stored as a struct of arrays: rating k
// is x = X[k] in {+1, -1} given by user User[k] to item Item[k] in time bin
// T[k]. Users and items are dense indices 0..Users-1 and 0..Items-1.
type Ratings struct {
	T, User, Item []int32
	X             []int8
}

// Len is the number of ratings.
func (r *Ratings) Len() int { return len(r.X) }

// Append adds one rating.
func (r *Ratings) Append(t, user, item int32, x int8) {
	r.T = append(r.T, t)
	r.User = append(r.User, user)
	r.Item = append(r.Item, item)
	r.X = append(r.X, x)
}

// Validate checks the array lengths, that every index is in range for the
// given numbers of bins, users and items, and that every x is +1 or -1.
func (r *Ratings) Validate(bins, users, items int) error {
	n := len(r.X)
	if len(r.T) != n || len(r.User) != n || len(r.Item) != n {
		return fmt.Errorf("ratings: lengths T=%d User=%d Item=%d X=%d differ", len(r.T), len(r.User), len(r.Item), n)
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
		case r.X[k] != 1 && r.X[k] != -1:
			return fmt.Errorf("ratings: rating %d: x = %d, want +1 or -1", k, r.X[k])
		}
	}
	return nil
}
