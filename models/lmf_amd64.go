//go:build !purego

package models

import "golang.org/x/sys/cpu"

// useFMA selects the AVX2/FMA kernels of lmf_amd64.s (tests switch it off to
// compare them with the Go loops).
var useFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func lmfDotsFMA(x *float64, us, is *int32, n, d int, sc *float64)

//go:noescape
func lmfAxpysFMA(x, gr *float64, us, is *int32, n, d int, cf *float64)

//go:noescape
func lmfDots32FMA(x *float32, us, is *int32, n, d int, sc *float64)

//go:noescape
func lmfAxpys32FMA(x, gr *float32, us, is *int32, n, d int, cf *float64)

// prefetchCols starts the memory reads of the n user and item columns (of
// cb bytes) that us and is name, in x and in g (of any element type). It
// has no effect on results.
//
//go:noescape
func prefetchCols(x, gr *float64, us, is *int32, n, cb int)
