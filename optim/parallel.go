package optim

import "sync"

// Chunks splits [0, n) into consecutive chunks of size chunk (the last may be
// shorter) and calls fn(c, lo, hi) for each chunk index c, using up to workers
// goroutines. The chunking depends only on n and chunk, never on workers, so a
// caller that writes per-chunk partial results and reduces them in chunk order
// gets bit-identical results at any worker count. workers <= 1 runs inline.
func Chunks(n, chunk, workers int, fn func(c, lo, hi int)) {
	if n <= 0 {
		return
	}
	if chunk <= 0 {
		chunk = n
	}
	nc := NumChunks(n, chunk)
	if workers <= 1 || nc == 1 {
		for c := 0; c < nc; c++ {
			lo := c * chunk
			fn(c, lo, min(lo+chunk, n))
		}
		return
	}
	workers = min(workers, nc)
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			defer wg.Done()
			// Static round-robin assignment: which goroutine runs a chunk never
			// affects its result.
			for c := w; c < nc; c += workers {
				lo := c * chunk
				fn(c, lo, min(lo+chunk, n))
			}
		}(w)
	}
	wg.Wait()
}

// NumChunks is the number of chunks Chunks uses for n items of the given size.
func NumChunks(n, chunk int) int {
	if n <= 0 {
		return 0
	}
	if chunk <= 0 {
		return 1
	}
	return (n + chunk - 1) / chunk
}
