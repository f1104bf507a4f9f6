package figures

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

var sinkIdx []int

func BenchmarkDownsample(b *testing.B) {
	for _, n := range []int{20000, 1000000} {
		x, y := make([]float64, n), make([]float64, n)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range x {
			x[i] = float64(i + 1)
			y[i] = math.Pow(x[i], -0.5) * (1 + 0.1*rng.NormFloat64())
		}
		b.Run(itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkIdx = downsample(x, y, maxDrawPoints, true)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
		})
	}
}

// BenchmarkCurves renders the artificial-experiment figure: 2 log-log panels
// of 6 series of 20000 steps each.
func BenchmarkCurves(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	var panels [2]Panel
	for p := range panels {
		panels[p] = Panel{XLabel: "step", YLabel: "y", LogX: true, LogY: true}
		for s := range 6 {
			x, y := powerCurve(20000, 10, 0.3+0.1*float64(s), 0, rng)
			panels[p].Series = append(panels[p].Series, Series{Name: itoa(s), X: x, Y: y})
		}
	}
	spec := CurveSpec{Title: "bench", Panels: panels[:]}
	path := filepath.Join(b.TempDir(), "bench.png")
	b.ReportAllocs()
	for b.Loop() {
		if err := Curves(path, spec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "figures/s")
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}
