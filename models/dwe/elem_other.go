//go:build !amd64 || purego

package dwe

var useElemAVX2 = false

func elemAVX2(x, b, lt, gs *float64, n int, ai, scale float64) bool {
	panic("dwe: no AVX2 kernel")
}
