package models

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

var (
	sinkLoss float64
	// benchLMF caches the LogisticMF benchmark setup across sub-benchmarks.
	benchLMF *logisticBench
)

func BenchmarkDenseMF(b *testing.B) {
	// The paper's artificial experiment: 10 x 10, d = 3, T = 30, lambda = 10.
	m := &DenseMF{X: [][]float64{Artificial(1, 10, 10, 3, 1e-3)}, Rows: 10, Cols: 10, D: 3, T: 30, Lambda: 10}
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(1, 1)))
	g := make([]float64, len(x))
	b.ReportAllocs()
	for b.Loop() {
		sinkLoss = m.LocalLoss(g, x)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/step")
}

type logisticBench struct {
	n, users, items int
	m               *LogisticMF
	x, grad, state  []float64
	pool            *optim.Pool
	streamFn        func(c, lo, hi int)
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return v
}

// setupLogisticBench builds (once) synthetic ratings with Zipf marginals at
// GOLDSTONE_BENCH_RATINGS (default 1e6) ratings, GOLDSTONE_BENCH_USERS (20000)
// users and GOLDSTONE_BENCH_ITEMS (5000) items over T = 100 bins, d = 30.
func setupLogisticBench(b *testing.B) *logisticBench {
	n := envInt(b, "GOLDSTONE_BENCH_RATINGS", 1_000_000)
	users := envInt(b, "GOLDSTONE_BENCH_USERS", 20_000)
	items := envInt(b, "GOLDSTONE_BENCH_ITEMS", 5_000)
	if lb := benchLMF; lb != nil && lb.n == n && lb.users == users && lb.items == items {
		return lb
	}
	benchLMF = nil
	lb := &logisticBench{n: n, users: users, items: items, pool: optim.NewPool(0)}
	lb.m = &LogisticMF{
		Train: synthRatings(1, n, users, items, 100),
		Users: users, Items: items, D: 30, T: 100, Lambda: 10, Gamma: 1, Pool: lb.pool,
	}
	np := lb.m.NumParams()
	lb.x, lb.grad, lb.state = make([]float64, np), make([]float64, np), make([]float64, np)
	const chunk = 1 << 20
	lb.pool.Chunks(np, chunk, func(c, lo, hi int) {
		rng := rand.NewPCG(uint64(c), 3)
		for i := lo; i < hi; i++ { // uniform, std 0.1: cheaper than normal at 5e8 entries
			lb.x[i] = 0.1 * math.Sqrt(12) * (float64(rng.Uint64()>>11)/(1<<53) - 0.5)
			lb.state[i] = 1
		}
	})
	start := time.Now()
	sinkLoss = lb.m.LocalLoss(lb.grad, lb.x) // prepares the grouped copies
	b.Logf("%d ratings, %d users, %d items, %d params: setup+first step %.2fs",
		n, users, items, np, time.Since(start).Seconds())
	lb.streamFn = lb.streamChunk
	benchLMF = lb
	return lb
}

// streamChunk is a streaming pass like one optimizer step: it reads x, grad
// and one state array and writes grad and state.
func (lb *logisticBench) streamChunk(_, lo, hi int) {
	x, g, s := lb.x[lo:hi], lb.grad[lo:hi], lb.state[lo:hi]
	for i, v := range g {
		s[i] += v * v
		g[i] = v + 1e-300*x[i]
	}
}

func (lb *logisticBench) stream() { lb.pool.Chunks(len(lb.x), 1<<16, lb.streamFn) }

func BenchmarkLogisticMF(b *testing.B) {
	lb := setupLogisticBench(b)
	b.Run(fmt.Sprintf("stream/%d", lb.n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lb.stream()
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/step")
	})
	b.Run(fmt.Sprintf("loss/%d", lb.n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkLoss = lb.m.LocalLoss(lb.grad, lb.x)
		}
		step := b.Elapsed().Seconds() / float64(b.N)
		b.ReportMetric(step, "s/step")
		b.ReportMetric(float64(lb.n)/step, "ratings/s")
		// The machine is shared and noisy: time the ratio to a streaming pass
		// on interleaved pairs and report the median.
		ratios := make([]float64, 5)
		for i := range ratios {
			start := time.Now()
			sinkLoss = lb.m.LocalLoss(lb.grad, lb.x)
			mid := time.Now()
			lb.stream()
			ratios[i] = mid.Sub(start).Seconds() / time.Since(mid).Seconds()
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "x_stream")
	})
}
