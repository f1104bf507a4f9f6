package optim

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// Small dense kernels on row-major []float64 matrices. They never allocate
// and never start goroutines, so callers control parallelism and results do
// not depend on it.

var blasImpl gonum.Implementation

// gemmTile is the largest tile handed to gonum's Dgemm; at most 64x64 output
// tiles keep gonum on its serial, allocation-free path.
const gemmTile = 64

// gemm computes C = alpha op(A) op(B) + beta C, where op(A) is m x k and
// op(B) is k x n, serially.
func gemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if tA {
		ta = blas.Trans
	}
	if tB {
		tb = blas.Trans
	}
	for i0 := 0; i0 < m; i0 += gemmTile {
		mi := min(gemmTile, m-i0)
		as := a[i0*lda:]
		if tA {
			as = a[i0:]
		}
		for j0 := 0; j0 < n; j0 += gemmTile {
			nj := min(gemmTile, n-j0)
			bs := b[j0:]
			if tB {
				bs = b[j0*ldb:]
			}
			blasImpl.Dgemm(ta, tb, mi, nj, k, alpha, as, lda, bs, ldb, beta, c[i0*ldc+j0:], ldc)
		}
	}
}

// ovRows is the number of columns of Z per pass of the overlap tiles: two
// 64-column panels of d <= 30 floats stay in L1 while every tile reads them.
const ovRows = 64

// overlap sets the d x d matrix m = Z_s Z_t^T = sum_i z_{s,i} z_{t,i}^T for
// blocks stored column by column (zs, zt are n x d row-major). It sums the
// columns in panels of ovRows, accumulating each 2x4 tile of m in registers,
// so the result depends only on n and d.
func overlap(m, zs, zt []float64, n, d int) {
	m = m[:d*d]
	clear(m)
	zs, zt = zs[:n*d], zt[:n*d]
	for lo := 0; lo < n*d; lo += ovRows * d {
		hi := min(n*d, lo+ovRows*d)
		a := 0
		for ; a+2 <= d; a += 2 {
			b := 0
			for ; b+4 <= d; b += 4 {
				ovTile24(m, zs[lo:hi], zt[lo:hi], a, b, d)
			}
			for ; b < d; b++ {
				ovTile21(m, zs[lo:hi], zt[lo:hi], a, b, d)
			}
		}
		if a < d {
			for b := 0; b < d; b++ {
				ovTile11(m, zs[lo:hi], zt[lo:hi], a, b, d)
			}
		}
	}
}

// ovTile24 adds sum_i zs[i,a:a+2]^T zt[i,b:b+4] to m[a:a+2, b:b+4].
func ovTile24(m, zs, zt []float64, a, b, d int) {
	var c00, c01, c02, c03, c10, c11, c12, c13 float64
	for p := 0; p < len(zs); p += d {
		s := zs[p+a:][:2]
		t := zt[p+b:][:4]
		s0, s1 := s[0], s[1]
		t0, t1, t2, t3 := t[0], t[1], t[2], t[3]
		c00 = math.FMA(s0, t0, c00)
		c01 = math.FMA(s0, t1, c01)
		c02 = math.FMA(s0, t2, c02)
		c03 = math.FMA(s0, t3, c03)
		c10 = math.FMA(s1, t0, c10)
		c11 = math.FMA(s1, t1, c11)
		c12 = math.FMA(s1, t2, c12)
		c13 = math.FMA(s1, t3, c13)
	}
	m0 := m[a*d+b:][:4]
	m0[0] += c00
	m0[1] += c01
	m0[2] += c02
	m0[3] += c03
	m1 := m[(a+1)*d+b:][:4]
	m1[0] += c10
	m1[1] += c11
	m1[2] += c12
	m1[3] += c13
}

// ovTile21 adds sum_i zs[i,a:a+2]^T zt[i,b] to m[a:a+2, b].
func ovTile21(m, zs, zt []float64, a, b, d int) {
	var c0, c1 float64
	for p := 0; p < len(zs); p += d {
		s := zs[p+a:][:2]
		t := zt[p+b]
		c0 += s[0] * t
		c1 += s[1] * t
	}
	m[a*d+b] += c0
	m[(a+1)*d+b] += c1
}

// ovTile11 adds sum_i zs[i,a] zt[i,b] to m[a,b].
func ovTile11(m, zs, zt []float64, a, b, d int) {
	var c float64
	for p := 0; p < len(zs); p += d {
		c += zs[p+a] * zt[p+b]
	}
	m[a*d+b] += c
}

// halfSqDist returns 1/2 ||a - b||^2.
func halfSqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		e := v - b[i]
		s += e * e
	}
	return 0.5 * s
}

// rotRows is the number of columns of Z_t rotated into buf before being
// copied back.
const rotRows = 64

// rotate sets Z <- R Z for the d x n block z (n x d row-major, so each column
// z_i <- R z_i). Pairs of columns are multiplied by four rows of R at a time
// with the sums held in registers. buf must hold rotRows*d values.
func rotate(z []float64, n, d int, r, buf []float64) {
	r = r[:d*d]
	for lo := 0; lo < n; lo += rotRows {
		rows := min(rotRows, n-lo)
		zc := z[lo*d : (lo+rows)*d]
		out := buf[:rows*d]
		i := 0
		for ; i+2 <= rows; i += 2 {
			rotPair(out[i*d:(i+2)*d], zc[i*d:(i+2)*d], r, d)
		}
		if i < rows {
			rotOne(out[i*d:(i+1)*d], zc[i*d:(i+1)*d], r, d)
		}
		copy(zc, out)
	}
}

// rotPair sets dst[k*d:(k+1)*d] = R z[k*d:(k+1)*d] for k = 0, 1.
func rotPair(dst, z, r []float64, d int) {
	x := z[:d]
	y := z[d : 2*d]
	dx := dst[:d]
	dy := dst[d : 2*d]
	a := 0
	for ; a+4 <= d; a += 4 {
		r0 := r[a*d : (a+1)*d]
		r1 := r[(a+1)*d : (a+2)*d][:len(r0)]
		r2 := r[(a+2)*d : (a+3)*d][:len(r0)]
		r3 := r[(a+3)*d : (a+4)*d][:len(r0)]
		x := x[:len(r0)]
		y := y[:len(r0)]
		var c00, c01, c02, c03, c10, c11, c12, c13 float64
		for b, v := range r0 {
			xb, yb := x[b], y[b]
			c00 += v * xb
			c10 += v * yb
			v = r1[b]
			c01 += v * xb
			c11 += v * yb
			v = r2[b]
			c02 += v * xb
			c12 += v * yb
			v = r3[b]
			c03 += v * xb
			c13 += v * yb
		}
		ox := dx[a : a+4]
		ox[0], ox[1], ox[2], ox[3] = c00, c01, c02, c03
		oy := dy[a : a+4]
		oy[0], oy[1], oy[2], oy[3] = c10, c11, c12, c13
	}
	for ; a < d; a++ {
		ra := r[a*d : (a+1)*d]
		x := x[:len(ra)]
		y := y[:len(ra)]
		var c0, c1 float64
		for b, v := range ra {
			c0 += v * x[b]
			c1 += v * y[b]
		}
		dx[a], dy[a] = c0, c1
	}
}

// rotOne sets dst = R z for one column z of length d.
func rotOne(dst, z, r []float64, d int) {
	z = z[:d]
	for a := range dst[:d] {
		ra := r[a*d : (a+1)*d]
		z := z[:len(ra)]
		var c float64
		for b, v := range ra {
			c += v * z[b]
		}
		dst[a] = c
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
// terms), and the result is squared s times. work must hold 2*d*d values and
// must not overlap dst or a.
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
	term, tmp := work[:dd], work[dd:2*dd]
	setIdentity(dst, d)
	setIdentity(term, d)
	for k := 1; k <= 30; k++ {
		gemm(false, false, d, d, d, scale/float64(k), term, d, a, d, 0, tmp, d)
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
		gemm(false, false, d, d, d, 1, dst, d, dst, d, 0, tmp, d)
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
				w[i*d+j] -= f * w[k*d+j]
			}
		}
	}
	return sign
}

// LaplacianPinv returns the Moore-Penrose pseudoinverse L^+ of the graph
// Laplacian, from its eigendecomposition: eigenvalues at most 1e-10 times the
// largest (one per connected component, the constant modes) are left at zero.
func (g *Graph) LaplacianPinv() *mat.SymDense {
	n := g.N
	var eig mat.EigenSym
	if !eig.Factorize(g.Laplacian(), true) {
		panic("optim: eigendecomposition of the Laplacian failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	var top float64
	for _, v := range vals {
		top = max(top, math.Abs(v))
	}
	tol := 1e-10 * top
	w := mat.DenseCopyOf(&vecs)
	for k, lam := range vals {
		inv := 0.0
		if math.Abs(lam) > tol {
			inv = 1 / lam
		}
		for i := 0; i < n; i++ {
			w.Set(i, k, w.At(i, k)*inv)
		}
	}
	var full mat.Dense
	full.Mul(w, vecs.T())
	p := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			p.SetSym(i, j, 0.5*(full.At(i, j)+full.At(j, i)))
		}
	}
	return p
}
