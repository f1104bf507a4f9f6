package optim

import (
	"runtime"
	"slices"
	"sync"
)

// Budget shares a fixed number of cores among the pools of the trials that
// run at the same time (a sweep): the workers of all its open pools never
// add up to more than its total (unless more pools are open than it has
// cores: every pool keeps at least one worker). When a trial ends, closing
// its pool (Close or Done) frees its workers; when no trial is waiting to
// start, Spread hands the free workers to the trials still running, so the
// last trials of a sweep, or a single trial, get every core; a trial that
// starts later takes workers back from the largest pools. Resizing never
// changes results (the chunking of every parallel loop is fixed), so a
// Budget keeps runs bit-identical.
//
// A Budget is safe for concurrent use. Pool and Spread wait for a loop
// running on a pool they shrink or grow to finish (Pool.Resize).
type Budget struct {
	mu    sync.Mutex
	total int
	pools []*Pool // open pools, in the order they were made
}

// NewBudget returns a budget of total cores; total <= 0 means
// runtime.GOMAXPROCS(0).
func NewBudget(total int) *Budget {
	if total <= 0 {
		total = runtime.GOMAXPROCS(0)
	}
	return &Budget{total: total}
}

// used drops the pools closed since the last call and returns the number of
// workers of the open ones.
func (b *Budget) used() int {
	b.pools = slices.DeleteFunc(b.pools, (*Pool).isClosed)
	n := 0
	for _, p := range b.pools {
		n += p.Workers()
	}
	return n
}

// Pool returns a new pool with want workers (want <= 0: one), or as many as
// the budget has free. When none is free it takes workers from the largest
// open pools (first made first) so that the new pool gets its share of
// total/(open pools + 1), and at least one.
func (b *Budget) Pool(want int) *Pool {
	b.mu.Lock()
	defer b.mu.Unlock()
	want = max(want, 1)
	n := min(want, b.total-b.used())
	if n < 1 {
		n = min(want, max(1, b.total/(len(b.pools)+1)))
		for b.total-b.used() < n {
			var big *Pool
			for _, p := range b.pools {
				if big == nil || p.Workers() > big.Workers() {
					big = p
				}
			}
			if big == nil || big.Workers() <= 1 {
				break // every pool is down to one worker
			}
			big.resizeOpen(big.Workers() - 1) // closed meanwhile: used drops it
		}
	}
	p := NewPool(n)
	b.pools = append(b.pools, p)
	return p
}

// Done closes p, a pool of b, and frees its workers (p.Close does the same).
func (b *Budget) Done(p *Pool) {
	p.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used()
}

// Spread hands the free workers to the open pools, one at a time in the order
// the pools were made.
func (b *Budget) Spread() {
	b.mu.Lock()
	defer b.mu.Unlock()
	free := b.total - b.used()
	open := slices.Clone(b.pools)
	for i := 0; free > 0 && len(open) > 0; {
		p := open[i%len(open)]
		if !p.resizeOpen(p.Workers() + 1) {
			open = slices.Delete(open, i%len(open), i%len(open)+1) // closed meanwhile
			continue
		}
		i++
		free--
	}
}

// Workers returns the number of workers of the open pools of b.
func (b *Budget) Workers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used()
}
