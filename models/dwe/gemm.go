package dwe

import (
	"golang.org/x/sys/cpu"
	"gonum.org/v1/gonum/blas"
)

// useFMA selects the AVX2/FMA micro-kernels (gemm_amd64.s) for the three
// tile products of negLogLik; otherwise gonum's Dgemm computes them.
var useFMA = haveFMAKernels && cpu.X86.HasAVX2 && cpu.X86.HasFMA

// tileNT sets x (mi x nj, row stride nj) to u v^T for the rows of u (mi x d)
// and v (nj x d), both row-major with row stride d.
func tileNT(x, u, v []float64, mi, nj, d int) {
	if !useFMA {
		impl.Dgemm(blas.NoTrans, blas.Trans, mi, nj, d, 1, u, d, v, d, 0, x, nj)
		return
	}
	k4 := d / 4
	r := 0
	for ; r+2 <= mi; r += 2 {
		c := 0
		for ; c+4 <= nj; c += 4 {
			ntKernel(&x[r*nj+c], nj, &u[r*d], &v[c*d], d, k4)
		}
		for ; c < nj; c++ {
			x[r*nj+c] = dotRange(u[r*d:], v[c*d:], 0, 4*k4)
			x[(r+1)*nj+c] = dotRange(u[(r+1)*d:], v[c*d:], 0, 4*k4)
		}
	}
	for ; r < mi; r++ {
		for c := 0; c < nj; c++ {
			x[r*nj+c] = dotRange(u[r*d:], v[c*d:], 0, 4*k4)
		}
	}
	if 4*k4 < d { // the last d mod 4 terms
		for r := 0; r < mi; r++ {
			for c := 0; c < nj; c++ {
				x[r*nj+c] += dotRange(u[r*d:], v[c*d:], 4*k4, d)
			}
		}
	}
}

// dotRange returns sum over k in [lo, hi) of a[k] b[k], in the lane order of
// ntKernel when lo is 0 and hi a multiple of 4.
func dotRange(a, b []float64, lo, hi int) float64 {
	var l [4]float64
	for k := lo; k < hi; k++ {
		l[(k-lo)&3] += a[k] * b[k]
	}
	return (l[0] + l[2]) + (l[1] + l[3])
}

// tileAxpy adds to out (rows x cols, row stride ldo) the product a b, where
// a(i, p) = a[i*aOut+p*aRed] (rows x n) and b is n x cols with row stride
// ldb: out = x v (aOut = nj, aRed = 1) or out = x^T u (aOut = 1, aRed = nj).
func tileAxpy(out []float64, ldo int, a []float64, aOut, aRed int, b []float64, ldb, rows, cols, n int) {
	if n == 0 {
		return
	}
	i := 0
	if useFMA {
		for ; i+4 <= rows; i += 4 {
			j := 0
			for ; j+8 <= cols; j += 8 {
				axpyKernel(&out[i*ldo+j], ldo, &a[i*aOut], aOut, aRed, &b[j], ldb, n)
			}
			if j+4 <= cols {
				axpyKernel4(&out[i*ldo+j], ldo, &a[i*aOut], aOut, aRed, &b[j], ldb, n)
				j += 4
			}
			for ii := i; ii < i+4; ii++ {
				axpyRow(out[ii*ldo:], a[ii*aOut:], aRed, b, ldb, j, cols, n)
			}
		}
	}
	for ; i < rows; i++ {
		axpyRow(out[i*ldo:], a[i*aOut:], aRed, b, ldb, 0, cols, n)
	}
}

// axpyRow adds sum over p < n of a[p*aRed] b[p*ldb + j] to out[j], j in [j0, j1).
func axpyRow(out, a []float64, aRed int, b []float64, ldb, j0, j1, n int) {
	for p := 0; p < n; p++ {
		ap := a[p*aRed]
		bp := b[p*ldb:]
		for j := j0; j < j1; j++ {
			out[j] += ap * bp[j]
		}
	}
}
