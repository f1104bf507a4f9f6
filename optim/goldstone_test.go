package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// secondOrder is the paper's second-order model of psi(exp(Gamma) Z) - psi(Z),
//
//	L''(G) = sum_{t,t'} A_tt' Tr[ (Gamma_t' + 1/2 (Gamma_t' - Gamma_t) Gamma_t) M_tt' ],
//
// written independently of hChunk with gonum matrices, from g.m and g.gam.
func secondOrder(g *Goldstone) float64 {
	d, dd := g.d, g.dd
	gam := func(t int) *mat.Dense { return mat.NewDense(d, d, append([]float64(nil), g.gam[t*dd:(t+1)*dd]...)) }
	term := func(gt, gtp *mat.Dense, m mat.Matrix) float64 {
		var a, b, c mat.Dense
		a.Sub(gtp, gt)
		b.Mul(&a, gt)
		b.Scale(0.5, &b)
		b.Add(&b, gtp)
		c.Mul(&b, m)
		return mat.Trace(&c)
	}
	var s float64
	for k, e := range g.edges {
		m := mat.NewDense(d, d, append([]float64(nil), g.m[k*dd:(k+1)*dd]...))
		gs, gt := gam(e.S), gam(e.T)
		s += e.W * (term(gs, gt, m) + term(gt, gs, m.T()))
	}
	return s
}

// prepared returns a Goldstone initialised on x with the overlaps computed,
// as at the start of a round.
func prepared(t *testing.T, g *Goldstone, x []float64, b Blocks, gr *Graph) {
	t.Helper()
	if err := g.Init(b, gr); err != nil {
		t.Fatal(err)
	}
	g.rx.x = x
	g.Pool.Chunks(len(g.edges)+b.T, 1, g.ovFn)
	g.buildF()
}

func testGraphs() []struct {
	name string
	g    *Graph
} {
	cycle, _ := NewGraph(4, []Edge{{0, 1, 1.5}, {1, 2, 0.3}, {2, 3, 2}, {3, 0, 1}})
	return []struct {
		name string
		g    *Graph
	}{{"chain", ChainWeights([]float64{1, 0.5, 2})}, {"cycle", cycle}}
}

func TestGoldstoneGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for _, tc := range testGraphs() {
		for _, d := range []int{2, 3} {
			b := Blocks{Offset: 1, T: 4, N: 5, D: d}
			x := randVec(rng, b.Offset+b.Len(), 1)
			g := &Goldstone{Pool: testPool(2)}
			prepared(t, g, x, b, tc.g)
			copy(g.gf, randVec(rng, len(g.gf), 0.3))
			f := func(G []float64) float64 {
				copy(g.gf, G)
				g.Pool.Chunks(b.T, 1, g.skewFn)
				return secondOrder(g)
			}
			G := append([]float64(nil), g.gf...)
			f(G)
			g.Pool.Chunks(b.T, 1, g.hFn)
			grad := append([]float64(nil), g.grad...)
			idx := make([]int, len(G))
			for i := range idx {
				idx[i] = i
			}
			checkGrad(t, tc.name+" L''", f, G, grad, idx, 1e-6)
		}
	}
}

// TestGoldstoneThirdOrder checks that L2 agrees with the exact
// L'(G) = psi(exp(Gamma_t) Z_t) - psi(Z) up to O(|G|^3).
func TestGoldstoneThirdOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	for _, tc := range testGraphs() {
		b := Blocks{T: 4, N: 6, D: 3}
		x := randVec(rng, b.Len(), 1)
		g := &Goldstone{Pool: testPool(1)}
		prepared(t, g, x, b, tc.g)
		G0 := randVec(rng, len(g.gf), 1)
		psi0 := Psi(x, b, tc.g)
		var prev float64
		for k, eps := range []float64{0.02, 0.01, 0.005, 0.0025} {
			for i, v := range G0 {
				g.gf[i] = eps * v
			}
			g.Pool.Chunks(b.T, 1, g.skewFn)
			lpp := secondOrder(g)
			maps := make([][]float64, b.T)
			for s := 0; s < b.T; s++ {
				var r mat.Dense
				r.Exp(mat.NewDense(b.D, b.D, append([]float64(nil), g.gam[s*g.dd:(s+1)*g.dd]...)))
				maps[s] = r.RawMatrix().Data
			}
			lp := Psi(applyMaps(x, b, maps), b, tc.g) - psi0
			err := math.Abs(lp - lpp)
			if k > 0 {
				ratio := prev / err
				if ratio < 6 || ratio > 10 {
					t.Errorf("%s: eps %v: error ratio %.3g, want ~8 (third order); L'=%g L''=%g", tc.name, eps, ratio, lp, lpp)
				}
			}
			prev = err
		}
	}
}

func TestLocalLossInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	p := newMF(rng, 4, 5, 3, 3)
	b := p.blocks()
	x := randVec(rng, b.Len(), 1)
	grad := make([]float64, len(x))
	l0 := p.local(grad, x)
	for _, det := range []float64{1, -1} {
		r := randOrth(rng, 3, det)
		y := applyMaps(x, b, [][]float64{r, r, r})
		if e := relErr(p.local(grad, y), l0); e > 1e-12 {
			t.Fatalf("det %v: local loss changed by %g relative under a common map", det, e)
		}
	}
}

// twisted returns blocks Z_t = R(t * angle) Z_0 + noise: a smooth Goldstone
// twist along the chain.
func twisted(rng *rand.Rand, b Blocks, angle, noise float64) []float64 {
	x := make([]float64, b.Offset+b.Len())
	z0 := randVec(rng, b.N*b.D, 1)
	for t := 0; t < b.T; t++ {
		z := b.Block(x, t)
		c, s := math.Cos(angle*float64(t)), math.Sin(angle*float64(t))
		for i := 0; i < b.N; i++ {
			col := z0[i*b.D : (i+1)*b.D]
			out := z[i*b.D : (i+1)*b.D]
			copy(out, col)
			out[0], out[1] = c*col[0]-s*col[1], s*col[0]+c*col[1]
			for k := range out {
				out[k] += noise * rng.NormFloat64()
			}
		}
	}
	return x
}

func TestGoldstoneRound(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    Goldstone
	}{
		{"exact keep", Goldstone{}},
		{"exact reset", Goldstone{Reset: true}},
		{"linear keep", Goldstone{Rotation: RotationLinear}},
		{"exact noguard", Goldstone{NoGuard: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 1))
			mf := newMF(rng, 6, 6, 3, 12)
			b := mf.blocks()
			gr := Chain(b.T, 10)
			x := twisted(rng, b, 0.15, 0.05)
			grad := make([]float64, len(x))
			l0 := mf.local(grad, x)
			psi0 := Psi(x, b, gr)
			gap0, _ := GaugeGap(x, b, gr)
			g := tc.g
			g.Pool = testPool(2)
			if err := g.Init(b, gr); err != nil {
				t.Fatal(err)
			}
			for r := 0; r < 30; r++ {
				st := g.Round(x)
				if e := relErr(st.PsiAfter, Psi(x, b, gr)); e > 1e-12 {
					t.Fatalf("round %d: PsiAfter %v, Psi(x) %v", r, st.PsiAfter, Psi(x, b, gr))
				}
				if tc.g.Rotation == RotationExact {
					if e := relErr(mf.local(grad, x), l0); e > 1e-10 {
						t.Fatalf("round %d: exact rotation changed the local loss by %g relative", r, e)
					}
				}
			}
			psi1 := Psi(x, b, gr)
			gap1, _ := GaugeGap(x, b, gr)
			t.Logf("psi %.4g -> %.4g, gauge gap %.4g -> %.4g", psi0, psi1, gap0, gap1)
			if !(gap1 < 0.5*gap0) {
				t.Errorf("30 rounds: gauge gap %.4g -> %.4g, want at least halved", gap0, gap1)
			}
		})
	}
}

// TestGoldstoneGuard runs many aggressive rounds and checks that a guarded
// round never raises psi and that a rejected round without wall flips
// leaves x untouched (flips lower psi on their own and are kept).
func TestGoldstoneGuard(t *testing.T) {
	for _, rot := range []Rotation{RotationExact, RotationLinear} {
		rng := rand.New(rand.NewPCG(10, uint64(rot)))
		b := Blocks{T: 8, N: 5, D: 3}
		cycle, _ := NewGraph(8, []Edge{{0, 1, 1}, {1, 2, 2}, {2, 3, 1}, {3, 4, 0.5}, {4, 5, 1}, {5, 6, 1}, {6, 7, 3}, {7, 0, 1}, {2, 6, 1}})
		for _, gr := range []*Graph{Chain(b.T, 1), cycle} {
			rejected := 0
			for trial := 0; trial < 40; trial++ {
				x := randVec(rng, b.Len(), 1)
				g := Goldstone{Rotation: rot, Rate: math.Pow(10, -2+3*rng.Float64()), K2: 1 + rng.IntN(10), Pool: testPool(1 + trial%3)}
				if err := g.Init(b, gr); err != nil {
					t.Fatal(err)
				}
				for r := 0; r < 5; r++ {
					before := append([]float64(nil), x...)
					st := g.Round(x)
					psi := Psi(x, b, gr)
					if psi > st.PsiBefore*(1+1e-12) {
						t.Fatalf("rotation %d trial %d round %d: psi rose %v -> %v (stats %+v)", rot, trial, r, st.PsiBefore, psi, st)
					}
					if math.Abs(psi-st.PsiAfter) > 1e-9*(1+psi) {
						t.Fatalf("round %d: reported psi after %v, actual %v", r, st.PsiAfter, psi)
					}
					if st.Rejected && st.Flips == 0 {
						rejected++
						for i := range x {
							if x[i] != before[i] {
								t.Fatalf("rejected round changed x[%d]", i)
							}
						}
						for _, v := range g.Fields() {
							if v != 0 {
								t.Fatal("rejected round kept the gauge fields")
							}
						}
					}
				}
			}
			if rejected == 0 {
				t.Errorf("rotation %d: no round rejected: the test does not exercise the guard", rot)
			}
		}
	}
}

func TestGoldstoneDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	b := Blocks{Offset: 2, T: 7, N: 150, D: 4}
	x0 := twisted(rng, b, 0.2, 0.1)
	// A cycle with a chord plus an isolated node: ||Z_t||^2 comes from an
	// edge's overlap for most nodes and from the node's own chunk for node 6.
	loop, err := NewGraph(b.T, []Edge{{0, 1, 2}, {1, 2, 1}, {2, 3, 3}, {3, 4, 2}, {4, 5, 1}, {5, 0, 2}, {1, 4, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		g    *Graph
		rot  Rotation
	}{
		{"chain/linear", Chain(b.T, 2), RotationLinear},
		{"chain/exact", Chain(b.T, 2), RotationExact},
		{"loop/exact", loop, RotationExact},
		{"loop/linear", loop, RotationLinear},
	} {
		var ref []float64
		for _, w := range []int{1, 2, 3, 5} {
			x := append([]float64(nil), x0...)
			g := Goldstone{Pool: testPool(w), Rotation: tc.rot}
			if err := g.Init(b, tc.g); err != nil {
				t.Fatal(err)
			}
			for r := 0; r < 3; r++ {
				before := append([]float64(nil), x...)
				g.Round(x)
				for k := 0; k < b.T; k++ {
					if want := sumSq(b.Block(before, k)); relErr(g.nodeSq[k], want) > 1e-13 {
						t.Fatalf("%s: workers %d round %d: ||Z_%d||^2 = %v, want %v", tc.name, w, r, k, g.nodeSq[k], want)
					}
				}
			}
			if ref == nil {
				ref = x
				continue
			}
			for i := range x {
				if x[i] != ref[i] {
					t.Fatalf("%s: workers %d: x[%d] = %v, workers 1 gave %v", tc.name, w, i, x[i], ref[i])
				}
			}
		}
	}
}

func TestGaugeNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	rng := rand.New(rand.NewPCG(12, 1))
	b := Blocks{T: 6, N: 100, D: 5}
	gr := Chain(b.T, 1)
	x := twisted(rng, b, 0.1, 0.1)
	for _, tc := range []struct {
		name string
		g    Gauge
	}{
		{"goldstone exact", &Goldstone{Pool: testPool(3)}},
		{"goldstone linear", &Goldstone{Pool: testPool(3), Rotation: RotationLinear}},
		{"goldstone linear noguard", &Goldstone{Pool: testPool(3), Rotation: RotationLinear, NoGuard: true}},
		{"goldstone rate search", &Goldstone{Pool: testPool(3), Search: SearchRate, Rate: 1}},
		{"goldstone direction search", &Goldstone{Pool: testPool(3), Search: SearchDirection, Rate: 1}},
		{"procrustes", &Procrustes{Pool: testPool(3), SO: true}},
	} {
		if err := tc.g.Init(b, gr); err != nil {
			t.Fatal(err)
		}
		tc.g.Round(x)
		if n := testing.AllocsPerRun(5, func() { tc.g.Round(x) }); n != 0 {
			t.Errorf("%s: Round allocates %v times", tc.name, n)
		}
	}
	GaugeGap(x, b, gr)
	if n := testing.AllocsPerRun(5, func() { GaugeGap(x, b, gr) }); n != 0 {
		t.Errorf("GaugeGap allocates %v times", n)
	}
}

// TestGoldstoneRemovesReflectionWall builds a chain whose second half is the
// reflection of the first: no rotation lowers psi, so without flips the
// round cannot help; with flips one round removes the wall and keeps the
// local loss (any common orthogonal map of a block leaves it unchanged).
// reflectionWall returns 10 nearly equal time steps whose last 5 have the
// last coordinate reflected: one reflection domain wall on a chain.
func reflectionWall() ([]float64, Blocks) {
	rng := rand.New(rand.NewPCG(3, 4))
	b := Blocks{T: 10, N: 12, D: 3}
	z := randVec(rng, b.N*b.D, 1)
	x := make([]float64, b.Len())
	for t := 0; t < b.T; t++ {
		blk := b.Block(x, t)
		copy(blk, z)
		for i := range blk {
			blk[i] += 0.01 * rng.NormFloat64()
		}
		if t >= 5 {
			for i := 0; i < b.N; i++ {
				blk[i*b.D+2] = -blk[i*b.D+2] // reflect the last coordinate
			}
		}
	}
	return x, b
}

func TestGoldstoneRemovesReflectionWall(t *testing.T) {
	x, b := reflectionWall()
	gr := Chain(b.T, 1)
	for _, noFlip := range []bool{true, false} {
		y := append([]float64(nil), x...)
		g := Goldstone{NoFlip: noFlip, Pool: testPool(2)}
		if err := g.Init(b, gr); err != nil {
			t.Fatal(err)
		}
		psi0 := Psi(y, b, gr)
		var st RoundStats
		for r := 0; r < 3; r++ {
			st = g.Round(y)
		}
		psi1 := Psi(y, b, gr)
		gap, _ := GaugeGap(y, b, gr)
		t.Logf("noFlip=%v: psi %.4g -> %.4g (gap %.3g)", noFlip, psi0, psi1, gap)
		if noFlip && psi1 < 0.1*psi0 {
			t.Errorf("rotations alone removed a reflection wall: psi %v -> %v", psi0, psi1)
		}
		if !noFlip && !(psi1 < 0.01*psi0) {
			t.Errorf("flips did not remove the wall: psi %v -> %v (last round %+v)", psi0, psi1, st)
		}
	}
}
