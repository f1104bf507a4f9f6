//go:build !purego

package dwe

import "golang.org/x/sys/cpu"

// useElemAVX2 selects elem_amd64.s for the element-wise work of negLogLik
// (tests switch it off to compare it with the Go code).
var useElemAVX2 = cpu.X86.HasAVX2

//go:noescape
func elemAVX2(x, b, lt, gs *float64, n int, ai, scale float64) bool

// useElemAVX512 selects elem512_amd64.s (8 entries at a time) over
// elem_amd64.s.
var useElemAVX512 = useElemAVX2 && cpu.X86.HasAVX512F

//go:noescape
func elemAVX512(x, b, lt, gs *float64, n int, ai, scale, loss float64, nsum int) (float64, bool)

// useElem32AVX512 selects elem32_amd64.s (16 float32 entries at a time)
// for the float32 mode's element-wise work (elemRow32), over
// elem32avx2_amd64.s (8 at a time, useElem32AVX2) and the Go twin.
var (
	useElem32AVX2   = cpu.X86.HasAVX2
	useElem32AVX512 = useElem32AVX2 && cpu.X86.HasAVX512F
)

//go:noescape
func elem32AVX2x8(x *float32, b, lt *float64, gs *float32, n int, ai, scale, loss float64, nsum int) (float64, bool)

//go:noescape
func elem32AVX512x16(x *float32, b, lt *float64, gs *float32, n int, ai, scale, loss float64, nsum int) (float64, bool)
