package dwe

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

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
// fullbatch: one full-batch (V x V pairs) MAP loss+gradient evaluation on
// synthetic counts at T = 2 steps, reported per time step (s/timestep) and
// extrapolated linearly to T = 188 (s/step_T188_extrapolated); it also reports
// the size of x, grad and Adam's two moment arrays at T = 188 (computed from
// NumParams, not allocated).
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
	b.Run(fmt.Sprintf("fullbatch/V=%d/d=%d", paperV, paperD), func(b *testing.B) {
		const tSteps = 2
		rng := rand.New(rand.NewPCG(1, 1))
		m, err := NewMAP(RandomCounts(rng, paperV, tSteps, 20), Config{Dim: paperD, Pool: benchPool(b)})
		if err != nil {
			b.Fatal(err)
		}
		x := make([]float64, m.NumParams())
		g := make([]float64, len(x))
		m.Init(x, rng)
		m.LocalLoss(g, x) // warm scratch
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			sinkLoss = m.LocalLoss(g, x)
		}
		perStep := b.Elapsed().Seconds() / float64(b.N) / tSteps
		b.ReportMetric(perStep, "s/timestep")
		b.ReportMetric(perStep*paperT, "s/step_T188_extrapolated")
		n := paperT * 2 * paperV * paperD
		b.ReportMetric(float64(4*8*n)/1e9, "GB_x+grad+adam_T188")
	})
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
