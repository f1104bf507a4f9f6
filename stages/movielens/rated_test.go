package movielens

import (
	"testing"

	"goldstone/models"
	"goldstone/optim"
)

func TestRatedPairs(t *testing.T) {
	// 2 bins, 2 users, 3 items: N = 5 vectors per bin, items after users.
	b := optim.Blocks{T: 2, N: 5, D: 1}
	r := &models.Ratings{}
	for range 3 {
		r.Append(0, 1, 2, 1) // user 1 and item 2 in bin 0: 3 ratings each
	}
	r.Append(1, 0, 0, -1) // user 0, item 0 in bin 1: 1 rating
	r.Append(1, 1, 0, 1)  // user 1, item 0 in bin 1: item 0 has 2
	keep := RatedPairs(r, b, 2, 2)
	want := []bool{
		false, true, false, false, true, // bin 0: users 0, 1; items 0, 1, 2
		false, false, true, false, false, // bin 1
	}
	for c := range want {
		if keep[c] != want[c] {
			t.Errorf("vector %d (bin %d, entity %d): kept %v, want %v", c, c/b.N, c%b.N, keep[c], want[c])
		}
	}
}
