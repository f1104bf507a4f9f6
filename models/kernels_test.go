package models

import (
	"math/rand/v2"
	"testing"
)

// TestLMFKernels: the FMA kernels of the logistic MF pass (float64 and
// float32) give the Go loops' results bit for bit, for every dimension (vector part and tail),
// group size and sign of the item entries.
func TestLMFKernels(t *testing.T) {
	if !useFMA {
		t.Skip("no AVX2/FMA kernels on this machine")
	}
	rng := rand.New(rand.NewPCG(5, 9))
	for d := 1; d <= 41; d++ {
		const cols = 50
		x := randVec(rng, cols*d, 1)
		g0 := randVec(rng, cols*d, 1)
		for n := 0; n <= group; n++ {
			us, is := make([]int32, n), make([]int32, n)
			cf := randVec(rng, group, 2)
			for b := range n {
				us[b] = int32(rng.IntN(cols / 2))
				is[b] = int32(cols/2 + rng.IntN(cols/2))
				if rng.IntN(2) == 0 {
					is[b] = ^is[b]
				}
			}
			if n > 2 {
				us[1], is[2] = us[0], is[0] // repeated user and item columns
			}
			want, got := make([]float64, group), make([]float64, group)
			lmfDotsGo(x, us, is, d, want)
			lmfDots(x, us, is, d, got)
			sameBits(t, "dots", got, want)
			gw, gg := append([]float64(nil), g0...), append([]float64(nil), g0...)
			lmfAxpysGo(x, gw, us, is, d, cf)
			lmfAxpys(x, gg, us, is, d, cf)
			sameBits(t, "axpys", gg, gw)
			if n > 0 { // prefetching leaves memory as it is
				prefetchCols(&x[0], &gg[0], &us[0], &is[0], n, 8*d)
				sameBits(t, "after prefetch", gg, gw)
			}
			// The float32 kernels against the Go loops on float32.
			x32, g32 := narrow(x), narrow(g0)
			lmfDotsGo(x32, us, is, d, want)
			lmfDots(x32, us, is, d, got)
			sameBits(t, "dots32", got, want)
			gw32, gg32 := append([]float32(nil), g32...), append([]float32(nil), g32...)
			lmfAxpysGo(x32, gw32, us, is, d, cf)
			lmfAxpys(x32, gg32, us, is, d, cf)
			sameBits(t, "axpys32", Widen(gg32), Widen(gw32))
		}
	}
}
