//go:build !amd64 || purego

package models

var useFMA = false

func lmfDotsFMA(x *float64, us, is *int32, n, d int, sc *float64) {
	panic("models: no FMA kernels")
}

func lmfAxpysFMA(x, gr *float64, us, is *int32, n, d int, cf *float64) {
	panic("models: no FMA kernels")
}

func lmfDots32FMA(x *float32, us, is *int32, n, d int, sc *float64) {
	panic("models: no FMA kernels")
}

func lmfAxpys32FMA(x, gr *float32, us, is *int32, n, d int, cf *float64) {
	panic("models: no FMA kernels")
}

// prefetchCols does nothing where there is no prefetching kernel.
func prefetchCols(x, gr *float64, us, is *int32, n, cb int) {}
