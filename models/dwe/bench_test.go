package dwe

import (
	"fmt"
	"math/rand/v2"
	"testing"
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
			m, err := NewMAP(c, Config{Dim: bc.d})
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
			m, err := NewVariational(c, Config{Dim: bc.d})
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
