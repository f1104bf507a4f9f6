package optim

import "math"

// Small dense kernels on row-major []float64 matrices. They never allocate
// and never start goroutines, so callers control parallelism and results do
// not depend on it.

// ovCols is the number of columns per packed panel in overlap.
const ovCols = 64

// padD returns d rounded up to a multiple of 4, the width of the kernels'
// padded panels.
func padD(d int) int { return (d + 3) &^ 3 }

// scratchLen returns the scratch length overlap and rotate need for blocks of
// dimension d.
func scratchLen(d int) int {
	dp := padD(d)
	return max(dp*dp+2*ovCols*dp, d*dp+rotRows*dp+4*d)
}

// overlap sets the d x d matrix m = Z_s Z_t^T = sum_i z_{s,i} z_{t,i}^T for
// blocks stored column by column (zs, zt are n x d row-major) and, in the same
// pass over the blocks, returns dist = 1/2 ||Z_s - Z_t||^2, ss = ||Z_s||^2 and
// st = ||Z_t||^2 (each summed in a fixed order: even and odd entries
// separately). buf must hold scratchLen(d) values.
//
// The columns are copied, ovCols at a time, into two row-major panels in buf,
// padded with zeros to padD(d) columns, while the sums are taken, and m is
// accumulated from the panels by GemmAcc (FMA micro-kernels) in a padded
// d x d block of buf: every entry of m is one fused multiply-add chain over
// the columns in order. The panel order is fixed, so the result depends only
// on the inputs.
func overlap(m, zs, zt []float64, n, d int, buf []float64) (dist, ss, st float64) {
	return overlapK(m, zs, zt, n, d, buf)
}

// overlapK is overlap on the FMA kernels.
func overlapK(m, zs, zt []float64, n, d int, buf []float64) (dist, ss, st float64) {
	dp := padD(d)
	m = m[:d*d]
	zs, zt = zs[:n*d], zt[:n*d]
	acc := buf[:dp*dp]
	as := buf[dp*dp : dp*dp+ovCols*dp]
	bs := buf[dp*dp+ovCols*dp : dp*dp+2*ovCols*dp]
	clear(acc)
	clear(as) // the padding columns stay zero
	clear(bs)
	var d0, d1, s0, s1, t0, t1 float64
	for lo := 0; lo < n; lo += ovCols {
		c := min(ovCols, n-lo)
		a := zs[lo*d : (lo+c)*d]
		b := zt[lo*d : (lo+c)*d]
		for i := 0; i < c; i++ {
			ra := a[i*d : (i+1)*d]
			rb := b[i*d : (i+1)*d][:len(ra)]
			pa := as[i*dp : i*dp+len(ra)]
			pb := bs[i*dp : i*dp+len(ra)]
			j := 0
			for ; j+1 < len(ra); j += 2 {
				v, w := ra[j], rb[j]
				pa[j], pb[j] = v, w
				e := v - w
				d0 += float64(e * e)
				s0 += float64(v * v)
				t0 += float64(w * w)
				v, w = ra[j+1], rb[j+1]
				pa[j+1], pb[j+1] = v, w
				e = v - w
				d1 += float64(e * e)
				s1 += float64(v * v)
				t1 += float64(w * w)
			}
			if j < len(ra) {
				v, w := ra[j], rb[j]
				pa[j], pb[j] = v, w
				e := v - w
				d0 += float64(e * e)
				s0 += float64(v * v)
				t0 += float64(w * w)
			}
		}
		// acc(i, j) += sum_p as(p, i) bs(p, j): A = as^T (aOut 1, aRed dp).
		GemmAcc(acc, dp, as, 1, dp, bs, dp, dp, dp, c)
	}
	for i := 0; i < d; i++ {
		copy(m[i*d:(i+1)*d], acc[i*dp:i*dp+d])
	}
	dist, ss, st = d0+d1, s0+s1, t0+t1
	return 0.5 * dist, ss, st
}

// halfSqDist returns 1/2 ||a - b||^2.
func halfSqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		e := v - b[i]
		s += float64(e * e)
	}
	return 0.5 * s
}

// rotRows is the number of columns of Z_t rotated per GemmAcc call.
const rotRows = 64

// rotate sets Z <- R Z for the d x n block z (n x d row-major, so Z^T <- Z^T R^T).
// buf must hold scratchLen(d) values.
//
// The rows of Z^T R^T are accumulated by GemmAcc (FMA micro-kernels) against
// R^T padded to padD(d) columns, the last n mod 4 rows through a zero-padded
// copy, so every entry is one fused multiply-add chain in the same order
// wherever its row lies.
func rotate(z []float64, n, d int, r, buf []float64) {
	rotateK(z, n, d, r, buf)
}

// rotateK is rotate on the FMA kernels.
func rotateK(z []float64, n, d int, r, buf []float64) {
	dp := padD(d)
	z, r = z[:n*d], r[:d*d]
	rt := buf[:d*dp] // rt(p, j) = R(j, p), zero for j >= d
	out := buf[d*dp : d*dp+rotRows*dp]
	tail := buf[d*dp+rotRows*dp : d*dp+rotRows*dp+4*d]
	for p := 0; p < d; p++ {
		row := rt[p*dp : (p+1)*dp]
		for j := 0; j < d; j++ {
			row[j] = r[j*d+p]
		}
		clear(row[d:])
	}
	for i := 0; i < n; i += rotRows {
		rows := min(rotRows, n-i)
		full := rows &^ 3
		zi := z[i*d : (i+rows)*d]
		clear(out[:full*dp])
		GemmAcc(out, dp, zi, d, 1, rt, dp, full, dp, d)
		if full < rows { // full+4 <= rotRows
			clear(out[full*dp : (full+4)*dp])
			clear(tail)
			copy(tail, zi[full*d:])
			GemmAcc(out[full*dp:], dp, tail, d, 1, rt, dp, 4, dp, d)
		}
		for k := 0; k < rows; k++ {
			copy(zi[k*d:(k+1)*d], out[k*dp:k*dp+d])
		}
	}
}

// setIdentity sets the d x d matrix a to I.
func setIdentity(a []float64, d int) {
	clear(a[:d*d])
	for i := 0; i < d; i++ {
		a[i*d+i] = 1
	}
}

// expm sets dst = exp(a) for the d x d matrix a by scaling and squaring with
// a Taylor series: a is scaled by 2^-s so that its 1-norm is at most 1/2, the
// series is summed until a term is below 1e-18 in every entry (at most 30
// terms), and the result is squared s times. The products run on gemm, so
// the result is the same bits on every build. work must hold 3*d*d values
// and must not overlap dst or a.
func expm(dst, a []float64, d int, work []float64) {
	dd := d * d
	var norm float64
	for j := 0; j < d; j++ {
		var s float64
		for i := 0; i < d; i++ {
			s += math.Abs(a[i*d+j])
		}
		norm = max(norm, s)
	}
	s := 0
	for norm > 0.5 && s < 1000 {
		norm /= 2
		s++
	}
	scale := math.Ldexp(1, -s)
	term, tmp, gw := work[:dd], work[dd:2*dd], work[2*dd:3*dd]
	setIdentity(dst, d)
	setIdentity(term, d)
	for k := 1; k <= 30; k++ {
		gemm(false, false, d, d, d, scale/float64(k), term, d, a, d, 0, tmp, d, gw)
		term, tmp = tmp, term
		var big float64
		for i, v := range term {
			dst[i] += v
			big = max(big, math.Abs(v))
		}
		if big <= 1e-18 {
			break
		}
	}
	for ; s > 0; s-- {
		gemm(false, false, d, d, d, 1, dst, d, dst, d, 0, tmp, d, nil)
		copy(dst[:dd], tmp)
	}
}

// detSign returns the sign (-1, 0 or +1) of det(a) for the d x d matrix a by
// Gaussian elimination with partial pivoting on work (d*d values).
func detSign(a []float64, d int, work []float64) float64 {
	w := work[:d*d]
	copy(w, a[:d*d])
	sign := 1.0
	for k := 0; k < d; k++ {
		p := k
		for i := k + 1; i < d; i++ {
			if math.Abs(w[i*d+k]) > math.Abs(w[p*d+k]) {
				p = i
			}
		}
		if w[p*d+k] == 0 {
			return 0
		}
		if p != k {
			for j := 0; j < d; j++ {
				w[k*d+j], w[p*d+j] = w[p*d+j], w[k*d+j]
			}
			sign = -sign
		}
		if w[k*d+k] < 0 {
			sign = -sign
		}
		for i := k + 1; i < d; i++ {
			f := w[i*d+k] / w[k*d+k]
			for j := k; j < d; j++ {
				w[i*d+j] -= float64(f * w[k*d+j])
			}
		}
	}
	return sign
}
