//go:build !amd64 || purego

package dwe

var useElemAVX2 = false

func elemAVX2(x, b, lt, gs *float64, n int, ai, scale float64) bool {
	panic("dwe: no AVX2 kernel")
}

var useElemAVX512 = false

func elemAVX512(x, b, lt, gs *float64, n int, ai, scale, loss float64, nsum int) (float64, bool) {
	panic("dwe: no AVX-512 kernel")
}

var useElem32AVX512, useElem32AVX2 = false, false

func elem32AVX2x8(x *float32, b, lt *float64, gs *float32, n int, ai, scale, loss float64, nsum int) (float64, bool) {
	panic("dwe: no AVX2 kernel")
}

func elem32AVX512x16(x *float32, b, lt *float64, gs *float32, n int, ai, scale, loss float64, nsum int) (float64, bool) {
	panic("dwe: no AVX-512 kernel")
}
