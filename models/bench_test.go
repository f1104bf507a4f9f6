package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"
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
	key           string
	m             *LogisticMF
	x, grad, a, c []float64 // a, c: the triad's destination and second source
	x32           []float32 // x in float32 (GOLDSTONE_BENCH_DTYPE=float32)
	pool          *optim.Pool
	triadFn       func(c, lo, hi int)
	params        int64
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

// maxRSS returns the peak resident set size of the process in bytes.
func maxRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss * 1024 // KiB on Linux
}

// setupLogisticBench builds (once per size) the logistic MF benchmark model:
// GOLDSTONE_BENCH_RATINGS ratings (default 2,000,000), GOLDSTONE_BENCH_USERS
// users (30,000), GOLDSTONE_BENCH_ITEMS items (6,000), GOLDSTONE_BENCH_T bins
// (100), GOLDSTONE_BENCH_D dimensions (30): ML-20M density at 1/5 scale, the
// PyTorch peer's scale c. GOLDSTONE_BENCH_DIST is "uniform" (default: users,
// items and bins uniform, as the peer) or "zipf" (Zipf users and items). The
// hyperparameters are the peer's: gamma 1e-2, lambda 1. The model runs on a
// pool of GOMAXPROCS workers (set with -cpu).
func setupLogisticBench(b *testing.B) *logisticBench {
	n := envInt(b, "GOLDSTONE_BENCH_RATINGS", 2_000_000)
	users := envInt(b, "GOLDSTONE_BENCH_USERS", 30_000)
	items := envInt(b, "GOLDSTONE_BENCH_ITEMS", 6_000)
	bins := envInt(b, "GOLDSTONE_BENCH_T", 100)
	d := envInt(b, "GOLDSTONE_BENCH_D", 30)
	dist := os.Getenv("GOLDSTONE_BENCH_DIST")
	if dist == "" {
		dist = "uniform"
	}
	if dist != "uniform" && dist != "zipf" {
		b.Fatalf("GOLDSTONE_BENCH_DIST=%q: want uniform or zipf", dist)
	}
	key := fmt.Sprint(n, users, items, bins, d, dist, runtime.GOMAXPROCS(0))
	if lb := benchLMF; lb != nil && lb.key == key {
		return lb
	}
	benchLMF = nil
	runtime.GC()
	lb := &logisticBench{key: key, pool: optim.NewPool(0)}
	var train *Ratings
	if dist == "zipf" {
		train = synthRatings(1, n, users, items, bins)
	} else {
		train = uniformRatings(1, n, users, items, bins)
	}
	lb.m = NewLogisticMF(RatingsSpec{
		Train: train, Users: users, Items: items, D: d, T: bins, Lambda: 1, Gamma: 1e-2, Pool: lb.pool}, false)
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
	b.Logf("%s: %d ratings, %d users, %d items, T=%d, d=%d, %d params, %d workers: setup+first loss %.2fs",
		dist, n, users, items, bins, d, np, lb.pool.Workers(), time.Since(start).Seconds())
	lb.params = int64(np)
	lb.triadFn = lb.triadChunk
	benchLMF = lb
	return lb
}

// uniformRatings draws n ratings with uniform bins, users and items and
// x = +1 with probability 1/2 (the PyTorch peer's data; the peer also makes
// the (t, user, item) triples distinct, which changes about 1e-4 of them here).
func uniformRatings(seed uint64, n, users, items, bins int) *Ratings {
	rng := rand.New(rand.NewPCG(seed, 11))
	r := &Ratings{T: make([]int32, n), User: make([]int32, n), Item: make([]int32, n), X: make([]int8, n)}
	for k := range n {
		r.T[k], r.User[k], r.Item[k] = int32(rng.IntN(bins)), int32(rng.IntN(users)), int32(rng.IntN(items))
		r.X[k] = int8(2*rng.IntN(2) - 1)
	}
	return r
}

// triadArrays allocates the triad's two extra parameter-sized arrays.
func (lb *logisticBench) triadArrays() {
	if lb.a != nil {
		return
	}
	lb.a, lb.c = make([]float64, len(lb.x)), make([]float64, len(lb.x))
	lb.pool.Chunks(len(lb.c), 1<<20, func(_, lo, hi int) {
		for i := range lb.c[lo:hi] {
			lb.a[lo+i], lb.c[lo+i] = 0, 1
		}
	})
}

// triadChunk is the STREAM triad a = x + s c: it reads two parameter-sized
// arrays and writes a third, the memory-bound floor of any dense pass.
func (lb *logisticBench) triadChunk(_, lo, hi int) {
	a, x, c := lb.a[lo:hi], lb.x[lo:hi], lb.c[lo:hi]
	for i, v := range x {
		a[i] = v + 1e-3*c[i]
	}
}

func (lb *logisticBench) triad() { lb.pool.Chunks(len(lb.x), 1<<16, lb.triadFn) }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkTrainStep measures full training steps of the logistic MF model
// through the real training loop, optim.Driver (what a trial runs per step:
// the local loss, then the fused pass that adds the psi gradient and applies
// the optimizer), at the sizes of setupLogisticBench, with
// GOLDSTONE_BENCH_OPT = adagrad (default; rate 0.05 as the PyTorch peer), adam
// or gd. Between steps, inside the same run, it times one parallel triad pass
// over parameter-sized arrays and reports the median of step/triad over the
// b.N steps (the machine is shared and noisy: compare ratios). It reports the
// medians of s/step, s/local (the local loss) and s/dense (the rest of the
// step), and the peak RSS before the triad's arrays were allocated.
// driver_rowsplit runs the same steps with the method hidden from the fused
// pass (the two loops per row it takes for any Method; AdaGrad's own one-loop
// row update is what driver times), so that the two compare in one run;
// GOLDSTONE_BENCH_ROUNDS (default 1) repeats the pair, alternating them.
// With GOLDSTONE_BENCH_DTYPE=float32 the pair is driver and driver_float32,
// the same steps in the float32 mode (x, gradient and optimizer state in
// float32; its triads are those of the float64 arrays).
//
//	go test -run '^$' -bench TrainStep -benchtime 10x -cpu 2 ./models
func BenchmarkTrainStep(b *testing.B) {
	lb := setupLogisticBench(b)
	rss := maxRSS()
	lb.triadArrays()
	var method optim.Method
	var method32 optim.MethodOf[float32]
	switch opt := os.Getenv("GOLDSTONE_BENCH_OPT"); opt {
	case "", "adagrad":
		method = &optim.AdaGrad{Rate: optim.Constant(0.05), Eps: 1e-10}
		method32 = &optim.AdaGradOf[float32]{Rate: optim.Constant(0.05), Eps: 1e-10}
	case "adam":
		method, method32 = &optim.Adam{}, &optim.AdamOf[float32]{}
	case "gd":
		method = &optim.GD{Rate: optim.Constant(0.05), Clip: 1}
		method32 = &optim.GDOf[float32]{Rate: optim.Constant(0.05), Clip: 1}
	default:
		b.Fatalf("GOLDSTONE_BENCH_OPT=%q: want adagrad, adam or gd", opt)
	}
	p := ProblemOf(lb.m)
	local := p.Local
	var localSec float64
	p.Local = func(grad, x []float64) float64 {
		start := time.Now()
		l := local(grad, x)
		localSec = time.Since(start).Seconds()
		return l
	}
	report := func(b *testing.B, steps, locals, triads, ratios []float64) {
		step := median(steps)
		b.ReportMetric(step, "s/step")
		b.ReportMetric(median(locals), "s/local")
		b.ReportMetric(step-median(locals), "s/dense")
		b.ReportMetric(median(triads), "s/triad")
		b.ReportMetric(median(ratios), "step/triad")
		b.ReportMetric(float64(rss)/(1<<30), "GiB_peakRSS")
		b.ReportMetric(float64(lb.params), "params")
	}
	dtype := os.Getenv("GOLDSTONE_BENCH_DTYPE")
	if dtype != "" && dtype != "float64" && dtype != "float32" {
		b.Fatalf("GOLDSTONE_BENCH_DTYPE=%q: want float64 or float32", dtype)
	}
	var p32 optim.ProblemOf[float32]
	if dtype == "float32" {
		p32 = lb.m.Problem32()
		lb.x32 = make([]float32, len(lb.x))
		for i, v := range lb.x {
			lb.x32[i] = float32(v)
		}
		local32 := p32.Local
		p32.Local = func(grad, x []float32) float64 {
			start := time.Now()
			l := local32(grad, x)
			localSec = time.Since(start).Seconds()
			return l
		}
	}
	for range envInt(b, "GOLDSTONE_BENCH_ROUNDS", 1) { // alternate the two
		b.Run("driver", func(b *testing.B) { driverSteps(lb, b, p, method, lb.x, &localSec, report) })
		if dtype == "float32" {
			b.Run("driver_float32", func(b *testing.B) { driverSteps(lb, b, p32, method32, lb.x32, &localSec, report) })
			continue
		}
		// The method behind an interface of its own, which the fused pass
		// does not know: it builds each row's gradient, then calls Update
		// (AdaGrad's pass before its one-loop row update). The same bits.
		b.Run("driver_rowsplit", func(b *testing.B) { driverSteps(lb, b, p, optim.Method(methodOnly{method}), lb.x, &localSec, report) })
	}
	// The training loop as it was before the fused pass (issue 13), kept to
	// compare in the same run: clear, local loss, serial AddPsiGrad, serial
	// optimizer step.
	b.Run("serial_reference", func(b *testing.B) {
		method.Init(len(lb.x))
		var steps, locals, triads, ratios []float64
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			t0 := time.Now()
			clear(lb.grad)
			sinkLoss = p.Local(lb.grad, lb.x)
			sinkLoss += optim.AddPsiGrad(lb.grad, lb.x, p.Blocks, p.Graph)
			optim.Step(method, lb.x, lb.grad, i)
			step := time.Since(t0).Seconds()
			t1 := time.Now()
			lb.triad()
			triad := time.Since(t1).Seconds()
			steps, locals, triads = append(steps, step), append(locals, localSec), append(triads, triad)
			ratios = append(ratios, step/triad)
		}
		b.StopTimer()
		report(b, steps, locals, triads, ratios)
	})
}

// BenchmarkGoldstoneOverhead measures the gauge overhead through the real
// training loop on the BenchmarkTrainStep model (same sizes and environment
// variables): optim.Driver with AdaGrad and a gauge round after every step
// (K1 = 1, so that every iteration times one step and one round back to back
// on the noisy machine), and reports, from the medians,
//
//	overhead_% = 100 * round / (100 * step + round)
//
// the share of training time spent in gauge rounds at k1 = 100. Goldstone
// uses k2 = 10. Gauges run on the same pool as the step.
func BenchmarkGoldstoneOverhead(b *testing.B) {
	const k1 = 100
	lb := setupLogisticBench(b)
	for _, tc := range []struct {
		name  string
		gauge optim.Gauge
	}{
		{"Goldstone", &optim.Goldstone{K2: 10, Pool: lb.pool}},
		{"Procrustes", &optim.Procrustes{Pool: lb.pool}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			d := &optim.Driver{Method: &optim.AdaGrad{Rate: optim.Constant(0.05)}, Gauge: tc.gauge, K1: 1, Pool: lb.pool}
			var steps, rounds []float64
			var gauge float64
			b.ReportAllocs()
			b.ResetTimer()
			last := time.Now()
			_, err := d.Run(ProblemOf(lb.m), lb.x, b.N, func(it *optim.Iter) error {
				now := time.Now()
				round := it.Run.GaugeSeconds - gauge
				gauge = it.Run.GaugeSeconds
				steps = append(steps, now.Sub(last).Seconds()-round)
				rounds = append(rounds, round)
				last = now
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			step, round := median(steps), median(rounds)
			b.ReportMetric(step, "s/step")
			b.ReportMetric(round, "s/round")
			b.ReportMetric(100*round/(k1*step+round), "overhead_%")
		})
	}
}

// BenchmarkLocalLoss compares, on the BenchmarkTrainStep model, the two ways
// the logistic MF local loss can fill the gradient: "dense" (LocalLoss: every
// column gets its L2 gradient, then the likelihood) and "sparse" (the
// Driver's Problem().Local: the likelihood only, added into a zeroed buffer,
// touching only the rated columns), and "sparse_go" (sparse with the Go loops
// instead of the AVX2/FMA kernels; where there are no kernels it is sparse
// again), alternately in every iteration, with one triad pass after them; it
// reports the medians and each pass in triads.
func BenchmarkLocalLoss(b *testing.B) {
	lb := setupLogisticBench(b)
	lb.triadArrays()
	sparse := lb.m.Problem().Local
	fma := useFMA
	defer func() { useFMA = fma }()
	var ds, ss, gs, ts []float64
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		sinkLoss = lb.m.LocalLoss(lb.grad, lb.x)
		ds = append(ds, time.Since(t0).Seconds())
		for _, kernels := range []bool{true, false} {
			useFMA = fma && kernels
			clear(lb.grad)
			t0 := time.Now()
			sinkLoss += sparse(lb.grad, lb.x)
			if kernels {
				ss = append(ss, time.Since(t0).Seconds())
			} else {
				gs = append(gs, time.Since(t0).Seconds())
			}
		}
		t0 = time.Now()
		lb.triad()
		ts = append(ts, time.Since(t0).Seconds())
	}
	tr := median(ts)
	b.ReportMetric(median(ds), "s/dense")
	b.ReportMetric(median(ss), "s/sparse")
	b.ReportMetric(median(gs), "s/sparse_go")
	b.ReportMetric(tr, "s/triad")
	b.ReportMetric(median(ds)/tr, "dense/triad")
	b.ReportMetric(median(ss)/tr, "sparse/triad")
	b.ReportMetric(median(gs)/tr, "sparse_go/triad")
}

// methodOnly hides a Method's concrete type from the Driver's fused pass.
type methodOnly struct{ optim.Method }

// driverSteps times b.N steps of the Driver with method on p (see
// BenchmarkTrainStep).
func driverSteps[F optim.Float](lb *logisticBench, b *testing.B, p optim.ProblemOf[F], method optim.MethodOf[F], x []F, localSec *float64,
	report func(b *testing.B, steps, locals, triads, ratios []float64)) {
	d := &optim.DriverOf[F]{Method: method, Pool: lb.pool}
	var steps, locals, triads, ratios []float64
	b.ReportAllocs()
	b.ResetTimer()
	last := time.Now()
	_, err := d.Run(p, x, b.N, func(it *optim.Iter) error {
		step := time.Since(last).Seconds()
		t0 := time.Now()
		lb.triad()
		triad := time.Since(t0).Seconds()
		steps, locals, triads = append(steps, step), append(locals, *localSec), append(triads, triad)
		ratios = append(ratios, step/triad)
		last = time.Now()
		return nil
	})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	report(b, steps, locals, triads, ratios)
}
