//go:build !amd64 || purego

package optim

const haveFMAKernels = false

func ntKernel(x *float64, ldx int, u *float64, v *float64, d int, k4 int) {
	panic("optim: no FMA kernels")
}

func axpyKernel(out *float64, ldo int, a *float64, aOut, aRed int, b *float64, ldb int, n int) {
	panic("optim: no FMA kernels")
}

func axpyKernel4(out *float64, ldo int, a *float64, aOut, aRed int, b *float64, ldb int, n int) {
	panic("optim: no FMA kernels")
}

func axpyKernel16(out *float64, ldo int, a *float64, aOut, aRed int, b *float64, ldb int, n int) {
	panic("optim: no FMA kernels")
}

func ntKernel48(x *float64, ldx int, u *float64, v *float64, d int, k4 int) {
	panic("optim: no FMA kernels")
}

func axpyKernel816(out *float64, ldo int, a *float64, aOut, aRed int, b *float64, ldb int, n int) {
	panic("optim: no FMA kernels")
}

func ntKernel48p(x *float64, ldx int, u *float64, vp *float64, d int, k4 int) {
	panic("optim: no FMA kernels")
}
