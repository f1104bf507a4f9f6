//go:build !amd64 || purego

package optim

var useAVX = false

func adagradAVX(x, gr, h *float64, n int, rho, eps float64) { panic("optim: no AVX kernels") }

func adamAVX(x, gr, m, v *float64, n int, b1, omb1, b2, omb2, rho, c1, c2, eps float64) {
	panic("optim: no AVX kernels")
}

func chainRowAVX(gb, gr, z, prev, zn *float64, n int, l2, wl, wr float64, acc *[8]float64, ahead int) {
	panic("optim: no AVX kernels")
}

func adagradChainRowAVX(z, gr, p, prev, zn, h *float64, n int, l2, wl, wr, rho, eps float64, acc *[8]float64, ahead int) {
	panic("optim: no AVX kernels")
}

func adagradChainRow32AVX(z, gr, p, prev, zn, h *float32, n int, l2, wl, wr, rho, eps float32, acc *[8]float64, ahead int) {
	panic("optim: no AVX kernels")
}
