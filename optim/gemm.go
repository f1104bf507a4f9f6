package optim

import (
	"math"

	"golang.org/x/sys/cpu"
)

// useFMA selects the AVX2/FMA micro-kernels of gemm_amd64.s; otherwise their
// pure-Go versions below (math.FMA, the same operations in the same order)
// run, so GemmNT and GemmAcc give bit-identical results either way.
var useFMA = haveFMAKernels && cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useAVX512 selects GemmAcc's 4 x 16 and GemmNT's 4 x 8 AVX-512
// micro-kernels (the same FMAs per entry in the same order as the others:
// the same bits).
var useAVX512 = useFMA && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

// GemmNT sets x (m x n, row stride n) to u v^T for the rows of u (m x d) and
// v (n x d), both row-major with row stride d: x[r*n+c] = u_r . v_c.
//
// The dot products are taken over k < 4*(d/4) in four lanes (k mod 4),
// summed as (l0+l2)+(l1+l3): by fused multiply-adds for the entries in 2 x 4
// tiles, by plain multiplications and additions for the rows and columns
// beyond them; the last d mod 4 terms are then added by plain operations.
// The result depends only on the inputs and shapes, not on the CPU's vector
// units.
func GemmNT(x, u, v []float64, m, n, d int) {
	gemmNT(x, u, v, nil, m, n, d)
}

// PackNTLen is the length of the panel PackNT makes of n rows of d values.
func PackNTLen(n, d int) int {
	return (n / 8) * 8 * 4 * (d / 4)
}

// PackNT copies v (n x d, row-major) into vp (len >= PackNTLen(n, d)) in the
// layout of GemmNTPacked's AVX-512 micro-kernel: for each group of 8 rows
// (the columns of x) and each k quad, the 8 rows' four values k..k+3 in
// row order, 32 values in all. Rows beyond the last multiple of 8 and the
// last d mod 4 values are not copied (GemmNTPacked reads them from v).
func PackNT(vp, v []float64, n, d int) {
	k4 := d / 4
	vp = vp[:PackNTLen(n, d)]
	for g := 0; g < n/8; g++ {
		for kq := range k4 {
			dst := vp[(g*k4+kq)*32 : (g*k4+kq+1)*32]
			for c := range 8 {
				src := v[(g*8+c)*d+4*kq : (g*8+c)*d+4*kq+4]
				dst[c*4], dst[c*4+1], dst[c*4+2], dst[c*4+3] = src[0], src[1], src[2], src[3]
			}
		}
	}
}

// GemmNTPacked is GemmNT with v's panel packed by PackNT into vp (vp must
// hold PackNT(vp, v, n, d)): the same results bit for bit, faster where
// the AVX-512 micro-kernel runs (elsewhere it is GemmNT and ignores vp).
func GemmNTPacked(x, u, v, vp []float64, m, n, d int) {
	gemmNT(x, u, v, vp[:PackNTLen(n, d)], m, n, d)
}

func gemmNT(x, u, v, vp []float64, m, n, d int) {
	x, u, v = x[:m*n], u[:m*d], v[:n*d]
	k4 := d / 4
	r := 0
	if useFMA && useAVX512 { // 4 x 8 tiles: two row pairs by two column quads
		for ; r+4 <= m; r += 4 {
			c := 0
			for ; c+8 <= n; c += 8 {
				_, _, _ = x[(r+3)*n+c+7], u[(r+3)*d+max(4*k4, 1)-1], v[(c+7)*d+max(4*k4, 1)-1]
				if vp != nil && k4 > 0 {
					_ = vp[(c/8+1)*32*k4-1]
					ntKernel48p(&x[r*n+c], n, &u[r*d], &vp[(c/8)*32*k4], d, k4)
					continue
				}
				ntKernel48(&x[r*n+c], n, &u[r*d], &v[c*d], d, k4)
			}
			ntRowPair(x, u, v, r, c, n, d, k4)
			ntRowPair(x, u, v, r+2, c, n, d, k4)
		}
	}
	for ; r+2 <= m; r += 2 {
		ntRowPair(x, u, v, r, 0, n, d, k4)
	}
	for ; r < m; r++ {
		for c := 0; c < n; c++ {
			x[r*n+c] = dotRange(u[r*d:], v[c*d:], 0, 4*k4)
		}
	}
	if 4*k4 < d { // the last d mod 4 terms
		for r := 0; r < m; r++ {
			for c := 0; c < n; c++ {
				x[r*n+c] += dotRange(u[r*d:], v[c*d:], 4*k4, d)
			}
		}
	}
}

// ntRowPair computes GemmNT's rows r and r+1 from column c0 (a multiple of
// 4) on: 2 x 4 tiles, then the columns beyond the last multiple of 4.
func ntRowPair(x, u, v []float64, r, c0, n, d, k4 int) {
	c := c0
	for ; c+4 <= n; c += 4 {
		ntTile(x[r*n+c:], n, u[r*d:], v[c*d:], d, k4)
	}
	for ; c < n; c++ {
		x[r*n+c] = dotRange(u[r*d:], v[c*d:], 0, 4*k4)
		x[(r+1)*n+c] = dotRange(u[(r+1)*d:], v[c*d:], 0, 4*k4)
	}
}

// dotRange returns sum over k in [lo, hi) of a[k] b[k], by plain
// multiplications and additions in four lanes ((k-lo) mod 4) summed as
// (l0+l2)+(l1+l3).
func dotRange(a, b []float64, lo, hi int) float64 {
	var l [4]float64
	for k := lo; k < hi; k++ {
		l[(k-lo)&3] += float64(a[k] * b[k])
	}
	return (l[0] + l[2]) + (l[1] + l[3])
}

// GemmAcc adds to out (rows x cols, row stride ldo) the product A B, where
// A(i, p) = a[i*aOut+p*aRed] (rows x n) and B is n x cols, row-major with row
// stride ldb: out += a b for a row-major a (aOut = lda, aRed = 1), out +=
// a^T b for a row-major a (aOut = 1, aRed = lda).
//
// Entries in 4 x 4 tiles (rows a multiple of 4, columns a multiple of 4) are
// accumulated in p order by fused multiply-adds; the rows beyond the last
// multiple of 4, and the columns beyond it, by plain multiplications and
// additions in p order. The result depends only on the inputs and shapes, not
// on the CPU's vector units.
func GemmAcc(out []float64, ldo int, a []float64, aOut, aRed int, b []float64, ldb, rows, cols, n int) {
	if n == 0 || rows == 0 || cols == 0 {
		return
	}
	_ = out[(rows-1)*ldo+cols-1]
	_ = a[(rows-1)*aOut+(n-1)*aRed]
	_ = b[(n-1)*ldb+cols-1]
	i := 0
	for i+4 <= rows {
		h, j := 4, 0
		if useAVX512 && i+8 <= rows { // 8 x 16 tiles: two 4-row groups at once
			h = 8
			for ; j+16 <= cols; j += 16 {
				accTile8(out[i*ldo+j:], ldo, a[i*aOut:], aOut, aRed, b[j:], ldb, n)
			}
		}
		for ii := i; ii < i+h; ii += 4 {
			accRows4(out, ldo, a, aOut, aRed, b, ldb, ii, j, cols, n)
		}
		i += h
	}
	for ; i < rows; i++ {
		axpyRow(out[i*ldo:], a[i*aOut:], aRed, b, ldb, 0, cols, n)
	}
}

// accRows4 adds GemmAcc's rows i..i+3 from column j0 on: 4 x 16, 4 x 8 and
// 4 x 4 tiles, then the columns beyond the last multiple of 4 by axpyRow.
func accRows4(out []float64, ldo int, a []float64, aOut, aRed int, b []float64, ldb, i, j0, cols, n int) {
	j := j0
	for ; useAVX512 && j+16 <= cols; j += 16 {
		accTile(out[i*ldo+j:], ldo, a[i*aOut:], aOut, aRed, b[j:], ldb, n, 16)
	}
	for ; j+8 <= cols; j += 8 {
		accTile(out[i*ldo+j:], ldo, a[i*aOut:], aOut, aRed, b[j:], ldb, n, 8)
	}
	if j+4 <= cols {
		accTile(out[i*ldo+j:], ldo, a[i*aOut:], aOut, aRed, b[j:], ldb, n, 4)
		j += 4
	}
	for ii := i; j < cols && ii < i+4; ii++ {
		axpyRow(out[ii*ldo:], a[ii*aOut:], aRed, b, ldb, j, cols, n)
	}
}

// accTile8 adds the 8 x 16 tile of GemmAcc at out: the AVX-512 kernel
// axpyKernel816, or the two 4 x 16 tiles it is made of (the same FMAs per
// entry in the same order).
func accTile8(out []float64, ldo int, a []float64, aOut, aRed int, b []float64, ldb, n int) {
	_, _, _ = out[7*ldo+15], a[7*aOut+(n-1)*aRed], b[(n-1)*ldb+15]
	if useFMA {
		axpyKernel816(&out[0], ldo, &a[0], aOut, aRed, &b[0], ldb, n)
		return
	}
	accTile(out, ldo, a, aOut, aRed, b, ldb, n, 16)
	accTile(out[4*ldo:], ldo, a[4*aOut:], aOut, aRed, b, ldb, n, 16)
}

// axpyRow adds sum over p < n of a[p*aRed] b[p*ldb + j] to out[j], j in [j0, j1).
func axpyRow(out, a []float64, aRed int, b []float64, ldb, j0, j1, n int) {
	for p := 0; p < n; p++ {
		ap := a[p*aRed]
		bp := b[p*ldb:]
		for j := j0; j < j1; j++ {
			out[j] += float64(ap * bp[j])
		}
	}
}

// ntTile computes the 2 x 4 tile of GemmNT at x (row stride ldx) from rows
// u[0:d], u[d:2d] and v[0:d], ..., v[3d:4d], over k < 4*k4.
func ntTile(x []float64, ldx int, u, v []float64, d, k4 int) {
	_, _, _ = x[ldx+3], u[d+4*k4-1], v[3*d+4*k4-1]
	if useFMA {
		ntKernel(&x[0], ldx, &u[0], &v[0], d, k4)
		return
	}
	var acc [2][4][4]float64 // row, column, lane
	for k := 0; k < 4*k4; k += 4 {
		for r := range 2 {
			ur := u[r*d+k : r*d+k+4]
			for c := range 4 {
				vc := v[c*d+k : c*d+k+4]
				l := &acc[r][c]
				for q := range 4 {
					l[q] = math.FMA(ur[q], vc[q], l[q])
				}
			}
		}
	}
	for r := range 2 {
		for c := range 4 {
			l := &acc[r][c]
			x[r*ldx+c] = (l[0] + l[2]) + (l[1] + l[3])
		}
	}
}

// accTile adds the 4 x w (w = 16, 8 or 4) tile of GemmAcc at out (row
// stride ldo), accumulating in p order by fused multiply-adds.
func accTile(out []float64, ldo int, a []float64, aOut, aRed int, b []float64, ldb, n, w int) {
	_, _, _ = out[3*ldo+w-1], a[3*aOut+(n-1)*aRed], b[(n-1)*ldb+w-1]
	if useFMA {
		switch w {
		case 16:
			axpyKernel16(&out[0], ldo, &a[0], aOut, aRed, &b[0], ldb, n)
		case 8:
			axpyKernel(&out[0], ldo, &a[0], aOut, aRed, &b[0], ldb, n)
		default:
			axpyKernel4(&out[0], ldo, &a[0], aOut, aRed, &b[0], ldb, n)
		}
		return
	}
	for i := range 4 {
		o := out[i*ldo : i*ldo+w]
		for j := range o {
			acc := o[j]
			for p := 0; p < n; p++ {
				acc = math.FMA(a[i*aOut+p*aRed], b[p*ldb+j], acc)
			}
			o[j] = acc
		}
	}
}
