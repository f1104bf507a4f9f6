package dwe

import "math"

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
// operands are packed once per call into k-major panels of 8 rows of A and
// 32 columns of B (zero-padded at the edges; an edge tile is computed in a
// scratch tile and copied out), so the micro-kernels read contiguous
// memory.

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

// Panel sizes of the float32 micro-kernels: A in panels of mr rows, B in
// panels of nr columns, both k-major.
const (
	mr32 = 8
	nr32 = 32
)

// gemm32Buf holds the packed panels and an edge tile; the contents never
// influence results.
type gemm32Buf struct {
	ap, bp []float32
	edge   [mr32 * nr32]float32
}

// gemmAcc32 adds A B to out (rows x cols, row stride ldo) entry by entry as
// fma32 chains in p order (see above), where A(i, p) = a[i*aOut+p*aRed]
// (rows x n) and B(p, j) = b[p*bRed+j*bOut] (n x cols).
func gemmAcc32(out []float32, ldo int, a []float32, aOut, aRed int, b []float32, bRed, bOut int, rows, cols, n int, buf *gemm32Buf) {
	if rows == 0 || cols == 0 || n == 0 {
		return
	}
	_ = out[(rows-1)*ldo+cols-1]
	_ = a[(rows-1)*aOut+(n-1)*aRed]
	_ = b[(n-1)*bRed+(cols-1)*bOut]
	ip := (rows + mr32 - 1) / mr32
	buf.ap = grow32(buf.ap, ip*mr32*n)
	buf.bp = grow32(buf.bp, nr32*n)
	ap, bp := buf.ap, buf.bp
	for pi := range ip { // A's panels, each mr32 rows k-major
		panel := ap[pi*mr32*n : (pi+1)*mr32*n]
		for r := range mr32 {
			i := pi*mr32 + r
			if i >= rows {
				for p := range n {
					panel[p*mr32+r] = 0
				}
				continue
			}
			for p := range n {
				panel[p*mr32+r] = a[i*aOut+p*aRed]
			}
		}
	}
	for j0 := 0; j0 < cols; j0 += nr32 {
		w := min(nr32, cols-j0)
		for p := range n { // B's panel: columns j0..j0+31, k-major
			row := bp[p*nr32 : (p+1)*nr32]
			for j := range w {
				row[j] = b[p*bRed+(j0+j)*bOut]
			}
			clear(row[w:])
		}
		for pi := range ip {
			i0 := pi * mr32
			h := min(mr32, rows-i0)
			panel := ap[pi*mr32*n:]
			if h == mr32 && w == nr32 {
				gemm32Kernel(out[i0*ldo+j0:], ldo, panel, bp, n)
				continue
			}
			e := buf.edge[:]
			clear(e)
			for r := range h {
				copy(e[r*nr32:r*nr32+w], out[(i0+r)*ldo+j0:])
			}
			gemm32Kernel(e, nr32, panel, bp, n)
			for r := range h {
				copy(out[(i0+r)*ldo+j0:(i0+r)*ldo+j0+w], e[r*nr32:])
			}
		}
	}
}

// gemmNT32 sets x (m x n, row stride n) to u v^T for u (m x d) and v (n x
// d) row-major: x[r*n+c] = the fma32 chain of u_r . v_c in k order from 0.
func gemmNT32(x, u, v []float32, m, n, d int, buf *gemm32Buf) {
	x = x[:m*n]
	clear(x)
	gemmAcc32(x, n, u, d, 1, v, 1, d, m, n, d, buf)
}

// gemm32Kernel adds the mr32 x nr32 tile at c (row stride ldc): for p < n,
// c[r*ldc+j] = fma32(ap[p*mr32+r], bp[p*nr32+j], c[r*ldc+j]).
func gemm32Kernel(c []float32, ldc int, ap, bp []float32, n int) {
	_, _, _ = c[(mr32-1)*ldc+nr32-1], ap[n*mr32-1], bp[n*nr32-1]
	switch {
	case useGemm32AVX512:
		gemm32K512(&c[0], ldc, &ap[0], &bp[0], n)
	case useGemm32AVX2:
		for r := 0; r < mr32; r += 4 {
			for j := 0; j < nr32; j += 16 {
				gemm32K256(&c[r*ldc+j], ldc, &ap[r], &bp[j], n)
			}
		}
	default:
		gemm32KernelGo(c, ldc, ap, bp, n)
	}
}

// gemm32KernelGo is gemm32Kernel in Go (the twin of the assembly).
func gemm32KernelGo(c []float32, ldc int, ap, bp []float32, n int) {
	for r := range mr32 {
		cr := c[r*ldc : r*ldc+nr32]
		for j := range cr {
			acc := cr[j]
			for p := range n {
				acc = fma32(ap[p*mr32+r], bp[p*nr32+j], acc)
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
