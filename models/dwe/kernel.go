package dwe

import (
	"math"

	"goldstone/optim"
)

// DefaultTile is the default side of the (word, context) tiles the dense
// likelihood is computed in. 64 keeps the tile in L1/L2.
const DefaultTile = 64

// sparseRows is a CSR view of positive counts: the entries of local row r
// are col[ptr[r]:ptr[r+1]] with values val[...]. ptr holds absolute
// positions into col and val, so a row range of a larger CSR matrix is just
// a sub-slice of its ptr. Columns are sorted within each row.
type sparseRows struct {
	ptr []int
	col []int32
	val []float64
}

// negLogLik returns scale times the negative log-likelihood of the dynamic
// skip-gram model restricted to rows [0,m) of u (m x d, row-major: row i is
// the word vector u_i) and rows [0,n) of v (n x d, the context vectors):
//
//	-sum_ij [ n+_ij log sig(x_ij) + a_i b_j log sig(-x_ij) ],  x_ij = u_i . v_j
//
// where sp gives n+ (column indices in [0,n), shifted by col0: local column
// is col-col0). If gu != nil it adds scale times the gradient with respect to
// u into gu (m x d) and with respect to v into gv (n x d).
//
// The V x V pair matrix is never stored: it is computed tile by tile (tb x tb
// entries in tile, which needs len >= tb*tb; with len >= tileScratchLen(tb,
// n, d) the rest holds the contexts' packed panel, else one is allocated)
// and consumed at once. cur needs len >= tb. Work is O(m n d); the result
// does not depend on anything but the inputs (fixed summation order). The
// tile products run on optim.GemmNTPacked (the contexts packed once per
// call by optim.PackNT) and optim.GemmAcc (AVX2/FMA and
// AVX-512 micro-kernels where the CPU has them, else their pure-Go
// versions, with the same results).
func negLogLik(gu, gv, u, v, a, b []float64, m, n, d int, sp sparseRows, col0 int32, scale float64, tb int, tile []float64, cur []int) float64 {
	// The contexts packed for GemmNTPacked: all of v once (the tiles' column
	// groups of 8 line up with PackNT's when tb is a multiple of 8), else
	// each context block when it is used.
	packAll := tb%8 == 0
	var vp []float64
	if len(tile) >= tileScratchLen(tb, n, d) {
		vp = tile[tb*tb:]
	} else {
		vp = make([]float64, tileScratchLen(tb, n, d)-tb*tb)
	}
	if packAll {
		optim.PackNT(vp, v, n, d)
	}
	var loss float64
	for i0 := 0; i0 < m; i0 += tb {
		i1 := min(i0+tb, m)
		mi := i1 - i0
		for r := 0; r < mi; r++ {
			cur[r] = sp.ptr[i0+r]
		}
		ub := u[i0*d : i1*d]
		for j0 := 0; j0 < n; j0 += tb {
			j1 := min(j0+tb, n)
			nj := j1 - j0
			vb := v[j0*d : j1*d]
			x := tile[:mi*nj]
			if packAll {
				optim.GemmNTPacked(x, ub, vb, vp[(j0/8)*32*(d/4):], mi, nj, d)
			} else {
				optim.PackNT(vp, vb, nj, d)
				optim.GemmNTPacked(x, ub, vb, vp, mi, nj, d)
			}
			bj := b[j0:j1]
			for r := 0; r < mi; r++ {
				row := x[r*nj : (r+1)*nj]
				pos := tilePositives{sp: sp, k: cur[r], kend: sp.ptr[i0+r+1], lo: int32(j0) + col0, hi: int32(j1) + col0}
				if useElemAVX2 {
					loss = elemRowAVX2(row, bj, a[i0+r], scale, &pos, loss)
				} else {
					loss = elemRowGo(row, bj, a[i0+r], scale, &pos, loss)
				}
				cur[r] = pos.k
			}
			if gu != nil {
				optim.GemmAcc(gu[i0*d:i1*d], d, x, nj, 1, vb, d, mi, d, nj) // gu += x v
				optim.GemmAcc(gv[j0*d:j1*d], d, x, 1, nj, ub, d, nj, d, mi) // gv += x^T u
			}
		}
	}
	return scale * loss
}

// tileBuf returns buf resized to tileScratchLen(tb, n, d), reallocated if
// its capacity is short (the contents are scratch).
func tileBuf(buf []float64, tb, n, d int) []float64 {
	l := tileScratchLen(tb, n, d)
	if cap(buf) < l {
		return make([]float64, l)
	}
	return buf[:l]
}

// tileScratchLen is the length of negLogLik's tile buffer at tile side tb,
// n contexts and dimension d: the tb x tb tile and the contexts packed by
// optim.PackNT (all n, or one block of tb).
func tileScratchLen(tb, n, d int) int {
	return tb*tb + max(optim.PackNTLen(n, d), optim.PackNTLen(tb, d))
}

// Coefficients of the logarithm of FreeBSD's e_log.c (as in Go's math.Log).
const (
	ln2Hi = 6.93147180369123816490e-01
	ln2Lo = 1.90821492927058770002e-10
	lg1   = 6.666666666666735130e-01
	lg2   = 3.999999999940941908e-01
	lg3   = 2.857142874366239149e-01
	lg4   = 2.222219843214978396e-01
	lg5   = 1.818357216161805012e-01
	lg6   = 1.531383769920937332e-01
	lg7   = 1.479819860511658591e-01
)

// log1pUnit returns log(1+e) for e in [0, 1], given inv = 1/(1+e) (the
// kernel has it anyway). It is math.Log's reduction and polynomial
// specialised to 1+e in [1, 2] (no Frexp, no special cases), plus the
// first-order correction (e - ((1+e)-1))/(1+e) for the rounding of 1+e, as
// in fdlibm's log1p: within a few ulp of math.Log1p and about twice as fast.
func log1pUnit(e, inv float64) float64 {
	y := 1 + e
	c := float64((e - (y - 1)) * inv)
	f, k := y-1, 0.0
	if y >= math.Sqrt2 {
		f, k = float64(0.5*y)-1, 1
	}
	s := f / (2 + f)
	s2 := s * s
	s4 := s2 * s2
	t1 := float64(s2 * (lg1 + float64(s4*(lg3+float64(s4*(lg5+float64(s4*lg7)))))))
	t2 := float64(s4 * (lg2 + float64(s4*(lg4+float64(s4*lg6)))))
	r := t1 + t2
	hfsq := float64(0.5 * f * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(k*ln2Lo))) - f) + c
}

// expNeg returns exp(-a) for a >= 0 (a NaN gives NaN): a = n ln2 + r with
// |r| <= ln2/2, exp(-r) by its Taylor polynomial of degree 13 (truncation
// below 1e-17), scaled by 2^-n. Within a few ulp of optim.Exp(-a); arguments
// past 700, where 2^-n leaves the normal range, go to math.Exp.
func expNeg(a float64) float64 {
	if !(a <= 700) {
		return optim.Exp(-a)
	}
	n := math.Floor(float64(a*math.Log2E) + 0.5)
	r := (float64(n*ln2Hi) - a) + float64(n*ln2Lo) // -(a - n ln2), in [-ln2/2, ln2/2]
	p := 1.0 / 6227020800
	p = float64(p*r) + 1.0/479001600
	p = float64(p*r) + 1.0/39916800
	p = float64(p*r) + 1.0/3628800
	p = float64(p*r) + 1.0/362880
	p = float64(p*r) + 1.0/40320
	p = float64(p*r) + 1.0/5040
	p = float64(p*r) + 1.0/720
	p = float64(p*r) + 1.0/120
	p = float64(p*r) + 1.0/24
	p = float64(p*r) + 1.0/6
	p = float64(p*r) + 0.5
	p = float64(p*r) + 1
	p = float64(p*r) + 1
	return p * math.Float64frombits(uint64(1023-int64(n))<<52)
}

// tilePositives walks the positive counts of one row of a tile: entries
// sp.col[k:kend] with columns in [lo, hi) (column c is the tile's entry
// c-lo).
type tilePositives struct {
	sp      sparseRows
	k, kend int
	lo, hi  int32
}

// next returns the tile column of the current positive entry, or -1 if the
// row has none left in the tile.
func (p *tilePositives) next() int {
	if p.k < p.kend && p.sp.col[p.k] < p.hi {
		return int(p.sp.col[p.k] - p.lo)
	}
	return -1
}

// advance moves past the current positive entry and returns next().
func (p *tilePositives) advance() int {
	p.k++
	return p.next()
}

// elemRowGo is the element-wise work of negLogLik on one row of a tile: it
// adds the row's loss terms to loss in column order (the negative term of
// each entry, then its positive term if it has one) and returns the sum,
// and sets row[jj] to scale times dl/dx of each entry.
func elemRowGo(row, bj []float64, ai, scale float64, pos *tilePositives, loss float64) float64 {
	next := pos.next()
	for jj, xv := range row {
		// e = exp(-|x|), inv = 1/(1+e) and l1 = log(1+e) as in
		// log1pUnit, inlined, with one division for both 1/(1+e)
		// and the logarithm's 1/(2+f).
		e := expNeg(math.Abs(xv))
		y := 1 + e
		// kl = 1 when y >= sqrt(2) (then f = y/2 - 1), else 0; set
		// through an integer so that it compiles to a conditional
		// move: which way it goes is unpredictable.
		ki := 0
		if y >= math.Sqrt2 {
			ki = 1
		}
		kl := float64(ki)
		f := float64(y*(1-float64(0.5*kl))) - 1
		q := 1 / (y * (2 + f))
		inv := (2 + f) * q
		s := f * (y * q)
		s2 := s * s
		s4 := s2 * s2
		r := float64(s2*(lg1+float64(s4*(lg3+float64(s4*(lg5+float64(s4*lg7))))))) + float64(s4*(lg2+float64(s4*(lg4+float64(s4*lg6)))))
		hfsq := float64(0.5 * f * f)
		l1 := float64(kl*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(kl*ln2Lo))) - f) + float64((e-(y-1))*inv)
		// sig(x), sig(-x), softplus(x), softplus(-x), without branches
		// on the sign of x.
		ei := e * inv
		pi := 0
		if xv >= 0 {
			pi = 1
		}
		pf := float64(pi) // exact selections: v*1 + w*0 = v
		sig, sigm := float64(pf*inv)+float64((1-pf)*ei), float64((1-pf)*inv)+float64(pf*ei)
		spp, spm := l1+max(xv, 0), l1+max(-xv, 0)
		w := ai * bj[jj]
		loss += float64(w * spp) // -a b log sig(-x)
		g := float64(w * sig)
		if jj == next {
			p := pos.sp.val[pos.k]
			loss += float64(p * spm) // -n+ log sig(x)
			g -= float64(p * sigm)
			next = pos.advance()
		}
		row[jj] = g * scale
	}
	return loss
}

// elemChunk is the number of entries elemRowAVX2 hands to the assembly at a
// time (its buffers live on the stack).
const elemChunk = 64

// elemRowAVX2 is elemRowGo with the element-wise maths on elem_amd64.s, 4
// entries at a time, or on elem512_amd64.s, 8 at a time where the CPU has
// AVX-512, by the same IEEE operations (the same bits): the assembly
// returns each entry's negative loss term and its scaled gradient without
// the positive count (AVX-512: and the sum of the terms before the first
// positive count); the loss is summed in the same order as elemRowGo, and the few entries with a positive count and the last
// len(row) mod 4 (8) go to elemRowGo one by one. A chunk with an argument
// outside expNeg's fast range (|x| > 700 or NaN) goes to elemRowGo whole.
func elemRowAVX2(row, bj []float64, ai, scale float64, pos *tilePositives, loss float64) float64 {
	var lt, gs [elemChunk]float64
	for c0 := 0; c0 < len(row); c0 += elemChunk {
		c1 := min(c0+elemChunk, len(row))
		xr, br := row[c0:c1], bj[c0:c1]
		nv, ok, jj := len(xr)&^3, true, 0
		next := pos.next() - c0
		if useElemAVX512 {
			// The assembly sums the loss terms of the groups of 8
			// before the first positive count.
			nv = len(xr) &^ 7
			nsum := nv / 8
			if next >= 0 && next < nv {
				nsum = next / 8
			}
			if nv > 0 {
				var l float64
				if l, ok = elemAVX512(&xr[0], &br[0], &lt[0], &gs[0], nv, ai, scale, loss, nsum); ok {
					loss, jj = l, 8*nsum
					copy(xr[:jj], gs[:jj])
				}
			}
		} else if nv > 0 {
			ok = elemAVX2(&xr[0], &br[0], &lt[0], &gs[0], nv, ai, scale)
		}
		if !ok {
			sub := *pos
			sub.lo += int32(c0)
			sub.hi = sub.lo + int32(len(xr))
			loss = elemRowGo(xr, br, ai, scale, &sub, loss)
			pos.k = sub.k
			continue
		}
		if jj == 0 && (next < 0 || next >= nv) { // no positive count among the vector's entries
			for _, l := range lt[:nv] {
				loss += l
			}
			copy(xr[:nv], gs[:nv])
			jj = nv
		}
		for ; jj < len(xr); jj++ {
			if jj < nv && jj != next {
				loss += lt[jj]
				xr[jj] = gs[jj]
				continue
			}
			one := *pos
			one.lo += int32(c0 + jj)
			one.hi = one.lo + 1
			loss = elemRowGo(xr[jj:jj+1], br[jj:jj+1], ai, scale, &one, loss)
			if jj == next {
				pos.k = one.k
				next = pos.next() - c0
			}
		}
	}
	return loss
}
