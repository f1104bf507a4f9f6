package dwe

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"goldstone/optim"
)

// scratch is one worker's buffers; the contents never influence results.
type scratch struct {
	tile           []float64
	cur            []int
	ub, vb, gu, gv []float64 // minibatch gathers
	a, b           []float64
	ptr            []int
	col            []int32
	val            []float64

	// the float32 mode (negLogLik32, step32)
	tile32, vt32           []float32
	ub32, vb32, gu32, gv32 []float32
	buf32                  gemm32Buf
	elem32                 elem32Buf
}

type scratchPool struct {
	mu   sync.Mutex
	free []*scratch
	tb   int
}

func (p *scratchPool) get() *scratch {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		return s
	}
	return &scratch{tile: make([]float64, p.tb*p.tb), cur: make([]int, p.tb)}
}

func (p *scratchPool) put(s *scratch) {
	p.mu.Lock()
	p.free = append(p.free, s)
	p.mu.Unlock()
}

// likelihood evaluates -sum_t loglik(counts_t | Z_t) and its gradient on a
// vector laid out as optim.Blocks{0, T, 2V, d}, exactly (dense, tiled) or on
// a minibatch of words x contexts shared by all steps, rescaled to be
// unbiased. Steps are independent and run in parallel, one chunk per step.
type likelihood struct {
	c    *Counts
	d    int
	tb   int
	par  *optim.Pool
	pool scratchPool

	words, ctxs []int   // sorted minibatch; nil = full batch
	ctxPos      []int32 // position of a context in ctxs, or -1
	scale       float64

	losses  []float64
	z, grad []float64
	fn      func(c, lo, hi int)

	z32, grad32 []float32 // the float32 mode's (eval32)
	fn32        func(c, lo, hi int)
}

func newLikelihood(c *Counts, d, tb int, pool *optim.Pool) *likelihood {
	if tb <= 0 {
		tb = DefaultTile
	}
	l := &likelihood{c: c, d: d, tb: tb, par: pool, scale: 1}
	l.pool.tb = tb
	l.losses = make([]float64, c.T())
	l.ctxPos = make([]int32, c.V)
	for j := range l.ctxPos {
		l.ctxPos[j] = -1
	}
	l.fn = func(_, lo, hi int) {
		for t := lo; t < hi; t++ {
			l.losses[t] = l.step(t)
		}
	}
	l.fn32 = func(_, lo, hi int) {
		for t := lo; t < hi; t++ {
			l.losses[t] = l.step32(t)
		}
	}
	return l
}

// setBatch selects the minibatch (sorted copies are kept); nil, nil or a
// batch covering the whole vocabulary selects the full batch.
func (l *likelihood) setBatch(words, ctxs []int) {
	for _, j := range l.ctxs {
		l.ctxPos[j] = -1
	}
	v := l.c.V
	if (words == nil && ctxs == nil) || (len(words) == v && len(ctxs) == v) {
		l.words, l.ctxs, l.scale = nil, nil, 1
		return
	}
	if len(words) == 0 || len(ctxs) == 0 {
		panic("dwe: empty minibatch")
	}
	l.words = append(l.words[:0], words...)
	l.ctxs = append(l.ctxs[:0], ctxs...)
	slices.Sort(l.words)
	slices.Sort(l.ctxs)
	for k, j := range l.ctxs {
		if j < 0 || j >= v || (k > 0 && l.ctxs[k-1] == j) {
			panic(fmt.Sprintf("dwe: bad or duplicate context %d in minibatch", j))
		}
		l.ctxPos[j] = int32(k)
	}
	for k, i := range l.words {
		if i < 0 || i >= v || (k > 0 && l.words[k-1] == i) {
			panic(fmt.Sprintf("dwe: bad or duplicate word %d in minibatch", i))
		}
	}
	l.scale = float64(v) / float64(len(l.words)) * float64(v) / float64(len(l.ctxs))
}

// sampleBatch draws a uniform minibatch of nw distinct words and nc distinct
// contexts (without replacement); nw <= 0 or nw >= V (and the same for nc)
// means all of them.
func (l *likelihood) sampleBatch(rng *rand.Rand, nw, nc int) {
	v := l.c.V
	if (nw <= 0 || nw >= v) && (nc <= 0 || nc >= v) {
		l.setBatch(nil, nil)
		return
	}
	w := sampleSubset(rng, v, nw)
	c := sampleSubset(rng, v, nc)
	l.setBatch(w, c)
}

// sampleSubset returns k distinct values of [0,n) (all of them if k<=0 or k>=n).
func sampleSubset(rng *rand.Rand, n, k int) []int {
	if k <= 0 || k >= n {
		k = n
	}
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := 0; i < k; i++ { // partial Fisher-Yates
		j := i + rng.IntN(n-i)
		p[i], p[j] = p[j], p[i]
	}
	return p[:k]
}

// eval returns the (estimated) negative log-likelihood at z and overwrites
// grad (same layout; nil: loss only) with its gradient.
func (l *likelihood) eval(grad, z []float64) float64 {
	l.z, l.grad = z, grad
	l.par.Chunks(l.c.T(), 1, l.fn)
	l.z, l.grad = nil, nil
	var s float64
	for _, v := range l.losses {
		s += v
	}
	return s
}

func (l *likelihood) step(t int) float64 {
	v, d := l.c.V, l.d
	n := 2 * v * d
	zt := l.z[t*n : (t+1)*n]
	u, c := zt[:v*d], zt[v*d:]
	var gu, gc []float64
	if l.grad != nil {
		gt := l.grad[t*n : (t+1)*n]
		clear(gt)
		gu, gc = gt[:v*d], gt[v*d:]
	}
	sc := &l.c.Steps[t]
	s := l.pool.get()
	defer l.pool.put(s)
	if l.words == nil {
		s.tile = tileBuf(s.tile, l.tb, v, d)
		return negLogLik(gu, gc, u, c, sc.NegA, sc.NegB, v, v, d,
			sparseRows{sc.rowPtr, sc.J, sc.Pos}, 0, 1, l.tb, s.tile, s.cur)
	}
	m, nc := len(l.words), len(l.ctxs)
	s.ub, s.vb = gatherRows(s.ub, u, l.words, d), gatherRows(s.vb, c, l.ctxs, d)
	l.gatherCounts(s, sc)
	var gub, gvb []float64
	if gu != nil {
		s.gu, s.gv = slices.Grow(s.gu[:0], m*d)[:m*d], slices.Grow(s.gv[:0], nc*d)[:nc*d]
		gub, gvb = s.gu, s.gv
		clear(gub)
		clear(gvb)
	}
	s.tile = tileBuf(s.tile, l.tb, nc, d)
	loss := negLogLik(gub, gvb, s.ub, s.vb, s.a, s.b, m, nc, d,
		sparseRows{s.ptr, s.col, s.val}, 0, l.scale, l.tb, s.tile, s.cur)
	if gu != nil {
		scatterRows(gu, gub, l.words, d)
		scatterRows(gc, gvb, l.ctxs, d)
	}
	return loss
}

// gatherCounts sets s.a, s.b (the minibatch's negative weights) and the CSR
// s.ptr, s.col, s.val of its positive counts (columns are positions in
// l.ctxs) from one step's counts.
func (l *likelihood) gatherCounts(s *scratch, sc *StepCounts) {
	m, nc := len(l.words), len(l.ctxs)
	s.a, s.b = slices.Grow(s.a[:0], m)[:m], slices.Grow(s.b[:0], nc)[:nc]
	for r, i := range l.words {
		s.a[r] = sc.NegA[i]
	}
	for r, j := range l.ctxs {
		s.b[r] = sc.NegB[j]
	}
	if cap(s.ptr) < m+1 {
		s.ptr = make([]int, m+1)
	}
	s.ptr = s.ptr[:m+1]
	s.col, s.val = s.col[:0], s.val[:0]
	for r, i := range l.words {
		for k := sc.rowPtr[i]; k < sc.rowPtr[i+1]; k++ {
			if p := l.ctxPos[sc.J[k]]; p >= 0 {
				s.col = append(s.col, p)
				s.val = append(s.val, sc.Pos[k])
			}
		}
		s.ptr[r+1] = len(s.col)
	}
}

// evalChunkRows is the chunk size (in words) of StepNegLogLik.
const evalChunkRows = 256

// StepNegLogLik returns the exact negative log-likelihood
// -sum_ij [n+_ij log sig(u_i.v_j) + n-_ij log sig(-u_i.v_j)] of one step's
// counts (sc must come from a validated Counts with vocabulary v) for word
// vectors u and context vectors c (each v x d, row i = vector of word i).
// Work O(v^2 d), split over fixed chunks of words on pool (nil: inline).
func StepNegLogLik(u, c []float64, sc *StepCounts, v, d int, pool *optim.Pool) float64 {
	if len(u) != v*d || len(c) != v*d {
		panic(fmt.Sprintf("dwe: len(u)=%d len(c)=%d, want %d", len(u), len(c), v*d))
	}
	if len(sc.rowPtr) != v+1 {
		panic("dwe: StepCounts not validated")
	}
	nc := optim.NumChunks(v, evalChunkRows)
	parts := make([]float64, nc)
	scr := scratchPool{tb: DefaultTile}
	pool.Chunks(v, evalChunkRows, func(ci, lo, hi int) {
		s := scr.get()
		defer scr.put(s)
		s.tile = tileBuf(s.tile, DefaultTile, v, d)
		parts[ci] = negLogLik(nil, nil, u[lo*d:hi*d], c, sc.NegA[lo:hi], sc.NegB, hi-lo, v, d,
			sparseRows{sc.rowPtr[lo : hi+1], sc.J, sc.Pos}, 0, 1, DefaultTile, s.tile, s.cur)
	})
	var sum float64
	for _, p := range parts {
		sum += p
	}
	return sum
}
