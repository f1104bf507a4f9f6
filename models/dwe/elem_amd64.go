//go:build !purego

package dwe

import "golang.org/x/sys/cpu"

// useElemAVX2 selects elem_amd64.s for the element-wise work of negLogLik
// (tests switch it off to compare it with the Go code).
var useElemAVX2 = cpu.X86.HasAVX2

//go:noescape
func elemAVX2(x, b, lt, gs *float64, n int, ai, scale float64) bool
