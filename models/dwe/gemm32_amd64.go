//go:build !purego

package dwe

import "golang.org/x/sys/cpu"

// The float32 micro-kernels of gemm32_amd64.s (tests switch them off to
// compare them with gemm32KernelGo).
var (
	useGemm32AVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	useGemm32AVX512 = useGemm32AVX2 && cpu.X86.HasAVX512F
)

// gemm32K512 is gemm32Tile's 8 x 32 tile on AVX-512, the columns masked
// by mlo (0..15) and mhi (16..31).
//
//go:noescape
func gemm32K512(c *float32, ldc int, a *float32, aOut, aRed int, b *float32, ldb, n int, mlo, mhi uint16)

// gemm32K256 is a 4 x 16 block of gemm32Tile on AVX2.
//
//go:noescape
func gemm32K256(c *float32, ldc int, a *float32, aOut, aRed int, b *float32, ldb, n int)
