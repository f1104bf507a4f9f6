//go:build !amd64 || purego

package dwe

var (
	useGemm32AVX2   = false
	useGemm32AVX512 = false
)

func gemm32K512(c *float32, ldc int, a *float32, aOut, aRed int, b *float32, ldb, n int, mlo, mhi uint16) {
	panic("dwe: no float32 assembly kernels")
}

func gemm32K256(c *float32, ldc int, a *float32, aOut, aRed int, b *float32, ldb, n int) {
	panic("dwe: no float32 assembly kernels")
}
