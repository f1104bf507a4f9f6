package optim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	blasgonum "gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

var benchSink float64

// Paper-scale sizes (MovieLens: T = 100, d = 30) with N = 10,000 embeddings per step.
var benchBlocks = Blocks{T: 100, N: 10000, D: 30}

func benchParams(b *testing.B) []float64 {
	b.Helper()
	rng := rand.New(rand.NewPCG(20, 1))
	return twisted(rng, benchBlocks, 0.01, 0.1)
}

func BenchmarkStep(b *testing.B) {
	x := benchParams(b)
	grad := make([]float64, len(x))
	for i := range grad {
		grad[i] = 1e-3 * float64(i%7-3)
	}
	for _, tc := range []struct {
		name string
		m    Method
	}{{"GD", &GD{Clip: 0.01}}, {"AdaGrad", &AdaGrad{}}, {"Adam", &Adam{}}} {
		b.Run(tc.name, func(b *testing.B) {
			tc.m.Init(len(x))
			Step(tc.m, x, grad, 0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				Step(tc.m, x, grad, i)
			}
			b.ReportMetric(float64(len(x))*float64(b.N)/b.Elapsed().Seconds(), "params/s")
		})
	}
}

// BenchmarkGaugeRound times a round per parameter on float64 and on
// float32 parameters (Round32: the float32 mode; B/op shows that neither
// allocates).
func BenchmarkGaugeRound(b *testing.B) {
	x := benchParams(b)
	x32 := narrow32(x)
	g := Chain(benchBlocks.T, 10)
	for _, w := range []int{1, 2} {
		for _, tc := range []struct {
			name string
			g    Gauge32
		}{
			{"GoldstoneExact", &Goldstone{Pool: testPool(w)}},
			{"GoldstoneLinear", &Goldstone{Pool: testPool(w), Rotation: RotationLinear}},
			{"Procrustes", &Procrustes{Pool: testPool(w)}},
		} {
			for _, dt := range []string{"float64", "float32"} {
				round := func() RoundStats { return tc.g.Round(x) }
				if dt == "float32" {
					round = func() RoundStats { return tc.g.Round32(x32) }
				}
				b.Run(fmt.Sprintf("%s/workers=%d/%s", tc.name, w, dt), func(b *testing.B) {
					if err := tc.g.Init(benchBlocks, g); err != nil {
						b.Fatal(err)
					}
					round() // warm-up
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						benchSink = round().PsiAfter
					}
					b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(benchBlocks.Len()), "ns/param")
				})
			}
		}
	}
}

func BenchmarkGaugeGap(b *testing.B) {
	x := benchParams(b)
	g := Chain(benchBlocks.T, 10)
	if _, err := GaugeGap(x, benchBlocks, g); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchSink, _ = GaugeGap(x, benchBlocks, g)
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(benchBlocks.Len()), "ns/param")
}

// BenchmarkKernels compares the gauge round's two O(N d^2) kernels (FMA
// micro-kernels) with gonum formulations: overlapGemm (one Dgemm(Trans,
// NoTrans) with k = N plus separate passes for 1/2||Z_s - Z_t||^2 and the
// two norms) and rotateGemm,
// on one block pair of paper size (N = 10,000) at d = 30
// (MovieLens) and d = 100 (DWE). GFlop/s counts the 2 N d^2 of the product.
func BenchmarkKernels(b *testing.B) {
	for _, d := range []int{30, 100} {
		n := 10000
		rng := rand.New(rand.NewPCG(21, uint64(d)))
		zs, zt := randVec(rng, n*d, 1), randVec(rng, n*d, 1)
		r := randOrth(rng, d, 1) // orthogonal: repeated rotations keep Z's scale
		m, buf := make([]float64, d*d), make([]float64, scratchLen(d))
		flops := 2 * float64(n) * float64(d) * float64(d)
		for _, tc := range []struct {
			name string
			fn   func()
		}{
			{"overlap", func() { overlap(m, zs, zt, n, d, buf) }},
			{"overlapGemm", func() { overlapGemm(m, zs, zt, n, d); benchSink = halfSqDist(zs, zt) + sumSq(zs) + sumSq(zt) }},
			{"rotate", func() { rotate(zs, n, d, r, buf) }},
			{"rotateGemm", func() { rotateGemm(zs, n, d, r, buf) }},
		} {
			b.Run(fmt.Sprintf("%s/d=%d", tc.name, d), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					tc.fn()
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlop/s")
			})
		}
	}
}

// BenchmarkFusedPass measures the Driver's fused dense pass (chain psi
// gradient, L2, optimizer update, zeroing) on the benchmark blocks, at 1 and
// 2 workers, against the unfused serial passes it replaces (clear +
// AddPsiGrad + Step) and one triad pass a = x + s c over the same length, in
// the same run. Ratios to the triad are reported as x_triad.
func BenchmarkFusedPass(b *testing.B) {
	x := benchParams(b)
	n := len(x)
	grad, a, c := make([]float64, n), make([]float64, n), make([]float64, n)
	g := Chain(benchBlocks.T, 1)
	triad := func(p *Pool) float64 {
		start := time.Now()
		p.Chunks(n, 1<<16, func(_, lo, hi int) {
			aa, xx, cc := a[lo:hi], x[lo:hi], c[lo:hi]
			for i, v := range xx {
				aa[i] = v + 1e-3*cc[i]
			}
		})
		return time.Since(start).Seconds()
	}
	for _, w := range []int{1, 2} {
		pool := testPool(w)
		for _, tc := range []struct {
			name string
			m    Method
		}{{"GD", &GD{Clip: 0.01}}, {"AdaGrad", &AdaGrad{}}, {"Adam", &Adam{}}} {
			b.Run(fmt.Sprintf("%s/fused/workers=%d", tc.name, w), func(b *testing.B) {
				tc.m.Init(n)
				f := newFused(pool, tc.m, benchBlocks, g, 0.01, n)
				var pass, tri float64
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start := time.Now()
					f.step(x, grad, i)
					pass += time.Since(start).Seconds()
					tri += triad(pool)
				}
				b.ReportMetric(pass/float64(b.N), "s/pass")
				b.ReportMetric(pass/tri, "x_triad")
			})
			if w > 1 {
				continue
			}
			b.Run(fmt.Sprintf("%s/serial", tc.name), func(b *testing.B) {
				tc.m.Init(n)
				var pass, tri float64
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start := time.Now()
					clear(grad)
					benchSink += AddPsiGrad(grad, x, benchBlocks, g)
					Step(tc.m, x, grad, i)
					pass += time.Since(start).Seconds()
					tri += triad(nil)
				}
				b.ReportMetric(pass/float64(b.N), "s/pass")
				b.ReportMetric(pass/tri, "x_triad")
			})
		}
	}
}

// BenchmarkSmallDense compares the d x d work of a gauge round on optim's
// own code (gemm on GemmAcc, the one-sided Jacobi SVD: the same bits on
// every build) with gonum's Dgemm and Dgesvd that it replaced, alternately
// in every iteration (so load affects both alike), at d = 3 (artificial),
// 30 (MovieLens) and 100 (DWE). It reports each op's median time and the
// median ratio ours/gonum (and the ratio of the fastest times). A Goldstone round at k2 = 10 takes 2 + 4 deg(s)
// products per node and step (H_s) plus exp(Gamma_t); a Procrustes round or
// a gauge-gap measurement takes one SVD and one product per edge.
func BenchmarkSmallDense(b *testing.B) {
	for _, d := range []int{3, 30, 100} {
		rng := rand.New(rand.NewPCG(71, uint64(d)))
		a, m := randVec(rng, d*d, 1), randVec(rng, d*d, 1)
		c, work := make([]float64, d*d), make([]float64, 2*d*d)
		ut, s, vt := make([]float64, d*d), make([]float64, d), make([]float64, d*d)
		impl := blasgonum.Implementation{}
		lw := []float64{0}
		lapackgonum.Implementation{}.Dgesvd(lapack.SVDAll, lapack.SVDAll, d, d, make([]float64, d*d), d, make([]float64, d), make([]float64, d*d), d, make([]float64, d*d), d, lw, -1)
		lwork := make([]float64, int(lw[0]))
		ga, gs, gu, gvt := make([]float64, d*d), make([]float64, d), make([]float64, d*d), make([]float64, d*d)
		ops := []struct {
			name       string
			ours, them func()
		}{
			{"gemm(T,N)", func() { gemm(true, false, d, d, d, 0.5, a, d, m, d, 1, c, d, work) },
				func() { impl.Dgemm(blas.Trans, blas.NoTrans, d, d, d, 0.5, a, d, m, d, 1, c, d) }},
			{"gemm(N,T)", func() { gemm(false, true, d, d, d, -0.5, a, d, m, d, 1, c, d, work) },
				func() { impl.Dgemm(blas.NoTrans, blas.Trans, d, d, d, -0.5, a, d, m, d, 1, c, d) }},
			{"SVD", func() { SVD(ut, s, vt, m, d, d) },
				func() {
					copy(ga, m)
					lapackgonum.Implementation{}.Dgesvd(lapack.SVDAll, lapack.SVDAll, d, d, ga, d, gs, gu, d, gvt, d, lwork, len(lwork))
				}},
		}
		for _, op := range ops {
			b.Run(fmt.Sprintf("%s/d=%d", op.name, d), func(b *testing.B) {
				reps := max(1, 200000/(d*d*d))
				var ours, them, ratios []float64
				for b.Loop() {
					t0 := time.Now()
					for range reps {
						op.ours()
					}
					t1 := time.Now()
					for range reps {
						op.them()
					}
					t2 := time.Now()
					o, g := t1.Sub(t0).Seconds()/float64(reps), t2.Sub(t1).Seconds()/float64(reps)
					ours, them, ratios = append(ours, o), append(them, g), append(ratios, o/g)
				}
				b.ReportMetric(medianOf(ours)*1e6, "us/ours")
				b.ReportMetric(medianOf(them)*1e6, "us/gonum")
				b.ReportMetric(medianOf(ratios), "ours/gonum")
				// The fastest of each: robust to bursts of load on a shared machine.
				b.ReportMetric(slices.Min(ours)/slices.Min(them), "min_ours/min_gonum")
			})
		}
	}
}

func medianOf(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}
