package optim

import (
	"fmt"
	"sync"
	"unsafe"
)

// Chunking of the fused pass. Both depend only on the problem's shape, never
// on the number of workers, so the pass is bit-identical at any worker count.
const (
	// chainSpan is the number of entries of every Z_t that one chunk covers
	// on a chain coupling (or none): the chunk walks t = 0..T-1 over the same
	// span, so the neighbours t-1 and t+1 of an entry are still in cache.
	chainSpan = 8192
	// generalBytes bounds the bytes of x and grad one chunk touches on a
	// coupling that is not a chain; the chunk adds the psi gradient of every
	// edge over its span, then updates its span of every Z_t from cache.
	generalBytes = 1 << 18
	// outsideChunk is the chunk size over entries outside the blocks.
	outsideChunk = 1 << 14
)

// fused is the dense part of a training step in one parallel pass over the
// parameter vector: after the local loss has written its gradient into grad,
// every chunk adds the local L2 term and the coupling gradient to its entries,
// sums psi and ||Z||^2 over them, applies the Method's update and zeroes its
// entries of grad for the next step's local loss (the buffer's cache lines are
// loaded anyway; no separate clear). The gradient that reaches the Method is,
// entry by entry, the same floating-point expression as adding L2 z, then
// AddPsiGrad (edges in order), then calling Step; only the order in
// which psi and ||Z||^2 are summed differs.
//
// F is the element type of x, the gradient and the optimizer state; psi and
// ||Z||^2 are summed in float64 whatever F (the AVX kernels, for float64
// only, give the bits of the Go loops).
type fused[F Float] struct {
	pool   *Pool
	method MethodOf[F]
	rows   *AdaGrad            // the method, when it updates a row in chainRow's pass (float64 chain chunks); nil: chainRow, then Update
	rows32 *AdaGradOf[float32] // the same in the float32 mode
	b      Blocks
	l2     float64
	chain  []float64 // edge weights t -- t+1 of a chain coupling; nil: not a chain
	edges  []Edge    // a coupling that is not a chain; nil otherwise
	span   int       // entries of each Z_t per block chunk
	nb     int       // block chunks
	outLen int       // entries outside the blocks
	nOut   int       // chunks over them

	psiPart, regPart []float64
	x, grad          []F
	fn               func(c, lo, hi int)

	mu   sync.Mutex
	free [][]F // chain scratch (2 chainSpan each), one per running chunk
}

// scratch returns a chain scratch buffer; its contents never influence results.
func (f *fused[F]) scratch() []F {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.free); n > 0 {
		s := f.free[n-1]
		f.free = f.free[:n-1]
		return s
	}
	return make([]F, 2*chainSpan)
}

func (f *fused[F]) release(s []F) {
	f.mu.Lock()
	f.free = append(f.free, s)
	f.mu.Unlock()
}

// newFused prepares the pass for a vector of n entries. graph may be nil.
func newFused[F Float](pool *Pool, m MethodOf[F], b Blocks, g *Graph, l2 float64, n int) *fused[F] {
	f := &fused[F]{pool: pool, method: m, b: b, l2: l2, span: chainSpan}
	f.rows, _ = any(m).(*AdaGrad) // a concrete type: acc does not escape
	f.rows32, _ = any(m).(*AdaGradOf[float32])
	if g != nil {
		checkGraph(b, g)
		isChain := len(g.Edges) == b.T-1
		for k, e := range g.Edges {
			isChain = isChain && e.S == k && e.T == k+1
		}
		if isChain {
			f.chain = make([]float64, len(g.Edges))
			for k, e := range g.Edges {
				f.chain[k] = e.W
			}
		} else {
			f.edges = append([]Edge(nil), g.Edges...)
			f.span = max(64, generalBytes/(16*max(b.T, 1)))
		}
	}
	if b.T > 0 {
		f.nb = NumChunks(b.N*b.D, f.span)
	}
	f.outLen = n - b.Len()
	f.nOut = NumChunks(f.outLen, outsideChunk)
	f.psiPart = make([]float64, f.nb)
	f.regPart = make([]float64, f.nb)
	f.fn = f.chunk
	if f.chain != nil || g == nil {
		for range pool.Workers() { // one per worker; more only after a Resize
			f.free = append(f.free, make([]F, 2*chainSpan))
		}
	}
	return f
}

// step runs the pass for step s on x and grad (which holds the local
// gradient) and returns psi and the L2 term l2/2 ||Z||^2 at x before the
// update. It leaves grad all zero.
func (f *fused[F]) step(x, grad []F, s int) (psi, reg float64) {
	if len(x) != f.b.Len()+f.outLen || len(grad) != len(x) {
		panic(fmt.Sprintf("optim: fused step on len(x)=%d len(grad)=%d, prepared for %d", len(x), len(grad), f.b.Len()+f.outLen))
	}
	f.method.Begin(s)
	f.x, f.grad = x, grad
	f.pool.Chunks(f.nb+f.nOut, 1, f.fn)
	f.x, f.grad = nil, nil
	for c := range f.psiPart {
		psi += f.psiPart[c]
		reg += f.regPart[c]
	}
	return psi, 0.5 * f.l2 * reg
}

func (f *fused[F]) chunk(c, _, _ int) {
	switch {
	case c >= f.nb:
		f.outsideChunk(c - f.nb)
	case f.edges != nil:
		f.generalChunk(c)
	default:
		f.chainChunk(c)
	}
}

// outsideChunk updates chunk k of the entries outside the blocks: those
// before Offset, then those after the blocks.
func (f *fused[F]) outsideChunk(k int) {
	lo := k * outsideChunk
	hi := min(lo+outsideChunk, f.outLen)
	off, end := f.b.Offset, f.b.Offset+f.b.Len()
	if lo < off {
		h := min(hi, off)
		f.method.Update(f.x[lo:h], f.grad[lo:h], lo)
		clear(f.grad[lo:h])
		lo = h
	}
	if lo < hi {
		a, e := lo-off+end, hi-off+end
		f.method.Update(f.x[a:e], f.grad[a:e], a)
		clear(f.grad[a:e])
	}
}

// chainChunk handles entries [lo, hi) of every Z_t on a chain coupling (or
// none), walking t upwards: the full gradient of row t needs the old z_{t-1}
// (kept in prev, since row t-1 is already updated) and the old z_{t+1}. One
// loop per row (chainRow) builds the gradient in gb, keeps z_t in prev and
// zeroes g_t; then the Method updates the row from gb. AdaGrad does both in
// one loop (adagradChainRow), so every array of the row is read once.
func (f *fused[F]) chainChunk(c int) {
	b := f.b
	S := b.N * b.D
	lo := c * f.span
	L := min(lo+f.span, S) - lo
	buf := f.scratch()
	defer f.release(buf)
	prev, gb := buf[:L:L], buf[chainSpan:chainSpan+L:chainSpan+L]
	x, grad := f.x, f.grad
	var acc [8]float64 // lanes of psi's sum (0-3) and of ||Z||^2 (4-7)
	var psi float64
	for t := 0; t < b.T; t++ {
		o := b.Offset + t*S + lo
		z := x[o : o+L : o+L]
		// Neutral terms for a missing neighbour: prev = z and zn = z give
		// exact zeros.
		var wl, wr F
		p, zn := prev, z
		if t == 0 || f.chain == nil {
			p = z
		} else {
			wl = F(f.chain[t-1])
		}
		if t+1 < b.T && f.chain != nil {
			wr = F(f.chain[t])
			zn = x[o+S : o+S+L : o+S+L]
		}
		acc[0], acc[1], acc[2], acc[3] = 0, 0, 0, 0
		ahead := 0 // the next row's gradient and z_{t+2}, for the prefetches
		if t+1 < b.T {
			ahead = int(unsafe.Sizeof(z[0])) * S
		}
		if f.rows32 != nil {
			a, _ := as32(z)
			bgb, _ := as32(gb)
			bg, _ := as32(grad[o : o+L : o+L])
			bp, _ := as32(p)
			bprev, _ := as32(prev)
			bzn, _ := as32(zn)
			adagradChainRow32(f.rows32, bgb, bg, a, bp, bprev, bzn, float32(f.l2), float32(wl), float32(wr), &acc, ahead, o)
		} else if f.rows != nil {
			a, _ := as64(z)
			bgb, _ := as64(gb)
			bg, _ := as64(grad[o : o+L : o+L])
			bp, _ := as64(p)
			bprev, _ := as64(prev)
			bzn, _ := as64(zn)
			adagradChainRow(f.rows, bgb, bg, a, bp, bprev, bzn, f.l2, float64(wl), float64(wr), &acc, ahead, o)
		} else {
			chainRow(gb, grad[o:o+L:o+L], z, p, prev, zn, F(f.l2), wl, wr, wr != 0, &acc, ahead)
			f.method.Update(z, gb, o)
		}
		psi += float64(0.5 * float64(wr) * ((acc[0] + acc[1]) + (acc[2] + acc[3])))
	}
	f.psiPart[c] = psi
	f.regPart[c] = (acc[4] + acc[5]) + (acc[6] + acc[7])
}

// chainRow computes, for every i, with lane = i%4,
//
//	gi := g[i] + l2*z[i]; acc[4+lane] += z[i]*z[i]
//	gi -= wl*(p[i]-z[i])
//	d := z[i]-zn[i]; acc[lane] += d*d
//	gb[i] = gi + wr*d; prev[i] = z[i]; g[i] = 0
//
// (the terms in AddPsiGrad's order), on AVX four entries at a time; the
// lanes make the sums the same on both paths. p is prev, or z for a row
// without a left neighbour; keep says that the next row needs prev. The AVX
// kernel prefetches g and zn ahead bytes further (the next row's; 0: none),
// which changes no result.
func chainRow[F Float](gb, g, z, p, prev, zn []F, l2, wl, wr F, keep bool, acc *[8]float64, ahead int) {
	n := len(z)
	gb, g, p, prev, zn = gb[:n], g[:n], p[:n], prev[:n], zn[:n]
	i := 0
	if k := n &^ 3; useAVX && k > 0 {
		if z64, ok := as64(z); ok {
			gb64, _ := as64(gb)
			g64, _ := as64(g)
			p64, _ := as64(p)
			zn64, _ := as64(zn)
			// With p == z (no left neighbour) prev is written with z as
			// well, which is what the row after this one needs.
			chainRowAVX(&gb64[0], &g64[0], &z64[0], &p64[0], &zn64[0], k, float64(l2), float64(wl), float64(wr), acc, ahead)
			if keep && &p[0] != &prev[0] { // the kernel stored z into p
				copy(prev[:k], z[:k])
			}
			i = k
		}
	}
	for ; i < n; i++ {
		zi := z[i]
		gi := g[i] + F(l2*zi)
		z64 := float64(zi)
		acc[4+i&3] += float64(z64 * z64)
		gi -= F(wl * (p[i] - zi))
		d := zi - zn[i]
		d64 := float64(d)
		acc[i&3] += float64(d64 * d64)
		gb[i] = gi + F(wr*d)
		prev[i], g[i] = zi, 0
	}
}

// addScaledNorm adds alpha z to g and returns ||z||^2 (summed in float64).
func addScaledNorm[F Float](g []F, alpha F, z []F) float64 {
	g = g[:len(z)]
	var s float64
	for i, zi := range z {
		z64 := float64(zi)
		s += float64(z64 * z64)
		g[i] += F(alpha * zi)
	}
	return s
}

// generalChunk handles entries [lo, hi) of every Z_t on a coupling that is not
// a chain: the L2 term for every t, the psi gradient edge by edge (as
// AddPsiGrad), then the update of every t from cache.
func (f *fused[F]) generalChunk(c int) {
	b := f.b
	S := b.N * b.D
	lo := c * f.span
	L := min(lo+f.span, S) - lo
	x, grad, l2 := f.x, f.grad, F(f.l2)
	row := func(v []F, t int) []F {
		o := b.Offset + t*S + lo
		return v[o : o+L : o+L]
	}
	var psi, reg float64
	if l2 != 0 {
		for t := 0; t < b.T; t++ {
			reg += addScaledNorm(row(grad, t), l2, row(x, t))
		}
	}
	for _, e := range f.edges {
		zs, zt := row(x, e.S), row(x, e.T)
		gs, gt := row(grad, e.S), row(grad, e.T)
		var s float64
		w := F(e.W)
		for i, v := range zs {
			d := v - zt[i]
			d64 := float64(d)
			s += float64(d64 * d64)
			gs[i] += F(w * d)
			gt[i] -= F(w * d)
		}
		psi += float64(0.5 * e.W * s)
	}
	for t := 0; t < b.T; t++ {
		g := row(grad, t)
		f.method.Update(row(x, t), g, b.Offset+t*S+lo)
		clear(g)
	}
	f.psiPart[c], f.regPart[c] = psi, reg
}
