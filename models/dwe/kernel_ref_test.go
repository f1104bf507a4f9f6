package dwe

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

var impl gonum.Implementation

// negLogLikRef is negLogLik as it was before issue 13 (gonum's Dgemm for the
// three tile products), kept as the reference of the kernel tests and of
// BenchmarkKernel.
func negLogLikRef(gu, gv, u, v, a, b []float64, m, n, d int, sp sparseRows, col0 int32, scale float64, tb int, tile []float64, cur []int) float64 {
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
			impl.Dgemm(blas.NoTrans, blas.Trans, mi, nj, d, 1, ub, d, vb, d, 0, x, nj)
			hiCol := int32(j1) + col0
			for r := 0; r < mi; r++ {
				ai := a[i0+r]
				row := x[r*nj : (r+1)*nj]
				bj := b[j0:j1]
				k, kend := cur[r], sp.ptr[i0+r+1]
				next := -1
				if k < kend && sp.col[k] < hiCol {
					next = int(sp.col[k]-col0) - j0
				}
				for jj, xv := range row {
					e := math.Exp(-math.Abs(xv))
					l1 := math.Log1p(e)
					inv := 1 / (1 + e)
					var sig, sigm, spp, spm float64 // sig(x), sig(-x), softplus(x), softplus(-x)
					if xv >= 0 {
						sig, sigm = inv, e*inv
						spp, spm = xv+l1, l1
					} else {
						sig, sigm = e*inv, inv
						spp, spm = l1, l1-xv
					}
					w := ai * bj[jj]
					loss += w * spp // -a b log sig(-x)
					g := w * sig
					if jj == next {
						p := sp.val[k]
						loss += p * spm // -n+ log sig(x)
						g -= p * sigm
						k++
						next = -1
						if k < kend && sp.col[k] < hiCol {
							next = int(sp.col[k]-col0) - j0
						}
					}
					row[jj] = g
				}
				cur[r] = k
			}
			if gu != nil {
				impl.Dgemm(blas.NoTrans, blas.NoTrans, mi, d, nj, scale, x, nj, vb, d, 1, gu[i0*d:i1*d], d)
				impl.Dgemm(blas.Trans, blas.NoTrans, nj, d, mi, scale, x, nj, ub, d, 1, gv[j0*d:j1*d], d)
			}
		}
	}
	return scale * loss
}
