package optim

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Pool is the one parallel abstraction of optim and the packages built on it:
// a set of persistent worker goroutines that run fixed-chunk parallel loops.
// Code that can run in parallel takes a *Pool from its caller (a trial's core
// budget) and never builds one of its own. Which worker runs a chunk is decided at run time, but the chunking
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
	workers atomic.Int32
	closed  atomic.Bool     // Close was called (and no Resize since)
	start   []chan struct{} // one per helper goroutine (workers-1 of them)
	wg      sync.WaitGroup

	// The current job, written by Chunks before the start signals.
	fn       func(c, lo, hi int)
	n, chunk int
	nc       int64
	next     atomic.Int64
	panicked atomic.Bool
	panicErr *PanicError
}

// PanicError is what Chunks panics with on the calling goroutine when fn
// panicked in a chunk: the chunk's panic value and the stack of the goroutine
// that panicked, taken where it panicked.
type PanicError struct {
	Value any    // the value fn panicked with
	Chunk int    // the chunk index
	Stack []byte // stack trace of the panicking goroutine (runtime/debug.Stack)
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("optim: panic in parallel chunk %d: %v\n\n%s", e.Chunk, e.Value, e.Stack)
}

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// NewPool starts a pool with the given number of workers (the calling
// goroutine counts as one of them). workers <= 0 means runtime.GOMAXPROCS(0).
// Call Close to stop the workers; an unreachable Pool is closed automatically.
func NewPool(workers int) *Pool {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	st := &poolState{}
	st.resize(workers)
	p := &Pool{st: st}
	runtime.AddCleanup(p, func(st *poolState) { st.stop() }, st)
	return p
}

// Workers returns the number of workers, 1 for a nil Pool.
func (p *Pool) Workers() int {
	if p == nil || p.st == nil {
		return 1
	}
	return int(p.st.workers.Load())
}

// Resize sets the number of workers (<= 0: runtime.GOMAXPROCS(0)), starting
// or stopping helper goroutines. It waits for a running Chunks call to finish
// and may be called from any goroutine, for example by a scheduler that hands
// the cores of finished trials to the running ones. Results do not change:
// the chunking never depends on the number of workers. Resizing a closed
// Pool reopens it; a nil Pool ignores Resize.
func (p *Pool) Resize(workers int) {
	if p == nil {
		return
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.closed.Store(false)
	p.st.resize(workers)
}

// resizeOpen is Resize for a Budget: it leaves a closed Pool closed and
// reports whether p was open.
func (p *Pool) resizeOpen(workers int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isClosed() {
		return false
	}
	p.st.resize(max(workers, 1))
	return true
}

// isClosed reports whether Close was called on p (and no Resize since).
func (p *Pool) isClosed() bool { return p.st == nil || p.st.closed.Load() }

// resize starts or stops helpers so that there are workers-1 of them.
func (st *poolState) resize(workers int) {
	for len(st.start) > workers-1 {
		n := len(st.start) - 1
		close(st.start[n])
		st.start[n] = nil
		st.start = st.start[:n]
	}
	for len(st.start) < workers-1 {
		ch := make(chan struct{}, 1)
		st.start = append(st.start, ch)
		go st.worker(ch)
	}
	st.workers.Store(int32(max(workers, 1)))
}

// Close stops the workers. Chunks on a closed Pool runs inline.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st != nil {
		p.st.closed.Store(true)
		p.st.stop()
	}
}

func (st *poolState) stop() { st.resize(1) }

func (st *poolState) worker(start chan struct{}) {
	for range start {
		st.run()
		st.wg.Done()
	}
}

// run takes chunks until none are left.
func (st *poolState) run() {
	c := int64(-1)
	defer func() {
		if r := recover(); r != nil {
			if st.panicked.CompareAndSwap(false, true) {
				// debug.Stack in a deferred call still shows the frames that
				// panicked.
				st.panicErr = &PanicError{Value: r, Chunk: int(c), Stack: debug.Stack()}
			}
			st.next.Store(st.nc) // stop handing out chunks
		}
	}()
	for {
		c = st.next.Add(1) - 1
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
// re-raised on the calling goroutine as a *PanicError that carries the stack
// of the goroutine that panicked (inline runs panic as usual).
func (p *Pool) Chunks(n, chunk int, fn func(c, lo, hi int)) {
	if n <= 0 {
		return
	}
	if chunk <= 0 {
		chunk = n
	}
	nc := NumChunks(n, chunk)
	if p == nil || p.st == nil || p.st.workers.Load() <= 1 || nc == 1 {
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
		e := st.panicErr
		st.panicked.Store(false)
		st.panicErr = nil
		panic(e)
	}
}

// NumChunks is the number of chunks Chunks uses for n items in chunks of the
// given size (chunk <= 0: one chunk).
func NumChunks(n, chunk int) int {
	if n <= 0 {
		return 0
	}
	if chunk <= 0 {
		return 1
	}
	return (n + chunk - 1) / chunk
}
