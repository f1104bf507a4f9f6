package dwe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"goldstone/optim"
)

// kernelCase is random input of negLogLik: m words, n contexts, d dimensions,
// about nnz positive counts per word.
type kernelCase struct {
	m, n, d int
	u, v    []float64
	a, b    []float64
	sp      sparseRows
}

func newKernelCase(rng *rand.Rand, m, n, d, nnz int) *kernelCase {
	k := &kernelCase{m: m, n: n, d: d}
	k.u, k.v = make([]float64, m*d), make([]float64, n*d)
	for i := range k.u {
		k.u[i] = 0.3 * rng.NormFloat64()
	}
	for i := range k.v {
		k.v[i] = 0.3 * rng.NormFloat64()
	}
	k.a, k.b = make([]float64, m), make([]float64, n)
	for i := range k.a {
		k.a[i] = rng.Float64()
	}
	for j := range k.b {
		k.b[j] = rng.Float64()
	}
	k.sp.ptr = []int{0}
	for range m {
		var cols []int32
		for range nnz {
			cols = append(cols, int32(rng.IntN(n)))
		}
		slices.Sort(cols)
		cols = slices.Compact(cols)
		for _, c := range cols {
			k.sp.col = append(k.sp.col, c)
			k.sp.val = append(k.sp.val, 5*rng.Float64())
		}
		k.sp.ptr = append(k.sp.ptr, len(k.sp.col))
	}
	return k
}

func (k *kernelCase) run(f func(gu, gv, u, v, a, b []float64, m, n, d int, sp sparseRows, col0 int32, scale float64, tb int, tile []float64, cur []int) float64, scale float64, tb int, grad bool) (float64, []float64, []float64) {
	var gu, gv []float64
	if grad {
		gu, gv = make([]float64, k.m*k.d), make([]float64, k.n*k.d)
		for i := range gu {
			gu[i] = 0.01 * float64(i%7) // adds to what is there
		}
	}
	loss := f(gu, gv, k.u, k.v, k.a, k.b, k.m, k.n, k.d, k.sp, 0, scale, tb, make([]float64, tb*tb), make([]int, tb))
	return loss, gu, gv
}

func closeVec(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	var norm float64
	for _, v := range want {
		norm = max(norm, math.Abs(v))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*(norm+1e-300) {
			t.Fatalf("%s[%d] = %v, reference %v (max |ref| %v)", name, i, got[i], want[i], norm)
		}
	}
}

// TestKernelMatchesReference: negLogLik (tile products on optim.GemmNT and
// optim.GemmAcc) agrees with the reference kernel to rounding, on shapes with
// every kind of edge (rows, columns and d not multiples of the micro-kernel
// sizes), with and without gradients and scale. (optim's tests check that
// the kernels' pure-Go versions match the FMA micro-kernels bit for bit.)
func TestKernelMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 1))
	for _, sz := range []struct{ m, n, d, tb int }{{70, 45, 100, 64}, {33, 67, 13, 16}, {9, 10, 3, 8}, {64, 64, 8, 64}, {130, 129, 30, 64}, {50, 70, 100, 12}} {
		k := newKernelCase(rng, sz.m, sz.n, sz.d, 6)
		for _, scale := range []float64{1, 2.5} {
			t.Run(fmt.Sprintf("%dx%dx%d/tb=%d/scale=%v", sz.m, sz.n, sz.d, sz.tb, scale), func(t *testing.T) {
				wl, wu, wv := k.run(negLogLikRef, scale, sz.tb, true)
				l, gu, gv := k.run(negLogLik, scale, sz.tb, true)
				if math.Abs(l-wl) > 1e-12*math.Abs(wl) {
					t.Fatalf("loss %v, reference %v", l, wl)
				}
				closeVec(t, "gu", gu, wu, 1e-12)
				closeVec(t, "gv", gv, wv, 1e-12)
				if l0, _, _ := k.run(negLogLik, scale, sz.tb, false); l0 != l {
					t.Fatalf("loss without gradient %v, with %v", l0, l)
				}
			})
		}
	}
}

// BenchmarkKernel times one full-batch time step of the dense likelihood
// with gradient (V words x V contexts, d = 100; V from GOLDSTONE_BENCH_V,
// default 2000) on one core: the kernel and the reference kernel (the
// kernel before issue 13: gonum's Dgemm for the tile products) alternately in
// every iteration, reporting both times and the median speedup.
func BenchmarkKernel(b *testing.B) {
	v := 2000
	if s := getenvInt(b, "GOLDSTONE_BENCH_V"); s > 0 {
		v = s
	}
	k := newKernelCase(rand.New(rand.NewPCG(52, 1)), v, v, 100, 20)
	gu, gv := make([]float64, v*100), make([]float64, v*100)
	tile, cur := make([]float64, DefaultTile*DefaultTile), make([]int, DefaultTile)
	var news, refs, ratios []float64
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		sinkLoss = negLogLik(gu, gv, k.u, k.v, k.a, k.b, v, v, 100, k.sp, 0, 1, DefaultTile, tile, cur)
		t1 := time.Now()
		sinkLoss += negLogLikRef(gu, gv, k.u, k.v, k.a, k.b, v, v, 100, k.sp, 0, 1, DefaultTile, tile, cur)
		t2 := time.Now()
		n, r := t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds()
		news, refs, ratios = append(news, n), append(refs, r), append(ratios, r/n)
	}
	med := func(x []float64) float64 { s := slices.Clone(x); slices.Sort(s); return s[len(s)/2] }
	b.ReportMetric(med(news), "s/step")
	b.ReportMetric(med(refs), "s/step_reference")
	b.ReportMetric(med(ratios), "speedup")
	b.ReportMetric(float64(v)*float64(v)/med(news), "pairs/s")
}

// getenvInt returns the positive integer in the environment variable name, or 0.
func getenvInt(b *testing.B, name string) int {
	s := os.Getenv(name)
	if s == "" {
		return 0
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return v
}

// TestLog1pUnit compares log1pUnit with optim.Log1p on [0, 1].
func TestLog1pUnit(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 1))
	es := []float64{0, 1, 1e-300, 1e-17, 1e-16, 2.2e-16, 1e-8, 0.4142135623730950, 0.41421356237309515, 0.5, 0.999999}
	for range 200000 {
		es = append(es, rng.Float64(), math.Exp(-40*rng.Float64()))
	}
	for _, e := range es {
		got, want := log1pUnit(e, 1/(1+e)), optim.Log1p(e)
		if math.Abs(got-want) > 4e-16*want {
			t.Fatalf("log1pUnit(%v) = %v, optim.Log1p %v (%.2g ulp)", e, got, want, math.Abs(got-want)/(want*0x1p-52))
		}
	}
}

// TestExpNeg compares expNeg with optim.Exp (math.Exp differs between
// builds: on arm64 it gives 0 for exp(-745), whose nearest float is 5e-324).
func TestExpNeg(t *testing.T) {
	rng := rand.New(rand.NewPCG(54, 1))
	as := []float64{0, 1e-300, 1e-17, 0.3465735902799726, 0.34657359027997264, 1, 36, 699.9, 700, 700.1, 745, 746, 1e300, math.Inf(1)}
	for range 200000 {
		as = append(as, rng.Float64(), 40*rng.Float64(), 700*rng.Float64())
	}
	for _, a := range as {
		got, want := expNeg(a), optim.Exp(-a)
		if math.Abs(got-want) > 4e-16*want {
			t.Fatalf("expNeg(%v) = %v, optim.Exp(-a) %v", a, got, want)
		}
	}
	if !math.IsNaN(expNeg(math.NaN())) {
		t.Fatal("expNeg(NaN) is not NaN")
	}
}
