//go:build !amd64 || purego

package dwe

var (
	useGemm32AVX2   = false
	useGemm32AVX512 = false
)

func gemm32K512(c *float32, ldc int, ap, bp *float32, n int) {
	panic("dwe: no float32 assembly kernels")
}

func gemm32K256(c *float32, ldc int, ap, bp *float32, n int) {
	panic("dwe: no float32 assembly kernels")
}
