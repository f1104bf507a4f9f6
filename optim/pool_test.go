package optim

import (
	"strings"
	"sync/atomic"
	"testing"
)

type chunkRecorder struct {
	hits []atomic.Int32
	los  []int
	his  []int
}

func (r *chunkRecorder) fn(c, lo, hi int) {
	r.hits[c].Add(1)
	r.los[c], r.his[c] = lo, hi
}

func TestPoolChunks(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 3, 8} {
		p := NewPool(workers)
		for _, tc := range []struct{ n, chunk int }{{1, 1}, {10, 3}, {10, 10}, {10, 0}, {100, 7}, {5, 100}} {
			nc := NumChunks(tc.n, tc.chunk)
			r := &chunkRecorder{hits: make([]atomic.Int32, nc), los: make([]int, nc), his: make([]int, nc)}
			p.Chunks(tc.n, tc.chunk, r.fn)
			next := 0
			for c := 0; c < nc; c++ {
				if r.hits[c].Load() != 1 {
					t.Fatalf("workers %d n %d chunk %d: chunk %d ran %d times", workers, tc.n, tc.chunk, c, r.hits[c].Load())
				}
				if r.los[c] != next || r.his[c] <= r.los[c] {
					t.Fatalf("workers %d n %d chunk %d: chunk %d = [%d,%d), want start %d", workers, tc.n, tc.chunk, c, r.los[c], r.his[c], next)
				}
				next = r.his[c]
			}
			if next != tc.n {
				t.Fatalf("workers %d n %d chunk %d: chunks end at %d", workers, tc.n, tc.chunk, next)
			}
		}
		p.Close()
		p.Chunks(3, 1, func(c, lo, hi int) {}) // closed pool runs inline
	}
	var nilPool *Pool
	sum := 0
	nilPool.Chunks(10, 3, func(c, lo, hi int) { sum += hi - lo })
	if sum != 10 {
		t.Fatalf("nil pool covered %d of 10", sum)
	}
}

func TestPoolNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	p := NewPool(3)
	defer p.Close()
	r := &chunkRecorder{hits: make([]atomic.Int32, 100), los: make([]int, 100), his: make([]int, 100)}
	fn := r.fn
	allocs := testing.AllocsPerRun(100, func() { p.Chunks(100, 1, fn) })
	if allocs != 0 {
		t.Fatalf("Chunks allocates %v times per call", allocs)
	}
}

func TestPoolPanic(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "boom") {
			t.Fatalf("recovered %v, want the chunk's panic", r)
		}
		// The pool still works after a panic.
		var n atomic.Int32
		p.Chunks(10, 1, func(c, lo, hi int) { n.Add(1) })
		if n.Load() != 10 {
			t.Fatalf("after panic: %d chunks ran", n.Load())
		}
	}()
	p.Chunks(10, 1, func(c, lo, hi int) {
		if c == 7 {
			panic("boom")
		}
	})
}
