package dwe

import (
	"math"
	"unsafe"
)

// Float32 tile products for a float32 DWE mode (issue 33). Every output
// entry is one chain of correctly rounded float32 fused multiply-adds in
// the order of the reduction index, starting from the entry's value (0 for
// gemmNT32):
//
//	out(i, j) = fma32(A(i, n-1), B(n-1, j), ... fma32(A(i, 0), B(0, j), out(i, j)))
//
// whatever the shapes, the tile an entry falls in, or the CPU: the AVX-512
// (8 x 32) and AVX2 (4 x 16) micro-kernels of gemm32_amd64.s use
// VFMADD231PS, whose result is the exactly rounded a*b+c, and the Go twin
// gemm32KernelGo computes the same by fma32 (bit-identical, tested). The
// micro-kernels read A through its strides and B's rows in place (x = u
// v^T takes v transposed once per call, so that every product reads B by
// rows); edge tiles are masked (AVX-512) or padded with zeros.

// fma32 returns a*b + c rounded once to float32 (round to nearest even), as
// the FMA instructions compute it. a*b is exact in float64 (48 bits); the
// sum is rounded to float64 by round-to-odd (the round-to-nearest sum, moved
// one ulp toward the exact value when that is inexact and the sum's last
// bit is even; the error comes exactly from TwoSum), and round-to-odd at 53
// bits followed by rounding to 24 bits is the correct rounding (Boldo and
// Melquiond, 2008: 53 >= 24 + 2). A plain float32(float64(a)*float64(b) +
// float64(c)) rounds twice and differs when the float64 sum lands on a
// float32 halfway point. Infinities and NaNs go through the plain sum.
func fma32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b)) // exact
	q := float64(c)
	s := p + q
	if s-s != 0 { // Inf or NaN
		return float32(s)
	}
	bb := s - p
	e := (p - (s - bb)) + (q - bb) // p + q - s exactly
	if e != 0 {
		if bits := math.Float64bits(s); bits&1 == 0 {
			if (e > 0) == (s > 0) {
				bits++ // one ulp away from zero, toward the exact sum
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return float32(s)
}

// Tile sizes of the float32 micro-kernels: mr32 rows by nr32 columns.
const (
	mr32 = 8
	nr32 = 32
)

// gemm32Buf holds a padded A panel, B panel and C tile for the edges; the
// contents never influence results.
type gemm32Buf struct {
	ap, bp []float32
	edge   [mr32 * nr32]float32
}

// gemmAcc32 adds A B to out (rows x cols, row stride ldo) entry by entry as
// fma32 chains in p order (see above), where A(i, p) = a[i*aOut+p*aRed]
// (rows x n) and B is n x cols, row-major with row stride ldb.
func gemmAcc32(out []float32, ldo int, a []float32, aOut, aRed int, b []float32, ldb, rows, cols, n int, buf *gemm32Buf) {
	if rows == 0 || cols == 0 || n == 0 {
		return
	}
	_ = out[(rows-1)*ldo+cols-1]
	_ = a[(rows-1)*aOut+(n-1)*aRed]
	_ = b[(n-1)*ldb+cols-1]
	for i0 := 0; i0 < rows; i0 += mr32 {
		h := min(mr32, rows-i0)
		for j0 := 0; j0 < cols; j0 += nr32 {
			gemm32Tile(out[i0*ldo+j0:], ldo, a[i0*aOut:], aOut, aRed, b[j0:], ldb, n, h, min(nr32, cols-j0), buf)
		}
	}
}

// gemmNT32 sets x (m x n, row stride n) to u v^T for u (m x d, row-major)
// and v given transposed: vt (d x n, row stride ldvt; transpose32 makes
// it, once for all the tiles of a call): x[r*n+c] = the fma32 chain of
// u_r . v_c in k order from 0.
func gemmNT32(x, u, vt []float32, m, n, d, ldvt int, buf *gemm32Buf) {
	x = x[:m*n]
	clear(x)
	gemmAcc32(x, n, u, d, 1, vt, ldvt, m, n, d, buf)
}

// transpose32 sets vt (d x n, row-major) to the transpose of v (n x d).
func transpose32(vt, v []float32, n, d int) {
	vt, v = vt[:d*n], v[:n*d]
	for j := range n {
		row := v[j*d : (j+1)*d]
		for k, x := range row {
			vt[k*n+j] = x
		}
	}
}

// gemm32Tile adds the h x w (h <= mr32, w <= nr32) tile at c (row stride
// ldc): for p < n, c[r*ldc+j] = fma32(A(r, p), B(p, j), c[r*ldc+j]). Full
// tiles run on the micro-kernels in place; the AVX-512 kernel masks the
// columns beyond w, and the rows beyond h (both, on AVX2) are padded with
// zeros in buf.
func gemm32Tile(c []float32, ldc int, a []float32, aOut, aRed int, b []float32, ldb, n, h, w int, buf *gemm32Buf) {
	_, _, _ = c[(h-1)*ldc+w-1], a[(h-1)*aOut+(n-1)*aRed], b[(n-1)*ldb+w-1]
	if !useGemm32AVX2 {
		gemm32KernelGo(c, ldc, a, aOut, aRed, b, ldb, n, h, w)
		return
	}
	if h == mr32 && (w == nr32 || useGemm32AVX512) {
		gemm32Full(&c[0], ldc, &a[0], aOut, aRed, &b[0], ldb, n, w)
		return
	}
	buf.ap = grow32(buf.ap, n*mr32) // A's rows, padded: aOut = 1, aRed = mr32
	for r := range mr32 {
		for p := range n {
			if r < h {
				buf.ap[p*mr32+r] = a[r*aOut+p*aRed]
			} else {
				buf.ap[p*mr32+r] = 0
			}
		}
	}
	bp, ldbp := b, ldb
	if !useGemm32AVX512 && w < nr32 { // B's columns, padded
		buf.bp = grow32(buf.bp, n*nr32)
		for p := range n {
			row := buf.bp[p*nr32 : (p+1)*nr32]
			copy(row, b[p*ldb:p*ldb+w])
			clear(row[w:])
		}
		bp, ldbp = buf.bp, nr32
	}
	e := buf.edge[:]
	clear(e)
	for r := range h {
		copy(e[r*nr32:r*nr32+w], c[r*ldc:])
	}
	gemm32Full(&e[0], nr32, &buf.ap[0], 1, mr32, &bp[0], ldbp, n, w)
	for r := range h {
		copy(c[r*ldc:r*ldc+w], e[r*nr32:])
	}
}

// gemm32Full runs the micro-kernels on a full mr32-row tile: AVX-512 with
// the columns w masked, or four AVX2 4 x 16 blocks (w = nr32; the caller
// pads).
func gemm32Full(c *float32, ldc int, a *float32, aOut, aRed int, b *float32, ldb, n, w int) {
	if useGemm32AVX512 {
		lo, hi := uint16(1<<min(w, 16)-1), uint16(1<<max(w-16, 0)-1)
		gemm32K512(c, ldc, a, aOut, aRed, b, ldb, n, lo, hi)
		return
	}
	for r := 0; r < mr32; r += 4 {
		for j := 0; j < nr32; j += 16 {
			gemm32K256((*float32)(unsafe.Add(unsafe.Pointer(c), 4*(r*ldc+j))), ldc,
				(*float32)(unsafe.Add(unsafe.Pointer(a), 4*r*aOut)), aOut, aRed,
				(*float32)(unsafe.Add(unsafe.Pointer(b), 4*j)), ldb, n)
		}
	}
}

// gemm32KernelGo is gemm32Tile in Go (the twin of the assembly).
func gemm32KernelGo(c []float32, ldc int, a []float32, aOut, aRed int, b []float32, ldb, n, h, w int) {
	for r := range h {
		cr := c[r*ldc : r*ldc+w]
		for j := range cr {
			acc := cr[j]
			for p := range n {
				acc = fma32(a[r*aOut+p*aRed], b[p*ldb+j], acc)
			}
			cr[j] = acc
		}
	}
}

// grow32 returns s with length l, reallocated if its capacity is short.
func grow32(s []float32, l int) []float32 {
	if cap(s) < l {
		return make([]float32, l)
	}
	return s[:l]
}
