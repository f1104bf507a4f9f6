package optim

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// quadProblem is the convex, rotation-invariant local loss
// l = sum_t 1/2 Tr(Z_t K_t Z_t^T) with K_t = a_t I + B_t B_t^T / N positive
// definite; with the chain coupling the unique optimum is Z = 0, L* = 0.
type quadProblem struct {
	b Blocks
	k [][]float64 // per t, N x N
}

func newQuad(rng *rand.Rand, b Blocks) *quadProblem {
	q := &quadProblem{b: b}
	n := b.N
	for t := 0; t < b.T; t++ {
		bm := randVec(rng, n*n, 1)
		k := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for l := 0; l < n; l++ {
					s += bm[i*n+l] * bm[j*n+l]
				}
				k[i*n+j] = s / float64(n)
			}
			k[i*n+i] += 0.2 + 0.1*float64(t%3)
		}
		q.k = append(q.k, k)
	}
	return q
}

func (q *quadProblem) local(grad, x []float64) float64 {
	clear(grad)
	b, n, d := q.b, q.b.N, q.b.D
	var loss float64
	for t := 0; t < b.T; t++ {
		z, g := b.Block(x, t), b.Block(grad, t)
		k := q.k[t]
		for i := 0; i < n; i++ {
			gi := g[i*d : (i+1)*d]
			for j := 0; j < n; j++ {
				kij := k[i*n+j]
				for a, v := range z[j*d : (j+1)*d] {
					gi[a] += kij * v
				}
			}
			for a, v := range gi {
				loss += 0.5 * z[i*d+a] * v
			}
		}
	}
	return loss
}

func TestQuadGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	b := Blocks{Offset: 1, T: 3, N: 4, D: 2}
	q := newQuad(rng, b)
	x := randVec(rng, b.Offset+b.Len(), 1)
	grad := make([]float64, len(x))
	q.local(grad, x)
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	scratch := make([]float64, len(x))
	checkGrad(t, "quad", func(x []float64) float64 { return q.local(scratch, x) }, x, grad, idx, 1e-7)
}

// TestDriver runs every base method with every gauge step on the same convex
// problem: it must converge to the known optimum, a re-run must give
// bit-identical parameters, and so must a run with a different worker count.
func TestDriver(t *testing.T) {
	methods := []struct {
		name string
		m    func() Method
		tol  float64
	}{
		{"GD", func() Method { return &GD{Rate: Constant(0.1)} }, 1e-8},
		{"GDClip", func() Method { return &GD{Rate: Schedule{Rho0: 0.1, S0: 500, Kappa: 0.5}, Clip: 1} }, 1e-6},
		{"AdaGrad", func() Method { return &AdaGrad{Rate: Constant(0.5)} }, 1e-6},
		{"Adam", func() Method { return &Adam{Rate: Schedule{Rho0: 0.05, S0: 100, Kappa: 1}} }, 1e-5},
	}
	gauges := []struct {
		name string
		g    func(p *Pool) Gauge
	}{
		{"none", func(*Pool) Gauge { return nil }},
		{"goldstone exact keep guard", func(p *Pool) Gauge { return &Goldstone{K2: 5, Pool: p} }},
		{"goldstone exact reset", func(p *Pool) Gauge { return &Goldstone{Reset: true, Pool: p} }},
		{"goldstone linear keep", func(p *Pool) Gauge { return &Goldstone{Rotation: RotationLinear, Pool: p} }},
		{"procrustes", func(p *Pool) Gauge { return &Procrustes{Pool: p} }},
	}
	rng := rand.New(rand.NewPCG(17, 1))
	b := Blocks{Offset: 2, T: 8, N: 6, D: 3}
	q := newQuad(rng, b)
	p := Problem{Local: q.local, Blocks: b, Graph: Chain(b.T, 1)}
	x0 := twisted(rng, b, 0.4, 0.3)
	x0[0], x0[1] = 0.5, -0.5 // outside the blocks: untouched by gauges, not by the loss (no gradient)
	const steps = 600
	for _, m := range methods {
		for _, gg := range gauges {
			t.Run(m.name+"/"+gg.name, func(t *testing.T) {
				var res Result
				run := func(workers int) ([]float64, []Iter) {
					x := append([]float64(nil), x0...)
					d := &Driver{Method: m.m(), Gauge: gg.g(testPool(workers)), K1: 20}
					var its []Iter
					var err error
					res, err = d.Run(p, x, steps, func(it *Iter) error {
						c := *it
						if it.Gauge != nil {
							s := *it.Gauge
							c.Gauge = &s
						}
						its = append(its, c)
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					return x, its
				}
				x, its := run(1)
				first, last := its[0], its[len(its)-1]
				first.Run = nil // a reused pointer
				if !(last.Loss < m.tol*first.Loss) {
					t.Errorf("loss %.4g -> %.4g after %d steps, want below %.1g of the start", first.Loss, last.Loss, steps, m.tol)
				}
				rounds, rejected, lowered, flips, backtracks := 0, 0, 0, 0, 0
				for _, it := range its {
					if it.Gauge != nil && it.Gauge.Rejected {
						rejected++
					}
					if it.Gauge != nil && it.Gauge.PsiAfter < it.Gauge.PsiBefore {
						lowered++
					}
					if it.Gauge != nil {
						backtracks += it.Gauge.Backtracks
						flips += it.Gauge.Flips
					}
					if (it.Gauge != nil) != (gg.name != "none" && (it.Step+1)%20 == 0) {
						t.Fatalf("step %d: Gauge stats %v", it.Step, it.Gauge)
					}
					if it.Gauge != nil {
						rounds++
					}
					if math.Abs(it.Loss-it.Local-it.Psi) > 1e-12*it.Loss {
						t.Fatalf("step %d: Loss %v != Local %v + Psi %v", it.Step, it.Loss, it.Local, it.Psi)
					}
				}
				t.Logf("loss %.4g -> %.4g, psi %.4g -> %.4g, %d gauge rounds, %d rejected", first.Loss, last.Loss, first.Psi, last.Psi, rounds, rejected)
				for _, it := range its {
					if it.DivergeScale != max(1, math.Abs(first.Loss)) {
						t.Fatalf("step %d: DivergeScale %v, want max(1, |loss at step 0|) = %v", it.Step, it.DivergeScale, max(1, math.Abs(first.Loss)))
					}
				}
				if rounds > 0 && !(res.GaugeSeconds > 0) {
					t.Errorf("%d gauge rounds but GaugeSeconds %v", rounds, res.GaugeSeconds)
				}
				want := Result{Steps: steps, Rounds: rounds, Rejected: rejected, Lowered: lowered, Flips: flips, Backtracks: backtracks,
					GaugeSeconds: res.GaugeSeconds, Stop: StopDone}
				if res != want || *last.Run != res {
					t.Errorf("result %+v (last Iter.Run %+v), want %+v", res, *last.Run, want)
				}
				for _, w := range []int{1, 3} {
					y, _ := run(w)
					for i := range x {
						if x[i] != y[i] {
							t.Fatalf("re-run with %d workers: x[%d] = %v, first run %v", w, i, y[i], x[i])
						}
					}
				}
				// Stopped after a random step (the state a checkpoint
				// holds), then resumed by a new Driver: the same bits.
				for _, k := range []int{1 + rng.IntN(steps-2), 20 * (1 + rng.IntN(steps/20-1))} {
					y, rits := resumeAt(t, p, x0, steps, k, func() *Driver {
						return &Driver{Method: m.m(), Gauge: gg.g(testPool(2)), K1: 20}
					})
					for i := range x {
						if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
							t.Fatalf("resumed after step %d: x[%d] = %v, uninterrupted %v", k-1, i, y[i], x[i])
						}
					}
					for j, it := range rits {
						w := its[k+j]
						if it.Step != w.Step || math.Float64bits(it.Loss) != math.Float64bits(w.Loss) || math.Float64bits(it.Psi) != math.Float64bits(w.Psi) ||
							it.DivergeScale != w.DivergeScale {
							t.Fatalf("resumed after step %d: step %d loss %v psi %v scale %v, uninterrupted step %d %v %v %v", k-1, it.Step, it.Loss, it.Psi, it.DivergeScale, w.Step, w.Loss, w.Psi, w.DivergeScale)
						}
					}
				}
				// A finite blow-up of the local loss at step 300 (to 1e200,
				// where the old driver saw nothing wrong) stops every
				// method and gauge at that step, before each sees it.
				const at = 300
				calls := 0
				blowUp := p
				blowUp.Local = func(grad, x []float64) float64 {
					l := q.local(grad, x)
					if calls++; calls > at {
						l *= 1e200
					}
					return l
				}
				x = append([]float64(nil), x0...)
				last = Iter{}
				_, err := (&Driver{Method: m.m(), Gauge: gg.g(testPool(2)), K1: 20}).Run(blowUp, x, steps, func(it *Iter) error {
					last = *it
					return nil
				})
				var de *DivergedError
				if !errors.As(err, &de) || !errors.Is(err, ErrDiverged) {
					t.Fatalf("blow-up at step %d: err %v, want a *DivergedError wrapping ErrDiverged", at, err)
				}
				if de.Step != at || de.Quantity != QuantityLocal || !de.Finite() || de.Bound != DefaultDivergeFactor*first.DivergeScale || !(de.Value > de.Bound) || last.Step != at-1 {
					t.Fatalf("blow-up at step %d: %+v after step %d, want step %d, local loss, bound %g", at, *de, last.Step, at, DefaultDivergeFactor*first.DivergeScale)
				}
			})
		}
	}
}

// resumeAt runs newDriver() on a copy of x0 and stops it after k steps,
// keeping what a checkpoint holds (x and the states of the method and the
// gauge), then resumes with a second newDriver() from step k to steps. It
// returns the final x and the iterations of the resumed part.
func resumeAt(t *testing.T, p Problem, x0 []float64, steps, k int, newDriver func() *Driver) ([]float64, []Iter) {
	t.Helper()
	stop := errors.New("stop")
	x := append([]float64(nil), x0...)
	d := newDriver()
	var saved [][]float64
	var scale float64
	_, err := d.Run(p, x, steps, func(it *Iter) error {
		if it.Step == k-1 {
			scale = it.DivergeScale
			for _, s := range append(StateOf(d.Method), StateOf(d.Gauge)...) {
				saved = append(saved, append([]float64(nil), s...))
			}
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("first part: %v", err)
	}
	// The resumed run starts from a scrambled x: Restore must set it.
	y := append([]float64(nil), x...)
	for i := range x {
		x[i] = math.NaN()
	}
	d = newDriver()
	d.Start = k
	d.Restore = func() error {
		copy(x, y)
		d.DivergeScale = scale
		cur := append(StateOf(d.Method), StateOf(d.Gauge)...)
		if len(cur) != len(saved) {
			t.Fatalf("state has %d slices, saved %d", len(cur), len(saved))
		}
		for i := range cur {
			if len(cur[i]) != len(saved[i]) {
				t.Fatalf("state slice %d has %d values, saved %d", i, len(cur[i]), len(saved[i]))
			}
			copy(cur[i], saved[i])
		}
		return nil
	}
	var its []Iter
	_, err = d.Run(p, x, steps, func(it *Iter) error {
		its = append(its, *it)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != steps-k || its[0].Step != k {
		t.Fatalf("resumed run took %d steps from %d, want %d from %d", len(its), its[0].Step, steps-k, k)
	}
	return x, its
}

func TestDriverErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1))
	b := Blocks{T: 3, N: 4, D: 2}
	q := newQuad(rng, b)
	p := Problem{Local: q.local, Blocks: b, Graph: Chain(b.T, 1)}
	x := randVec(rng, b.Len(), 1)
	res, err := (&Driver{Method: &GD{Rate: Constant(100)}}).Run(p, x, 1000, nil)
	var de *DivergedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "step ") {
		t.Fatalf("diverging run: err %v, want ErrDiverged naming the step", err)
	}
	if res.Stop != StopDiverged || res.Steps != de.Step {
		t.Fatalf("diverging run: result %+v, want %d steps and stop %v", res, de.Step, StopDiverged)
	}
	if res, err := (&Driver{Method: &GD{}, DivergeFactor: -1}).Run(p, x, 1, nil); err == nil || res.Stop != StopSetup || res.Steps != 0 {
		t.Fatalf("negative diverge factor: err %v, result %+v", err, res)
	}
	stop := errors.New("stop")
	n := 0
	x = randVec(rng, b.Len(), 1)
	res, err = (&Driver{Method: &GD{}}).Run(p, x, 100, func(it *Iter) error {
		n++
		if it.Step == 4 {
			return stop
		}
		return nil
	})
	if err != stop || n != 5 || res.Stop != StopEach || res.Steps != 5 {
		t.Fatalf("each error: got %v after %d calls, result %+v", err, n, res)
	}
	cycle, _ := NewGraph(3, []Edge{{0, 1, 1}, {1, 2, 1}, {2, 0, 1}})
	p.Graph = cycle
	if _, err := (&Driver{Method: &GD{}, Gauge: &Procrustes{}, K1: 1}).Run(p, x, 1, nil); err == nil {
		t.Fatal("Procrustes on a cycle: no error")
	}
	p.Graph = nil
	if _, err := (&Driver{Method: &GD{}, Gauge: &Goldstone{}, K1: 1}).Run(p, x, 1, nil); err == nil {
		t.Fatal("gauge without graph: no error")
	}
}

func TestDriverNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	rng := rand.New(rand.NewPCG(19, 1))
	b := Blocks{T: 4, N: 50, D: 3}
	mf := newMF(rng, 20, 30, 3, 4)
	p := Problem{Local: mf.local, Blocks: b, Graph: Chain(b.T, 1)}
	x := randVec(rng, b.Len(), 0.3)
	d := &Driver{Method: &Adam{}, Gauge: &Goldstone{Pool: testPool(2)}, K1: 1, Pool: testPool(2)}
	d.Run(p, x, 2, nil)
	// Whole runs allocate a gradient buffer and the gauge state once; the
	// per-step cost must not grow with the number of steps.
	// The runtime allocates now and then on its own (a cleanup of another
	// test's pool, say): take the fewest over a few tries.
	var a10, a40 float64
	for try := 0; try < 4; try++ {
		a10 = testing.AllocsPerRun(3, func() { d.Run(p, x, 10, nil) })
		a40 = testing.AllocsPerRun(3, func() { d.Run(p, x, 40, nil) })
		if a40 <= a10 {
			return
		}
	}
	t.Fatalf("allocations grow with steps: %v for 10 steps, %v for 40", a10, a40)
}

// scaleGauge is a gauge step that multiplies the blocks by f every round
// (psi grows by f^2): a stand-in for an update that blows up the coupling.
type scaleGauge struct {
	b Blocks
	f float64
}

func (g *scaleGauge) Init(b Blocks, _ *Graph) error { g.b = b; return nil }
func (g *scaleGauge) Round(x []float64) RoundStats {
	for i := range x[g.b.Offset : g.b.Offset+g.b.Len()] {
		x[g.b.Offset+i] *= g.f
	}
	return RoundStats{}
}

// TestDriverDiverged checks the bound: a step whose local loss, psi or loss
// is not finite or past DivergeFactor x max(1, |loss at step 0|) stops the
// run with a *DivergedError naming the step, the quantity, the value and
// the bound, finite blow-ups included.
func TestDriverDiverged(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 1))
	b := Blocks{T: 4, N: 5, D: 2}
	q := newQuad(rng, b)
	x0 := randVec(rng, b.Len(), 1)
	// at returns a local loss that is the quadratic one up to step k-1
	// and v (times it, for a finite v) from step k on.
	at := func(k int, v float64) Objective {
		calls := 0
		return func(grad, x []float64) float64 {
			l := q.local(grad, x)
			if calls++; calls > k {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return v
				}
				return v * l
			}
			return l
		}
	}
	flat := func(grad, _ []float64) float64 { clear(grad); return 1 } // no local gradient: x moves by psi alone
	var l0 float64
	{
		p := Problem{Local: q.local, Blocks: b, Graph: Chain(b.T, 1)}
		x := append([]float64(nil), x0...)
		(&Driver{Method: &GD{}}).Run(p, x, 1, func(it *Iter) error { l0 = it.Loss; return nil })
	}
	scale := max(1, math.Abs(l0))
	cases := []struct {
		name     string
		local    Objective
		d        Driver
		step     int    // -1: no divergence
		quantity string // "" with step -1
		finite   bool
		bound    float64
		text     string
	}{
		{"finite blow-up of the local loss", at(37, 1e200), Driver{Method: &GD{}}, 37, QuantityLocal, true, 1e6 * scale, "past its bound"},
		{"local loss NaN", at(5, math.NaN()), Driver{Method: &GD{}}, 5, QuantityLocal, false, 1e6 * scale, "step 5: local loss NaN: optim: loss diverged"},
		{"local loss +Inf at step 0", at(0, math.Inf(1)), Driver{Method: &GD{}}, 0, QuantityLocal, false, math.NaN(), "step 0: local loss +Inf"},
		{"a smaller factor", at(12, 50), Driver{Method: &GD{}, DivergeFactor: 10}, 12, QuantityLocal, true, 10 * scale, "past its bound"},
		{"a smaller factor, below it", at(12, 5), Driver{Method: &GD{}, DivergeFactor: 10}, -1, "", false, 0, ""},
		{"no bound but finiteness", at(12, 1e300), Driver{Method: &GD{}, DivergeFactor: math.Inf(1)}, -1, "", false, 0, ""},
		{"a given scale", at(12, 50), Driver{Method: &GD{}, DivergeFactor: 10, DivergeScale: 1e4}, -1, "", false, 0, ""},
		{"psi blown up by the gauge rounds", flat, Driver{Method: &GD{}, Gauge: &scaleGauge{f: 1e20}, K1: 10}, 10, QuantityPsi, true, 0, "psi "},
		{"a learning rate far too large", q.local, Driver{Method: &GD{Rate: Constant(100)}}, -2, QuantityPsi, true, 1e6 * scale, "past its bound"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Problem{Local: c.local, Blocks: b, Graph: Chain(b.T, 1)}
			x := append([]float64(nil), x0...)
			d := c.d
			n := 0
			var first Iter
			_, err := d.Run(p, x, 100, func(it *Iter) error {
				if n == 0 {
					first = *it
				}
				if it.Step != n {
					t.Fatalf("each called for step %d, want %d", it.Step, n)
				}
				n++
				return nil
			})
			if c.step == -1 {
				if err != nil {
					t.Fatalf("err %v, want none", err)
				}
				return
			}
			var de *DivergedError
			if !errors.As(err, &de) || !errors.Is(err, ErrDiverged) {
				t.Fatalf("err %v, want a *DivergedError wrapping ErrDiverged", err)
			}
			bound := c.bound
			if bound == 0 {
				bound = DefaultDivergeFactor * first.DivergeScale
			}
			if c.step >= 0 && de.Step != c.step || de.Quantity != c.quantity || de.Finite() != c.finite || n != de.Step ||
				math.Float64bits(de.Bound) != math.Float64bits(bound) || c.finite && !(math.Abs(de.Value) > de.Bound) {
				t.Fatalf("%+v after %d steps; want step %d, %s, finite %v, bound %v", *de, n, c.step, c.quantity, c.finite, bound)
			}
			if !strings.Contains(err.Error(), c.text) || !strings.HasPrefix(err.Error(), "step ") {
				t.Fatalf("error %q, want it to name the step and contain %q", err, c.text)
			}
		})
	}

	// A run resumed after step k with the scale of the run it continues
	// stops where the uninterrupted run stops; Run starts afresh from a
	// Driver used before.
	const lrTooLarge = 0.6
	p := Problem{Local: q.local, Blocks: b, Graph: Chain(b.T, 1)}
	d := &Driver{Method: &GD{Rate: Constant(lrTooLarge)}}
	x := append([]float64(nil), x0...)
	var whole *DivergedError
	_, err := d.Run(p, x, 100, nil)
	errors.As(err, &whole)
	if whole == nil || whole.Step < 5 || !whole.Finite() {
		t.Fatalf("the uninterrupted run: %v, want a finite divergence after step 4", whole)
	}
	t.Logf("uninterrupted: %v", whole)
	for _, k := range []int{1, whole.Step - 1} {
		stop := errors.New("stop")
		x := append([]float64(nil), x0...)
		var scale float64
		before, _ := d.Run(p, x, 100, func(it *Iter) error {
			if scale = it.DivergeScale; it.Step == k-1 {
				return stop
			}
			return nil
		})
		r := &Driver{Method: &GD{Rate: Constant(lrTooLarge)}, Start: k, DivergeScale: scale, Before: before}
		var de *DivergedError
		res, err := r.Run(p, x, 100, nil)
		errors.As(err, &de)
		if de == nil || *de != *whole {
			t.Fatalf("resumed at step %d: %v, uninterrupted %v", k, de, whole)
		}
		if res.Steps != whole.Step || res.Stop != StopDiverged {
			t.Fatalf("resumed at step %d: result %+v, want the uninterrupted run's %d steps", k, res, whole.Step)
		}
	}
}

// TestRoundAfter checks the gauge rounds' rule against its definition:
// rounds follow steps k1-1, 2k1-1, ..., and NearRound is within `within` of
// one of the iterates they produce, up to the run's last.
func TestRoundAfter(t *testing.T) {
	for k1 := -1; k1 <= 7; k1++ {
		for s := -2; s < 40; s++ {
			want := k1 > 0 && s >= 0 && (s+1)%k1 == 0
			if got := RoundAfter(k1, s); got != want {
				t.Fatalf("RoundAfter(%d, %d) = %v", k1, s, got)
			}
		}
		for _, steps := range []int{0, 5, 21} {
			for within := 0; within <= 4; within++ {
				for k := 0; k <= steps+6; k++ {
					want := false
					for c := 1; c <= steps; c++ {
						if RoundAfter(k1, c-1) && within > 0 && max(k-c, c-k) <= within {
							want = true
						}
					}
					if got := NearRound(k1, steps, within, k); got != want {
						t.Fatalf("NearRound(k1 %d, steps %d, within %d, k %d) = %v", k1, steps, within, k, got)
					}
				}
			}
		}
	}
}
