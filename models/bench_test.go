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
	lb.x, lb.grad = make([]float64, np), make([]float64, np)
	const chunk = 1 << 20
	lb.pool.Chunks(np, chunk, func(c, lo, hi int) {
		rng := rand.NewPCG(uint64(c), 3)
		for i := lo; i < hi; i++ { // uniform, std 0.1: cheaper than normal at 5e8 entries
			lb.x[i] = 0.1 * math.Sqrt(12) * (float64(rng.Uint64()>>11)/(1<<53) - 0.5)
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

// initState allocates the streaming pass's state array on first use: the
// overhead benchmark does not need it, which saves 4 GB at 20M scale.
func (lb *logisticBench) initState() {
	if lb.state != nil {
		return
	}
	lb.state = make([]float64, len(lb.x))
	lb.pool.Chunks(len(lb.state), 1<<20, func(_, lo, hi int) {
		for i := range lb.state[lo:hi] {
			lb.state[lo+i] = 1
		}
	})
}

func BenchmarkLogisticMF(b *testing.B) {
	lb := setupLogisticBench(b)
	lb.initState()
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

// BenchmarkGoldstoneOverhead measures, on the LogisticMF benchmark model (same
// sizes and environment variables as BenchmarkLogisticMF), one full training
// step (LocalLoss + optim.AddPsiGrad + one AdaGrad step) and one gauge round
// on the same x, alternately in each iteration, and reports the gauge
// overhead at k1 = 100 steps per round:
//
//	overhead_% = 100 * round / (100 * step + round)
//
// from the medians of the per-iteration times (the machine is shared and
// noisy; the pairs are timed back to back). Goldstone uses k2 = 10.
func BenchmarkGoldstoneOverhead(b *testing.B) {
	const k1 = 100
	lb := setupLogisticBench(b)
	m := lb.m
	blocks, graph := m.Blocks(), m.Graph()
	ada := &optim.AdaGrad{Rate: optim.Schedule{Rho0: 1}}
	ada.Init(len(lb.x))
	for _, tc := range []struct {
		name  string
		gauge optim.Gauge
	}{
		{"Goldstone", &optim.Goldstone{K2: 10}},
		{"Procrustes", &optim.Procrustes{}},
	} {
		b.Run(fmt.Sprintf("%s/%d", tc.name, lb.n), func(b *testing.B) {
			if err := tc.gauge.Init(blocks, graph); err != nil {
				b.Fatal(err)
			}
			var steps, rounds []float64
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				sinkLoss = m.LocalLoss(lb.grad, lb.x)
				sinkLoss += optim.AddPsiGrad(lb.grad, lb.x, blocks, graph)
				ada.Step(lb.x, lb.grad, i)
				mid := time.Now()
				sinkLoss += tc.gauge.Round(lb.x).PsiAfter
				steps = append(steps, mid.Sub(start).Seconds())
				rounds = append(rounds, time.Since(mid).Seconds())
			}
			slices.Sort(steps)
			slices.Sort(rounds)
			step, round := steps[len(steps)/2], rounds[len(rounds)/2]
			b.ReportMetric(step, "s/step")
			b.ReportMetric(round, "s/round")
			b.ReportMetric(100*round/(k1*step+round), "overhead_%")
		})
	}
}
