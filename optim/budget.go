package optim

import (
	"runtime"
	"sync"
)

// Budget shares a fixed number of cores among the pools of the trials that
// run at the same time (a sweep): the workers of all its open pools never
// add up to more than its total. When a trial ends, Done frees its workers;
// when no trial is waiting to start, Spread hands the free workers to the
// trials still running, so the last trials of a sweep, or a single trial,
// get every core. Resizing never changes results (the chunking of every
// parallel loop is fixed), so a Budget keeps runs bit-identical.
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

// used is the number of workers of the open pools.
func (b *Budget) used() int {
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
		for need := n - (b.total - b.used()); need > 0; need-- {
			big := b.pools[0]
			for _, p := range b.pools[1:] {
				if p.Workers() > big.Workers() {
					big = p
				}
			}
			if big.Workers() <= 1 {
				break // every pool is down to one worker
			}
			big.Resize(big.Workers() - 1)
		}
	}
	p := NewPool(n)
	b.pools = append(b.pools, p)
	return p
}

// Done closes p, a pool of b, and frees its workers.
func (b *Budget) Done(p *Pool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, q := range b.pools {
		if q == p {
			b.pools = append(b.pools[:i], b.pools[i+1:]...)
			break
		}
	}
	p.Close()
}

// Spread hands the free workers to the open pools, one at a time in the order
// the pools were made.
func (b *Budget) Spread() {
	b.mu.Lock()
	defer b.mu.Unlock()
	free := b.total - b.used()
	for i := 0; free > 0 && len(b.pools) > 0; i, free = i+1, free-1 {
		p := b.pools[i%len(b.pools)]
		p.Resize(p.Workers() + 1)
	}
}

// Workers returns the number of workers of the open pools of b.
func (b *Budget) Workers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used()
}
