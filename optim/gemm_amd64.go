//go:build !purego

package optim

const haveFMAKernels = true

//go:noescape
func ntKernel(x *float64, ldx int, u *float64, v *float64, d int, k4 int)

//go:noescape
func axpyKernel(out *float64, ldo int, a *float64, aOut, aRed int, b *float64, ldb int, n int)

//go:noescape
func axpyKernel4(out *float64, ldo int, a *float64, aOut, aRed int, b *float64, ldb int, n int)

//go:noescape
func axpyKernel16(out *float64, ldo int, a *float64, aOut, aRed int, b *float64, ldb int, n int)

//go:noescape
func ntKernel48(x *float64, ldx int, u *float64, v *float64, d int, k4 int)

//go:noescape
func axpyKernel816(out *float64, ldo int, a *float64, aOut, aRed int, b *float64, ldb int, n int)

//go:noescape
func ntKernel48p(x *float64, ldx int, u *float64, vp *float64, d int, k4 int)
