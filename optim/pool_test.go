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
		pe, ok := r.(*PanicError)
		if !ok || pe.Value != "boom" || pe.Chunk != 7 {
			t.Fatalf("recovered %#v, want a *PanicError with the chunk's panic", r)
		}
		// The stack is the worker's, taken where it panicked.
		if !strings.Contains(string(pe.Stack), "panicInChunk") || !strings.Contains(pe.Error(), "boom") {
			t.Fatalf("panic stack lost:\n%s", pe.Error())
		}
		// The pool still works after a panic.
		var n atomic.Int32
		p.Chunks(10, 1, func(c, lo, hi int) { n.Add(1) })
		if n.Load() != 10 {
			t.Fatalf("after panic: %d chunks ran", n.Load())
		}
	}()
	p.Chunks(10, 1, panicInChunk)
}

func panicInChunk(c, lo, hi int) {
	if c == 7 {
		panic("boom")
	}
}

// TestPoolResize grows, shrinks, closes and reopens a pool between loops: the
// loops always cover every chunk once and the worker count follows.
func TestPoolResize(t *testing.T) {
	p := NewPool(1)
	defer p.Close()
	for _, w := range []int{3, 2, 5, 1, 4} {
		p.Resize(w)
		if p.Workers() != w {
			t.Fatalf("Resize(%d): Workers() = %d", w, p.Workers())
		}
		var n atomic.Int32
		p.Chunks(50, 3, func(c, lo, hi int) { n.Add(int32(hi - lo)) })
		if n.Load() != 50 {
			t.Fatalf("%d workers: covered %d of 50", w, n.Load())
		}
	}
	p.Close()
	if p.Workers() != 1 {
		t.Fatalf("closed pool has %d workers", p.Workers())
	}
	p.Resize(2)
	if p.Workers() != 2 {
		t.Fatalf("reopened pool has %d workers", p.Workers())
	}
	var nilPool *Pool
	nilPool.Resize(4)
	if nilPool.Workers() != 1 {
		t.Fatal("nil pool resized")
	}
}
