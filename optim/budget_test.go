package optim

import "testing"

// TestBudget: the open pools never hold more than the budget's workers; the
// cores of finished trials go to the running ones on Spread; a new trial
// takes workers back.
func TestBudget(t *testing.T) {
	b := NewBudget(4)
	check := func(want ...int) {
		t.Helper()
		if b.Workers() > 4 {
			t.Fatalf("budget of 4 has %d workers", b.Workers())
		}
		for i, p := range b.pools {
			if i < len(want) && p.Workers() != want[i] {
				t.Fatalf("pool %d has %d workers, want %v", i, p.Workers(), want)
			}
		}
		if len(b.pools) != len(want) {
			t.Fatalf("%d open pools, want %d", len(b.pools), len(want))
		}
	}
	p1, p2 := b.Pool(2), b.Pool(2)
	check(2, 2)
	p3 := b.Pool(2) // none free: takes one from the first largest pool
	check(1, 2, 1)
	b.Done(p2)
	check(1, 1)
	b.Spread()
	check(2, 2)
	b.Done(p1)
	b.Spread()
	check(4)
	p4 := b.Pool(3)
	check(2, 2)
	// Loops on the pools still cover every chunk.
	for _, p := range []*Pool{p3, p4} {
		n := 0
		p.Chunks(100, 7, func(c, lo, hi int) {})
		p.Chunks(1, 1, func(c, lo, hi int) { n++ })
		if n != 1 {
			t.Fatal("pool does not run")
		}
	}
	b.Done(p3)
	p4.Close() // closing a pool of the budget frees its workers too
	check()
	// Spread never reopens a pool closed behind the budget's back.
	p5, p6 := b.Pool(1), b.Pool(1)
	p5.Close()
	b.Spread()
	check(4)
	if p5.Workers() != 1 || !p5.isClosed() || p6.Workers() != 4 {
		t.Fatalf("after Spread: closed pool has %d workers (closed %v), open pool %d", p5.Workers(), p5.isClosed(), p6.Workers())
	}
	b.Done(p6)
	check()
	if p := NewBudget(0); p.total < 1 {
		t.Fatalf("default budget %d", p.total)
	}
}
