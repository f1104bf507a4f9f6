// Package fmacheck proves, on the compiled code, that goldstone's numeric
// results do not depend on the build: it compiles the module's packages
// under several builds (amd64 GOAMD64=v1, v3, the purego tag, arm64), reads
// the compiler's assembly listing (-gcflags=-S) and reports
//
//   - every function and source line that has more fused multiply-add
//     instructions (VFMADD*, VFMSUB*, VFNMADD*, VFNMSUB* on amd64; FMADD*,
//     FMSUB*, FNMADD*, FNMSUB* on arm64) than under GOAMD64=v1, where the
//     compiler never fuses: the only FMAs there are explicit math.FMA calls,
//     so any extra one is a product the compiler contracted into an addition
//     (the Go spec allows it unless an explicit conversion rounds the
//     product: write float64(x*y) + z);
//   - every call from goldstone code to a function whose bits depend on the
//     build: math functions other than the exactly rounded ones (math.Exp is
//     assembly that uses FMA when the CPU has it on amd64 and other assembly
//     on arm64; math.Log is assembly on amd64; Log1p, Pow and the rest are
//     pure Go compiled with fusion under v3 and on arm64), math/rand's
//     NormFloat64, ExpFloat64 and Zipf (they call math.Exp and math.Log), and
//     gonum (its Go loops are compiled with fusion under v3 and on arm64, and
//     its amd64 assembly sums in another order than its Go fallback).
//
// Packages whose floating-point values never reach a result (plots' axes and
// layout) are exempt, each with its reason (Exempt). The test in this package
// runs the check over goldstone/...; it skips when the go command is absent.
package fmacheck
