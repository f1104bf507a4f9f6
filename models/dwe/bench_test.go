package dwe

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"goldstone/optim"
)

var sinkLoss float64

// BenchmarkMAPStep measures one full-batch (or minibatch) MAP loss+gradient
// evaluation, the cost of one optimizer step. pairs/s counts (word, context)
// pairs per time step times steps.
func BenchmarkMAPStep(b *testing.B) {
	for _, bc := range []struct {
		v, t, d, nnz int
		batch        int // 0: full batch
	}{
		{500, 4, 100, 20, 0},
		{2000, 4, 100, 20, 0},
		{10000, 4, 100, 20, 1000}, // paper V and d, minibatch 1000 x 1000; T reduced for memory
	} {
		name := fmt.Sprintf("V=%d/T=%d/d=%d/batch=%d", bc.v, bc.t, bc.d, bc.batch)
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			c := RandomCounts(rng, bc.v, bc.t, bc.nnz)
			m, err := NewMAP(c, Config{Dim: bc.d, Pool: benchPool(b)})
			if err != nil {
				b.Fatal(err)
			}
			x := make([]float64, m.NumParams())
			g := make([]float64, len(x))
			m.Init(x, rng)
			if bc.batch > 0 {
				m.Resample(rng, bc.batch, bc.batch)
			}
			m.LocalLoss(g, x) // warm scratch
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				sinkLoss = m.LocalLoss(g, x)
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			rows := bc.v
			if bc.batch > 0 {
				rows = bc.batch
			}
			pairs := float64(rows) * float64(rows) * float64(bc.t)
			b.ReportMetric(pairs/sec, "pairs/s")
			b.ReportMetric(sec/float64(bc.t), "s/timestep")
			b.ReportMetric(float64(8*2*len(x)), "param+grad-bytes")
		})
	}
}

// BenchmarkVariationalStep is BenchmarkMAPStep for the BBVI objective.
func BenchmarkVariationalStep(b *testing.B) {
	for _, bc := range []struct{ v, t, d, batch int }{
		{2000, 4, 100, 0},
		{10000, 4, 100, 1000},
	} {
		b.Run(fmt.Sprintf("V=%d/T=%d/d=%d/batch=%d", bc.v, bc.t, bc.d, bc.batch), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			c := RandomCounts(rng, bc.v, bc.t, 20)
			m, err := NewVariational(c, Config{Dim: bc.d, Pool: benchPool(b)})
			if err != nil {
				b.Fatal(err)
			}
			x := make([]float64, m.NumParams())
			g := make([]float64, len(x))
			m.Init(x, rng)
			m.Resample(rng, bc.batch, bc.batch)
			m.LocalLoss(g, x)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				sinkLoss = m.LocalLoss(g, x)
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(sec/float64(bc.t), "s/timestep")
			b.ReportMetric(float64(8*(2*len(x)+6*m.t*m.s)), "model-bytes")
		})
	}
}

// Paper scale for the DWE experiment (Google Books): V = 10,000 words, d = 100,
// T = 188 time steps.
const (
	paperV = 10000
	paperD = 100
	paperT = 188
)

// BenchmarkPaperScale measures the DWE MAP costs at paper scale.
//
// fullbatch: see benchFullBatch.
//
// gauge_overhead: Goldstone-GD overhead at k1 = k2 = 10 in the minibatch phase
// (1000 x 1000 words per step). Each iteration times one full minibatch
// training step (Resample'd once; LocalLoss + optim.AddPsiGrad + an Adam step)
// of a T = 8 model, and one Goldstone round (K2 = 10, default settings) on a
// separate T = 188, N = 2V = 20,000, d = 100 parameter vector (3 GB) on the
// chain graph of the model, back to back. The step time is scaled by 188/8
// (every part of a step is linear in T) and
//
//	overhead_% = 100 * round / (10 * step_T188 + round)
//
// from the medians over iterations.
func BenchmarkPaperScale(b *testing.B) {
	v, tSteps := paperV, 2
	if e := getenvInt(b, "GOLDSTONE_BENCH_V"); e > 0 {
		v = e
	}
	if e := getenvInt(b, "GOLDSTONE_BENCH_T"); e > 0 {
		tSteps = e
	}
	switch dt := os.Getenv("GOLDSTONE_BENCH_DTYPE"); dt {
	case "", "float64":
		b.Run(fmt.Sprintf("fullbatch/V=%d/d=%d/T=%d", v, paperD, tSteps), func(b *testing.B) { benchFullBatch(b, v, tSteps) })
	case "float32":
		b.Run(fmt.Sprintf("fullbatch32/V=%d/d=%d/T=%d", v, paperD, tSteps), func(b *testing.B) { benchFullBatch32(b, v, tSteps) })
	default:
		b.Fatalf("GOLDSTONE_BENCH_DTYPE=%q: want float64 or float32", dt)
	}
	b.Run(fmt.Sprintf("gauge_overhead/V=%d/d=%d/batch=1000", paperV, paperD), func(b *testing.B) {
		const (
			tSmall = 8
			k1     = 10
		)
		rng := rand.New(rand.NewPCG(2, 1))
		m, err := NewMAP(RandomCounts(rng, paperV, tSmall, 20), Config{Dim: paperD, Pool: benchPool(b)})
		if err != nil {
			b.Fatal(err)
		}
		x := make([]float64, m.NumParams())
		g := make([]float64, len(x))
		m.Init(x, rng)
		m.Resample(rng, 1000, 1000)
		adam := DefaultAdam()
		adam.Init(len(x))
		blocks, graph := m.Blocks(), m.Graph()

		big := optim.Blocks{T: paperT, N: 2 * paperV, D: paperD}
		times := make([]float64, paperT)
		for i := range times {
			times[i] = float64(i)
		}
		xBig := make([]float64, big.Len())
		pool := optim.NewPool(0)
		pool.Chunks(len(xBig), 1<<20, func(c, lo, hi int) {
			r := rand.New(rand.NewPCG(3, uint64(c)))
			for i := lo; i < hi; i++ {
				xBig[i] = 0.1 * r.NormFloat64()
			}
		})
		pool.Close()
		gauge := &optim.Goldstone{K2: 10, Pool: benchPool(b)}
		if err := gauge.Init(big, ChainGraph(times, m.Config().Diffusion)); err != nil {
			b.Fatal(err)
		}
		var steps, rounds []float64
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			start := time.Now()
			sinkLoss = m.LocalLoss(g, x)
			sinkLoss += optim.AddPsiGrad(g, x, blocks, graph)
			optim.Step(adam, x, g, i)
			mid := time.Now()
			sinkLoss += gauge.Round(xBig).PsiAfter
			steps = append(steps, mid.Sub(start).Seconds())
			rounds = append(rounds, time.Since(mid).Seconds())
		}
		slices.Sort(steps)
		slices.Sort(rounds)
		step := steps[len(steps)/2] * paperT / tSmall
		round := rounds[len(rounds)/2]
		b.ReportMetric(steps[len(steps)/2]/tSmall, "s/timestep")
		b.ReportMetric(step, "s/step_T188_extrapolated")
		b.ReportMetric(round, "s/round_T188")
		b.ReportMetric(100*round/(k1*step+round), "overhead_%")
	})
}

// benchPool returns a pool with GOMAXPROCS workers, closed when b ends.
func benchPool(b *testing.B) *optim.Pool {
	p := optim.NewPool(0)
	b.Cleanup(p.Close)
	return p
}

// benchFullBatch times one full-batch (V x V pairs) MAP loss+gradient
// evaluation on synthetic counts at T = tSteps steps (default V = 10,000 and
// T = 2; GOLDSTONE_BENCH_V and GOLDSTONE_BENCH_T set them, e.g. T = 16 to
// give 16 workers a time step each; the pool has GOMAXPROCS workers, set
// with -cpu), reported per time step
// (s/timestep) and extrapolated linearly to T = 188
// (s/step_T188_extrapolated); it also reports the size of x, grad and Adam's
// two moment arrays at T = 188 (computed from NumParams, not allocated).
//
// The roofline: a time step's three products (X = U C^T, U's gradient X C
// and C's X^T U, U and C V x d: 6 V^2 d flops, which the kernel does tile by
// tile besides its element-wise work) are timed in every iteration, right
// after the kernel, as plain DGEMMs of the same shapes on the same cores:
// gonum's native Dgemm (gonum.org/v1/gonum/blas/gonum, its own goroutines)
// on the whole V x V matrix, and optim's GemmNT/GemmAcc on the kernel's
// tiles (the kernel without its element-wise work, the time steps on the
// pool as the kernel runs them). GFLOP/s counts 6 V^2 d per time step for
// all three; dgemm_over_kernel is the median over iterations of the kernel's
// time over the DGEMM's (1 = the kernel runs at the DGEMM's speed).
// GOLDSTONE_BENCH_GONUM=0 leaves gonum's Dgemm out (about 40 s per
// iteration at V = 10,000 on 2 cores; .ci/peers-bench.sh takes OpenBLAS's
// GEMM as the reference instead).
func benchFullBatch(b *testing.B, v, tSteps int) {
	rng := rand.New(rand.NewPCG(1, 1))
	pool := benchPool(b)
	m, err := NewMAP(RandomCounts(rng, v, tSteps, 20), Config{Dim: paperD, Pool: pool})
	if err != nil {
		b.Fatal(err)
	}
	x := make([]float64, m.NumParams())
	g := make([]float64, len(x))
	m.Init(x, rng)
	m.LocalLoss(g, x) // warm scratch
	const d = paperD
	withGonum := os.Getenv("GOLDSTONE_BENCH_GONUM") != "0"
	var big []float64
	if withGonum {
		big = make([]float64, v*v)
	}
	gu, gc := make([]float64, v*d), make([]float64, v*d)
	tiles := make([][]float64, tSteps)
	for t := range tiles {
		tiles[t] = make([]float64, tileScratchLen(DefaultTile, v, paperD))
	}
	flops := 6 * float64(v) * float64(v) * float64(d)
	var ks, gs, ops, rg, ro []float64
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		sinkLoss = m.LocalLoss(g, x)
		t1 := time.Now()
		u, c := x[:v*d], x[v*d:2*v*d]
		if withGonum {
			gonumProducts(big, gu, gc, u, c, v, d)
		}
		t2 := time.Now()
		pool.Chunks(tSteps, 1, func(_, lo, hi int) {
			for t := lo; t < hi; t++ {
				zt := x[t*2*v*d : (t+1)*2*v*d]
				gt := g[t*2*v*d : (t+1)*2*v*d]
				tileProducts(gt[:v*d], gt[v*d:], zt[:v*d], zt[v*d:], v, v, d, DefaultTile, tiles[t])
			}
		})
		t3 := time.Now()
		k, gn, op := t1.Sub(t0).Seconds()/float64(tSteps), t2.Sub(t1).Seconds(), t3.Sub(t2).Seconds()/float64(tSteps)
		ks, gs, ops = append(ks, k), append(gs, gn), append(ops, op)
		rg, ro = append(rg, k/gn), append(ro, k/op)
	}
	b.StopTimer()
	med := func(x []float64) float64 { s := slices.Clone(x); slices.Sort(s); return s[len(s)/2] }
	perStep := med(ks)
	b.ReportMetric(perStep, "s/timestep")
	b.ReportMetric(perStep*paperT, "s/step_T188_extrapolated")
	b.ReportMetric(float64(4*8*paperT*2*v*d)/1e9, "GB_x+grad+adam_T188")
	b.ReportMetric(float64(pool.Workers()), "workers")
	b.ReportMetric(flops/perStep/1e9, "GFLOP/s_kernel")
	if withGonum {
		b.ReportMetric(flops/med(gs)/1e9, "GFLOP/s_gonum_dgemm")
		b.ReportMetric(med(rg), "gonum_dgemm_over_kernel")
	}
	b.ReportMetric(flops/med(ops)/1e9, "GFLOP/s_optim_gemm")
	b.ReportMetric(med(ro), "optim_gemm_over_kernel")
}

// gonumProducts computes a time step's three products with gonum's native
// Dgemm: x = u c^T (v x v), gu = x c, gc = x^T u.
func gonumProducts(x, gu, gc, u, c []float64, v, d int) {
	impl.Dgemm(blas.NoTrans, blas.Trans, v, v, d, 1, u, d, c, d, 0, x, v)
	impl.Dgemm(blas.NoTrans, blas.NoTrans, v, d, v, 1, x, v, c, d, 0, gu, d)
	impl.Dgemm(blas.Trans, blas.NoTrans, v, d, v, 1, x, v, u, d, 0, gc, d)
}

// tileProducts is negLogLik's loop without the element-wise work: the same
// tile products, on the same tiles, in the same order, with v packed once
// (tb a multiple of 8, tile of len tileScratchLen(tb, n, d)).
func tileProducts(gu, gv, u, v []float64, m, n, d, tb int, tile []float64) {
	vp := tile[tb*tb:]
	optim.PackNT(vp, v, n, d)
	for i0 := 0; i0 < m; i0 += tb {
		i1 := min(i0+tb, m)
		mi := i1 - i0
		ub := u[i0*d : i1*d]
		for j0 := 0; j0 < n; j0 += tb {
			j1 := min(j0+tb, n)
			nj := j1 - j0
			vb := v[j0*d : j1*d]
			x := tile[:mi*nj]
			optim.GemmNTPacked(x, ub, vb, vp[(j0/8)*32*(d/4):], mi, nj, d)
			optim.GemmAcc(gu[i0*d:i1*d], d, x, nj, 1, vb, d, mi, d, nj)
			optim.GemmAcc(gv[j0*d:j1*d], d, x, 1, nj, ub, d, nj, d, mi)
		}
	}
}

// benchFullBatch32 is benchFullBatch in the float32 mode
// (GOLDSTONE_BENCH_DTYPE=float32): one full-batch evaluation of the float32
// MAP model's local loss and gradient (LocalLoss32: the float32 tile
// products, the element-wise work, the prior; s/timestep,
// GFLOP/s_kernel32 at 6 V^2 d per time step), and in the same iteration,
// right after it, the SGEMM of the same shapes: the kernel's three products
// on the float32 tile kernels alone (gemmNT32, gemmAcc32; the tiles, order
// and pool of the kernel: GFLOP/s_sgemm_tiles, and
// sgemm_tiles_over_kernel, the median of the kernel's time over theirs)
// and, unless GOLDSTONE_BENCH_GONUM=0, gonum's SGEMM (blas32.Gemm, its own
// goroutines) on the whole V x V matrix.
func benchFullBatch32(b *testing.B, v, tSteps int) {
	const d, tb = paperD, DefaultTile
	rng := rand.New(rand.NewPCG(1, 1))
	pool := benchPool(b)
	m, err := NewMAP(RandomCounts(rng, v, tSteps, 20), Config{Dim: d, Pool: pool})
	if err != nil {
		b.Fatal(err)
	}
	z, g := make([]float32, m.NumParams()), make([]float32, m.NumParams())
	m.Init32(z, rng)
	m.LocalLoss32(g, z) // warm scratch
	g2 := make([]float32, len(g))
	tiles, vts, bufs := make([][]float32, tSteps), make([][]float32, tSteps), make([]gemm32Buf, tSteps)
	for t := range tiles {
		tiles[t], vts[t] = make([]float32, tb*tb), make([]float32, v*d)
	}
	withGonum := os.Getenv("GOLDSTONE_BENCH_GONUM") != "0"
	var big []float32
	if withGonum {
		big = make([]float32, v*v)
	}
	gu, gc := make([]float32, v*d), make([]float32, v*d)
	flops := 6 * float64(v) * float64(v) * float64(d)
	var ks, ts, gs, rt, rg []float64
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		sinkLoss = m.LocalLoss32(g, z)
		t1 := time.Now()
		pool.Chunks(tSteps, 1, func(_, lo, hi int) {
			for t := lo; t < hi; t++ {
				zt, gt := z[t*2*v*d:(t+1)*2*v*d], g2[t*2*v*d:(t+1)*2*v*d]
				tileProducts32(gt[:v*d], gt[v*d:], zt[:v*d], zt[v*d:], vts[t], v, v, d, tb, tiles[t], &bufs[t])
			}
		})
		t2 := time.Now()
		if withGonum {
			sgemmProducts(big, gu, gc, z[:v*d], z[v*d:2*v*d], v, d)
		}
		t3 := time.Now()
		k, tp, gn := t1.Sub(t0).Seconds()/float64(tSteps), t2.Sub(t1).Seconds()/float64(tSteps), t3.Sub(t2).Seconds()
		ks, ts, gs = append(ks, k), append(ts, tp), append(gs, gn)
		rt, rg = append(rt, k/tp), append(rg, k/gn)
	}
	b.StopTimer()
	med := func(x []float64) float64 { s := slices.Clone(x); slices.Sort(s); return s[len(s)/2] }
	perStep := med(ks)
	b.ReportMetric(perStep, "s/timestep")
	b.ReportMetric(perStep*paperT, "s/step_T188_extrapolated")
	b.ReportMetric(float64(4*4*paperT*2*v*d)/1e9, "GB_x+grad+adam_T188")
	b.ReportMetric(float64(pool.Workers()), "workers")
	b.ReportMetric(flops/perStep/1e9, "GFLOP/s_kernel32")
	b.ReportMetric(flops/med(ts)/1e9, "GFLOP/s_sgemm_tiles")
	b.ReportMetric(med(rt), "sgemm_tiles_over_kernel")
	if withGonum {
		b.ReportMetric(flops/med(gs)/1e9, "GFLOP/s_gonum_sgemm")
		b.ReportMetric(med(rg), "gonum_sgemm_over_kernel")
	}
}

// sgemmProducts is gonumProducts in float32 (blas32.Gemm).
func sgemmProducts(x, gu, gc, u, c []float32, v, d int) {
	X := blas32.General{Rows: v, Cols: v, Stride: v, Data: x}
	U := blas32.General{Rows: v, Cols: d, Stride: d, Data: u}
	C := blas32.General{Rows: v, Cols: d, Stride: d, Data: c}
	blas32.Gemm(blas.NoTrans, blas.Trans, 1, U, C, 0, X)
	blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, X, C, 0, blas32.General{Rows: v, Cols: d, Stride: d, Data: gu})
	blas32.Gemm(blas.Trans, blas.NoTrans, 1, X, U, 0, blas32.General{Rows: v, Cols: d, Stride: d, Data: gc})
}

// tileProducts32 is tileProducts on the float32 kernels (v transposed
// once, into vt: d x n).
func tileProducts32(gu, gv, u, v, vt []float32, m, n, d, tb int, tile []float32, buf *gemm32Buf) {
	transpose32(vt, v, n, d)
	for i0 := 0; i0 < m; i0 += tb {
		i1 := min(i0+tb, m)
		mi := i1 - i0
		ub := u[i0*d : i1*d]
		for j0 := 0; j0 < n; j0 += tb {
			j1 := min(j0+tb, n)
			nj := j1 - j0
			vb := v[j0*d : j1*d]
			x := tile[:mi*nj]
			gemmNT32(x, ub, vt[j0:], mi, nj, d, n, buf)
			gemmAcc32(gu[i0*d:i1*d], d, x, nj, 1, vb, d, mi, d, nj, buf) // gu += x v
			gemmAcc32(gv[j0*d:j1*d], d, x, 1, nj, ub, d, nj, d, mi, buf) // gv += x^T u
		}
	}
}

// BenchmarkTileProducts times the DWE kernel's three tile products alone on
// one core (run with -cpu 1), in float64 (optim.PackNT + GemmNTPacked,
// GemmAcc for gu += x v and gv += x^T u) and float32 (gemmNT32, gemmAcc32),
// over all 64 x 64 tiles of V = 1,024 words and contexts, d = 100, each
// product timed separately in every iteration. GFLOP/s (2 tb^2 d per tile
// and product) are from the fastest iteration of each, which on a loaded
// machine is the one least disturbed: compare them with the FMA peak of a
// core (2 FMA units x 8 float64 or 16 float32 lanes x 2 flops x the clock).
// f64_elem is the kernel's element-wise work on the same tiles (on the
// AVX-512 kernel where the CPU has it, else AVX2; f64_elem_avx2 the AVX2
// kernel on an AVX-512 CPU, f64_elem_go the Go loop), its time counted as 2 tb^2 d flops like one
// product, so that with p the products' GFLOP/s and e its figure, the
// kernel takes about 1 + p/(3 e) times its three products' time. f32_elem
// is the float32 mode's (elemRow32, on elem32AVX512x16 where the CPU has
// AVX-512, else elem32AVX2x8; f32_elem_avx2 the AVX2 kernel on an AVX-512
// CPU, f32_elem_go the Go twin), to compare with the f32 products.
func BenchmarkTileProducts(b *testing.B) {
	const tb, d, v = DefaultTile, paperD, 1024
	rng := rand.New(rand.NewPCG(4, 1))
	u, c := make([]float64, v*d), make([]float64, v*d)
	u32, c32 := make([]float32, v*d), make([]float32, v*d)
	for i := range u {
		u[i], c[i] = rng.NormFloat64(), rng.NormFloat64()
		u32[i], c32[i] = float32(u[i]), float32(c[i])
	}
	gu, gc, x, vp := make([]float64, v*d), make([]float64, v*d), make([]float64, tb*tb), make([]float64, optim.PackNTLen(v, d))
	gu32, gc32, x32, ct32 := make([]float32, v*d), make([]float32, v*d), make([]float32, tb*tb), make([]float32, v*d)
	var buf gemm32Buf
	prods := []struct {
		name string
		fn   func(i0, j0 int)
	}{
		{"f64_xUCt", func(i0, j0 int) { optim.GemmNTPacked(x, u[i0*d:], c[j0*d:], vp[j0/8*32*(d/4):], tb, tb, d) }},
		{"f64_gU+=xC", func(i0, j0 int) { optim.GemmAcc(gu[i0*d:], d, x, tb, 1, c[j0*d:], d, tb, d, tb) }},
		{"f64_gC+=xtU", func(i0, j0 int) { optim.GemmAcc(gc[j0*d:], d, x, 1, tb, u[i0*d:], d, tb, d, tb) }},
		{"f32_xUCt", func(i0, j0 int) { gemmNT32(x32, u32[i0*d:], ct32[j0:], tb, tb, d, v, &buf) }},
		{"f32_gU+=xC", func(i0, j0 int) { gemmAcc32(gu32[i0*d:], d, x32, tb, 1, c32[j0*d:], d, tb, d, tb, &buf) }},
		{"f32_gC+=xtU", func(i0, j0 int) { gemmAcc32(gc32[j0*d:], d, x32, 1, tb, u32[i0*d:], d, tb, d, tb, &buf) }},
	}
	// The element-wise work of the float64 kernel on the same tiles
	// (negLogLik's per-row calls on a 64 x 64 tile of scores, refreshed
	// from xs before every tile; no positive counts: 20 in 10,000 columns
	// at the paper's density), counted as if it were the tile's x = U C^T
	// (2 tb^2 d flops) so that its GFLOP/s compare with the products'.
	xs, bw := make([]float64, tb*tb), make([]float64, v)
	for i := range xs {
		xs[i] = 4 * rng.NormFloat64()
	}
	for i := range bw {
		bw[i] = rng.Float64()
	}
	var noPos sparseRows
	prods = append(prods, struct {
		name string
		fn   func(i0, j0 int)
	}{"f64_elem", func(i0, j0 int) {
		copy(x, xs)
		for r := range tb {
			pos := tilePositives{sp: noPos, lo: int32(j0), hi: int32(j0 + tb)}
			sinkLoss = elemRowAVX2(x[r*tb:(r+1)*tb], bw[j0:j0+tb], 0.5, 1, &pos, sinkLoss)
		}
	}})
	if useElemAVX512 { // the AVX2 kernel, for comparison
		elem := prods[len(prods)-1].fn
		prods = append(prods, struct {
			name string
			fn   func(i0, j0 int)
		}{"f64_elem_avx2", func(i0, j0 int) {
			useElemAVX512 = false
			defer func() { useElemAVX512 = true }()
			elem(i0, j0)
		}})
	}
	prods = append(prods, struct {
		name string
		fn   func(i0, j0 int)
	}{"f64_elem_go", func(i0, j0 int) { // the Go loop (arm64, purego, CPUs without AVX2)
		copy(x, xs)
		for r := range tb {
			pos := tilePositives{sp: noPos, lo: int32(j0), hi: int32(j0 + tb)}
			sinkLoss = elemRowGo(x[r*tb:(r+1)*tb], bw[j0:j0+tb], 0.5, 1, &pos, sinkLoss)
		}
	}})
	// The float32 mode's element-wise work (elemRow32) on the same
	// scores rounded to float32, and its Go twin where the kernel runs.
	xs32 := narrow32(xs)
	var ebuf elem32Buf
	elem32 := func(i0, j0 int) {
		copy(x32, xs32)
		for r := range tb {
			pos := tilePositives{sp: noPos, lo: int32(j0), hi: int32(j0 + tb)}
			sinkLoss = elemRow32(x32[r*tb:(r+1)*tb], bw[j0:j0+tb], 0.5, 1, &pos, sinkLoss, &ebuf)
		}
	}
	prods = append(prods, struct {
		name string
		fn   func(i0, j0 int)
	}{"f32_elem", elem32})
	if useElem32AVX512 {
		prods = append(prods, struct {
			name string
			fn   func(i0, j0 int)
		}{"f32_elem_avx2", func(i0, j0 int) {
			useElem32AVX512 = false
			defer func() { useElem32AVX512 = true }()
			elem32(i0, j0)
		}})
	}
	if useElem32AVX2 {
		a5 := useElem32AVX512
		prods = append(prods, struct {
			name string
			fn   func(i0, j0 int)
		}{"f32_elem_go", func(i0, j0 int) {
			useElem32AVX2, useElem32AVX512 = false, false
			defer func() { useElem32AVX2, useElem32AVX512 = true, a5 }()
			elem32(i0, j0)
		}})
	}
	best := make([]float64, len(prods))
	b.ResetTimer()
	for range b.N {
		optim.PackNT(vp, c, v, d) // once per call in negLogLik (not timed; nor is transpose32)
		transpose32(ct32, c32, v, d)
		for k, p := range prods {
			t0 := time.Now()
			for i0 := 0; i0 < v; i0 += tb {
				for j0 := 0; j0 < v; j0 += tb {
					p.fn(i0, j0)
				}
			}
			if s := time.Since(t0).Seconds(); best[k] == 0 || s < best[k] {
				best[k] = s
			}
		}
	}
	flops := 2 * float64(v) * float64(v) * d
	for k, p := range prods {
		b.ReportMetric(flops/best[k]/1e9, "GFLOP/s_"+p.name)
	}
}
