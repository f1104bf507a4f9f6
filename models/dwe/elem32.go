package dwe

import "math"

// The float32 mode's element-wise work (issue 33): e^-|x|, log(1+e^-|x|),
// the sigmoids and softplus of each float32 score in float32 arithmetic,
// a fixed sequence of correctly rounded float32 operations (separate
// multiplications and additions, no fused multiply-add: every build and
// CPU has them in hardware, so the Go twin needs no emulated FMA), 16 lanes
// at a time on AVX-512 and 8 on AVX2 (elem32_amd64.s) and the same
// operations in the same order in Go (sigSoftplus32, elemRow32Go). The
// loss terms and dl/dx are then formed in float64 as in the float64 mode:
// each term is the float64 weight a_i b_j (or n+) times the float32 value
// widened (exact), summed in column order; dl/dx = float32((a_i b_j sig(x)
// - n+ sig(-x)) scale), one rounding.
//
// e^-a (a = |x|, clamped to 104, where e^-a is below half the smallest
// float32 subnormal): Cephes' expf, a = n ln2 - r with n = floor(a log2 e +
// 1/2) and r = (n C1 - a) + n C2 (C1 = 0.693359375 has 9 bits, so n C1 is
// exact for n <= 150), e^r = 1 + r + r^2 p(r) (p of degree 5), scaled by
// 2^-n as two exact powers of two 2^-(n/2) and 2^-(n - n/2) (a subnormal
// result is rounded once, by the second product). log(1+e): fdlibm's logf
// on y = 1+e in [1, 2] (f = y-1 or y/2-1, s = f/(2+f), the polynomial
// Lg1..Lg4 in s^2) plus the correction (e - (y-1))/y for the rounding of
// 1+e, with one division for both 1/y and 1/(2+f), as elemRowGo does in
// float64. Their errors against float64 over a dense sweep are measured
// and bounded in TestElem32Accuracy.

// Constants of the float32 element-wise work (elem32_amd64.s holds the
// same bits in its dwe32_* tables).
const (
	expMax32 float32 = 104
	log2e32  float32 = 1.44269504088896341
	expC1    float32 = 0.693359375
	expC2    float32 = -2.12194440e-4
	ex5      float32 = 1.9875691500e-4
	ex4      float32 = 1.3981999507e-3
	ex3      float32 = 8.3334519073e-3
	ex2      float32 = 4.1665795894e-2
	ex1      float32 = 1.6666665459e-1
	ex0      float32 = 5.0000001201e-1
	sqrt2f32 float32 = 1.41421356237309504880
	lg1f32   float32 = 0.66666662693
	lg2f32   float32 = 0.40000972152
	lg3f32   float32 = 0.28498786688
	lg4f32   float32 = 0.24279078841
	ln2Hi32  float32 = 6.9313812256e-01
	ln2Lo32  float32 = 9.0580006145e-06
)

// expNeg32 returns e^-a in float32 for a >= 0 (a NaN gives NaN; a >= 104,
// +Inf included, gives 0), within 1.5 ulp (TestElem32Accuracy).
func expNeg32(a float32) float32 {
	if !(a < expMax32) {
		if a != a {
			return a
		}
		a = expMax32
	}
	ni := int32(float32(a*log2e32) + 0.5) // truncation = floor: the argument is >= 0.5
	nf := float32(ni)
	r := (float32(nf*expC1) - a) + float32(nf*expC2) // n ln2 - a, in about [-ln2/2, ln2/2]
	z := float32(r * r)
	p := float32(ex5*r) + ex4
	p = float32(p*r) + ex3
	p = float32(p*r) + ex2
	p = float32(p*r) + ex1
	p = float32(p*r) + ex0
	y := (float32(p*z) + r) + 1
	n1 := ni >> 1
	s1 := math.Float32frombits(uint32(127-n1) << 23)
	s2 := math.Float32frombits(uint32(127-(ni-n1)) << 23)
	return float32(y*s1) * s2
}

// sigSoftplus32 returns sig(x), sig(-x), softplus(x) = log(1+e^x) and
// softplus(-x) in float32: e = e^-|x|, l1 = log(1+e), then the exact
// selections by the sign of x (sig(x) = 1/(1+e) for x >= 0, e/(1+e)
// below; softplus(x) = l1 + max(x, 0)). A NaN x gives NaNs.
func sigSoftplus32(xv float32) (sig, sigm, spp, spm float32) {
	e := expNeg32(math.Float32frombits(math.Float32bits(xv) &^ (1 << 31)))
	y := 1 + e
	m, kl := float32(1), float32(0)
	if y >= sqrt2f32 {
		m, kl = 0.5, 1
	}
	f := float32(y*m) - 1
	d := 2 + f
	q := 1 / float32(y*d)
	inv := float32(d * q)          // 1/y
	s := float32(f * float32(y*q)) // f/(2+f)
	z := float32(s * s)
	w := float32(z * z)
	t1 := float32(w * (float32(w*lg4f32) + lg2f32))
	t2 := float32(z * (float32(w*lg3f32) + lg1f32))
	r := t2 + t1
	hfsq := float32(float32(0.5*f) * f)
	l1 := float32(kl*ln2Hi32) - ((hfsq - (float32(s*(hfsq+r)) + float32(kl*ln2Lo32))) - f)
	l1 += float32((e - (y - 1)) * inv)
	ei := float32(e * inv)
	xp, xm := float32(0), float32(0) // max(x, 0), max(-x, 0)
	if xv > 0 {
		xp = xv
	}
	if -xv > 0 {
		xm = -xv
	}
	if xv >= 0 {
		sig, sigm = inv, ei
	} else {
		sig, sigm = ei, inv
	}
	if xv != xv {
		sig, sigm = xv, xv
	}
	return sig, sigm, l1 + xp, l1 + xm
}

// elemRow32Go is the float32 mode's element-wise work on one row xr of a
// float32 tile in Go: it adds the row's loss terms to loss in column order
// (each entry's negative term, then its positive term if it has one) and
// sets xr[jj] to scale times dl/dx of each entry, rounded to float32.
func elemRow32Go(xr []float32, bj []float64, ai, scale float64, pos *tilePositives, loss float64) float64 {
	next := pos.next()
	for jj, xv := range xr {
		sig, sigm, spp, spm := sigSoftplus32(xv)
		w := ai * bj[jj]
		loss += float64(w * float64(spp)) // -a b log sig(-x)
		g := float64(w * float64(sig))
		if jj == next {
			p := pos.sp.val[pos.k]
			loss += float64(p * float64(spm)) // -n+ log sig(x)
			g -= float64(p * float64(sigm))
			next = pos.advance()
		}
		xr[jj] = float32(g * scale)
	}
	return loss
}

// elem32Buf is elemRow32's scratch (its contents never influence results).
type elem32Buf struct {
	lt [elemChunk]float64
	gs [elemChunk]float32
}

// elemRow32 is elemRow32Go with the groups of 16 entries on
// elem32AVX512x16 where the CPU has AVX-512, else the groups of 8 on
// elem32AVX2x8 where it has AVX2 (the same operations: the same bits): the
// assembly returns each entry's negative loss term and its scaled dl/dx
// without the positive count, and the sum of the terms before the first
// positive count (and their dl/dx in place); the rest of the loss is
// summed here in column order, and the entries with a positive count and
// the last len mod 16 (8) go to elemRow32Go one by one. A chunk with a NaN
// score goes to elemRow32Go whole.
func elemRow32(xr []float32, bj []float64, ai, scale float64, pos *tilePositives, loss float64, buf *elem32Buf) float64 {
	if !useElem32AVX2 {
		return elemRow32Go(xr, bj, ai, scale, pos, loss)
	}
	grp := 8
	if useElem32AVX512 {
		grp = 16
	}
	lt, gs := &buf.lt, &buf.gs
	for c0 := 0; c0 < len(xr); c0 += elemChunk {
		c1 := min(c0+elemChunk, len(xr))
		x, br := xr[c0:c1], bj[c0:c1]
		nv, jj, ok := len(x)/grp*grp, 0, true
		next := pos.next() - c0
		nsum := nv / grp // the groups before the first positive count
		if next >= 0 && next < nv {
			nsum = next / grp
		}
		if nv > 0 {
			var l float64
			if grp == 16 {
				l, ok = elem32AVX512x16(&x[0], &br[0], &lt[0], &gs[0], nv, ai, scale, loss, nsum)
			} else {
				l, ok = elem32AVX2x8(&x[0], &br[0], &lt[0], &gs[0], nv, ai, scale, loss, nsum)
			}
			if ok {
				loss, jj = l, grp*nsum // x[:jj] holds their dl/dx
			}
		}
		if !ok { // a NaN score: the chunk in Go
			sub := *pos
			sub.lo += int32(c0)
			sub.hi = sub.lo + int32(len(x))
			loss = elemRow32Go(x, br, ai, scale, &sub, loss)
			pos.k = sub.k
			continue
		}
		for ; jj < len(x); jj++ {
			if jj < nv && jj != next {
				loss += lt[jj]
				x[jj] = gs[jj]
				continue
			}
			one := *pos
			one.lo += int32(c0 + jj)
			one.hi = one.lo + 1
			loss = elemRow32Go(x[jj:jj+1], br[jj:jj+1], ai, scale, &one, loss)
			if jj == next {
				pos.k = one.k
				next = pos.next() - c0
			}
		}
	}
	return loss
}
