//go:build !purego

package dwe

import "golang.org/x/sys/cpu"

// The float32 micro-kernels of gemm32_amd64.s (tests switch them off to
// compare them with gemm32KernelGo).
var (
	useGemm32AVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	useGemm32AVX512 = useGemm32AVX2 && cpu.X86.HasAVX512F
)

// gemm32K512 is gemm32Kernel (8 x 32) on AVX-512.
//
//go:noescape
func gemm32K512(c *float32, ldc int, ap, bp *float32, n int)

// gemm32K256 is the 4 x 16 part of gemm32Kernel at rows ap[0:4] of each
// p (stride mr32) and columns bp[0:16] (stride nr32), on AVX2.
//
//go:noescape
func gemm32K256(c *float32, ldc int, ap, bp *float32, n int)
