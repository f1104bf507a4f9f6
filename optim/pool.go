package optim

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Pool is a set of persistent worker goroutines that run fixed-chunk parallel
// loops. Which worker runs a chunk is decided at run time, but the chunking
// itself depends only on (n, chunk), so a loop whose chunks write disjoint
// outputs, or per-chunk partials reduced in chunk order, gives bit-identical
// results at any worker count.
//
// A nil *Pool, or one with at most one worker, runs every loop inline on the
// calling goroutine. A Pool is safe for use by several goroutines (calls are
// serialised) but is not reentrant: fn must not call Chunks on the same Pool.
type Pool struct {
	mu sync.Mutex // serialises Chunks calls
	st *poolState
}

// poolState is what the worker goroutines see. It does not point back at the
// Pool, so an unreachable Pool can be cleaned up and its workers stopped.
type poolState struct {
	workers int
	start   []chan struct{} // one per helper goroutine (workers-1 of them)
	wg      sync.WaitGroup

	// The current job, written by Chunks before the start signals.
	fn       func(c, lo, hi int)
	n, chunk int
	nc       int64
	next     atomic.Int64
	panicked atomic.Bool
	panicVal any
}

// NewPool starts a pool with the given number of workers (the calling
// goroutine counts as one of them). workers <= 0 means runtime.GOMAXPROCS(0).
// Call Close to stop the workers; an unreachable Pool is closed automatically.
func NewPool(workers int) *Pool {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	st := &poolState{workers: workers}
	if workers > 1 {
		st.start = make([]chan struct{}, workers-1)
		for i := range st.start {
			ch := make(chan struct{}, 1)
			st.start[i] = ch
			go st.worker(ch)
		}
	}
	p := &Pool{st: st}
	runtime.AddCleanup(p, func(st *poolState) { st.stop() }, st)
	return p
}

// Workers returns the number of workers, 1 for a nil Pool.
func (p *Pool) Workers() int {
	if p == nil || p.st == nil {
		return 1
	}
	return p.st.workers
}

// Close stops the workers. Chunks on a closed Pool runs inline.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st != nil {
		p.st.stop()
		p.st.workers = 1
	}
}

func (st *poolState) stop() {
	for _, ch := range st.start {
		close(ch)
	}
	st.start = nil
}

func (st *poolState) worker(start chan struct{}) {
	for range start {
		st.run()
		st.wg.Done()
	}
}

// run takes chunks until none are left.
func (st *poolState) run() {
	defer func() {
		if r := recover(); r != nil {
			if st.panicked.CompareAndSwap(false, true) {
				st.panicVal = r
			}
			st.next.Store(st.nc) // stop handing out chunks
		}
	}()
	for {
		c := st.next.Add(1) - 1
		if c >= st.nc {
			return
		}
		lo := int(c) * st.chunk
		st.fn(int(c), lo, min(lo+st.chunk, st.n))
	}
}

// Chunks splits [0, n) into consecutive chunks of size chunk (the last may be
// shorter; chunk <= 0 means a single chunk) and calls fn(c, lo, hi) once for
// every chunk index c, in parallel on the pool's workers. It returns when all
// chunks are done. It does not allocate when fn is a func value created
// beforehand (for example a method value stored in a struct field); a func
// literal that captures variables allocates at the call site. A panic in fn is
// re-raised on the calling goroutine.
func (p *Pool) Chunks(n, chunk int, fn func(c, lo, hi int)) {
	if n <= 0 {
		return
	}
	if chunk <= 0 {
		chunk = n
	}
	nc := NumChunks(n, chunk)
	if p == nil || p.st == nil || p.st.workers <= 1 || nc == 1 {
		for c := 0; c < nc; c++ {
			lo := c * chunk
			fn(c, lo, min(lo+chunk, n))
		}
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.st
	if len(st.start) == 0 { // closed
		for c := 0; c < nc; c++ {
			lo := c * chunk
			fn(c, lo, min(lo+chunk, n))
		}
		return
	}
	st.fn, st.n, st.chunk, st.nc = fn, n, chunk, int64(nc)
	st.next.Store(0)
	helpers := min(len(st.start), nc-1)
	st.wg.Add(helpers)
	for _, ch := range st.start[:helpers] {
		ch <- struct{}{}
	}
	st.run()
	st.wg.Wait()
	st.fn = nil
	if st.panicked.Load() {
		v := st.panicVal
		st.panicked.Store(false)
		st.panicVal = nil
		panic(fmt.Sprintf("optim: panic in parallel chunk: %v", v))
	}
}

func defaultWorkers() int { return runtime.GOMAXPROCS(0) }
