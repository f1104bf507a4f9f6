package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// withFMA runs fn with useFMA set to each value the machine supports (false,
// and true where the AVX2/FMA kernels exist), restoring it afterwards.
func withFMA(t *testing.T, fn func(t *testing.T, fma bool)) {
	t.Helper()
	have := useFMA
	defer func() { useFMA = have }()
	for _, f := range []bool{false, true} {
		if f && !have {
			t.Log("no AVX2/FMA on this CPU: only the pure-Go kernels are tested")
			continue
		}
		useFMA = f
		t.Run(fmt.Sprintf("fma=%v", f), func(t *testing.T) { fn(t, f) })
	}
}

// TestGemmNT: GemmNT agrees with a naive product to rounding, on shapes with
// every kind of edge, and its pure-Go kernels agree with the FMA
// micro-kernels bit for bit.
func TestGemmNT(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 1))
	for _, sz := range []struct{ m, n, d int }{{1, 1, 1}, {2, 4, 4}, {3, 5, 3}, {7, 9, 13}, {64, 64, 100}, {33, 30, 30}, {10, 3, 8}} {
		u, v := randVec(rng, sz.m*sz.d, 1), randVec(rng, sz.n*sz.d, 1)
		want := make([]float64, sz.m*sz.n)
		for r := range sz.m {
			for c := range sz.n {
				for k := range sz.d {
					want[r*sz.n+c] += u[r*sz.d+k] * v[c*sz.d+k]
				}
			}
		}
		var got [2][]float64
		withFMA(t, func(t *testing.T, fma bool) {
			x := randVec(rng, sz.m*sz.n, 1) // overwritten
			GemmNT(x, u, v, sz.m, sz.n, sz.d)
			for i := range want {
				if math.Abs(x[i]-want[i]) > 1e-13*float64(sz.d) {
					t.Fatalf("%v: x[%d] = %v, want %v", sz, i, x[i], want[i])
				}
			}
			got[b2i(fma)] = x
		})
		if got[1] != nil && !slices.Equal(got[0], got[1]) {
			t.Fatalf("%v: pure-Go and FMA kernels differ", sz)
		}
		if useAVX512 { // and without the AVX-512 kernel
			useAVX512 = false
			x := make([]float64, sz.m*sz.n)
			GemmNT(x, u, v, sz.m, sz.n, sz.d)
			useAVX512 = true
			if !slices.Equal(x, got[1]) {
				t.Fatalf("%v: AVX2 and AVX-512 kernels differ", sz)
			}
		}
	}
}

// TestGemmAcc: GemmAcc adds a b and a^T b (both layouts of A) to out, equal to
// a naive product to rounding, leaves the rest of out alone, and its pure-Go
// kernels agree with the FMA micro-kernels bit for bit.
func TestGemmAcc(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 1))
	for _, sz := range []struct{ rows, cols, n int }{{1, 1, 1}, {4, 8, 1}, {4, 4, 5}, {5, 13, 7}, {12, 30, 64}, {32, 32, 3}, {9, 2, 0}, {3, 100, 17}, {4, 16, 1}, {8, 100, 64}, {13, 47, 9}} {
		for _, trans := range []bool{false, true} {
			aOut, aRed, lda := sz.n, 1, sz.n // a is rows x n
			if trans {
				aOut, aRed, lda = 1, sz.rows, sz.rows // a is n x rows
			}
			a := randVec(rng, sz.rows*sz.n, 1)
			ldb, ldo := sz.cols+3, sz.cols+2
			b := randVec(rng, max(sz.n*ldb, 1), 1)
			out0 := randVec(rng, sz.rows*ldo, 1)
			want := slices.Clone(out0)
			for i := range sz.rows {
				for j := range sz.cols {
					for p := range sz.n {
						want[i*ldo+j] += a[i*aOut+p*aRed] * b[p*ldb+j]
					}
				}
			}
			var got [2][]float64
			withFMA(t, func(t *testing.T, fma bool) {
				out := slices.Clone(out0)
				GemmAcc(out, ldo, a, aOut, aRed, b, ldb, sz.rows, sz.cols, sz.n)
				for i := range want {
					if math.Abs(out[i]-want[i]) > 1e-13*float64(sz.n+1) {
						t.Fatalf("%v trans=%v lda=%d: out[%d] = %v, want %v", sz, trans, lda, i, out[i], want[i])
					}
				}
				got[b2i(fma)] = out
			})
			if got[1] != nil && !slices.Equal(got[0], got[1]) {
				t.Fatalf("%v trans=%v: pure-Go and FMA kernels differ", sz, trans)
			}
			if useAVX512 { // and without the AVX-512 kernel
				useAVX512 = false
				out := slices.Clone(out0)
				GemmAcc(out, ldo, a, aOut, aRed, b, ldb, sz.rows, sz.cols, sz.n)
				useAVX512 = true
				if !slices.Equal(out, got[1]) {
					t.Fatalf("%v trans=%v: AVX2 and AVX-512 kernels differ", sz, trans)
				}
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestGemmNTPacked: GemmNTPacked on PackNT's panel gives GemmNT's bits on
// every kernel path (AVX-512 on the packed panel, AVX-512 on v, AVX2/FMA,
// pure Go), on shapes with every kind of edge, and agrees with a naive
// product to rounding.
func TestGemmNTPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 1))
	have512 := useAVX512
	defer func() { useAVX512 = have512 }()
	for _, sz := range []struct{ m, n, d int }{{1, 1, 1}, {4, 8, 4}, {4, 8, 3}, {5, 9, 7}, {8, 16, 100}, {64, 64, 100}, {13, 27, 30}, {4, 17, 2}, {12, 40, 13}} {
		u, v := randVec(rng, sz.m*sz.d, 1), randVec(rng, sz.n*sz.d, 1)
		want := make([]float64, sz.m*sz.n)
		GemmNT(want, u, v, sz.m, sz.n, sz.d)
		for r := range sz.m {
			for c := range sz.n {
				var s float64
				for k := range sz.d {
					s += u[r*sz.d+k] * v[c*sz.d+k]
				}
				if math.Abs(s-want[r*sz.n+c]) > 1e-13*float64(sz.d) {
					t.Fatalf("%v: GemmNT x[%d,%d] = %v, naive %v", sz, r, c, want[r*sz.n+c], s)
				}
			}
		}
		vp := randVec(rng, PackNTLen(sz.n, sz.d)+3, 1) // overwritten
		PackNT(vp, v, sz.n, sz.d)
		withFMA(t, func(t *testing.T, fma bool) {
			for _, a512 := range []bool{false, have512} {
				useAVX512 = a512 && fma
				x := randVec(rng, sz.m*sz.n, 1)
				GemmNTPacked(x, u, v, vp, sz.m, sz.n, sz.d)
				if !slices.Equal(x, want) {
					t.Fatalf("%v avx512=%v: GemmNTPacked differs from GemmNT", sz, useAVX512)
				}
			}
		})
	}
}
