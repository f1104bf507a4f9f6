package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// bruteChain2 minimises psi over maps of a d=2 chain with R_0 = I (psi is
// invariant under a common map) by a grid over the angles of the other maps
// followed by a finer grid around the best point. Each map is a rotation, or
// also a reflection when reflect is set.
func bruteChain2(x []float64, b Blocks, g *Graph, reflect bool) float64 {
	if b.D != 2 || b.T != 3 {
		panic("bruteChain2: d=2, T=3 only")
	}
	mapOf := func(th float64, refl bool) []float64 {
		c, s := math.Cos(th), math.Sin(th)
		if refl {
			return []float64{c, s, s, -c}
		}
		return []float64{c, -s, s, c}
	}
	id := []float64{1, 0, 0, 1}
	eval := func(t1, t2 float64, r1, r2 bool) float64 {
		return Psi(applyMaps(x, b, [][]float64{id, mapOf(t1, r1), mapOf(t2, r2)}), b, g)
	}
	best := math.Inf(1)
	for _, r1 := range []bool{false, true} {
		for _, r2 := range []bool{false, true} {
			if !reflect && (r1 || r2) {
				continue
			}
			const n = 120
			bt1, bt2, bv := 0.0, 0.0, math.Inf(1)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					t1, t2 := 2*math.Pi*float64(i)/n, 2*math.Pi*float64(j)/n
					if v := eval(t1, t2, r1, r2); v < bv {
						bt1, bt2, bv = t1, t2, v
					}
				}
			}
			// Refine by shrinking grids around the best point.
			for h := 2 * math.Pi / n; h > 1e-9; h /= 4 {
				c1, c2 := bt1, bt2
				for i := -4; i <= 4; i++ {
					for j := -4; j <= 4; j++ {
						t1, t2 := c1+h*float64(i)/2, c2+h*float64(j)/2
						if v := eval(t1, t2, r1, r2); v < bv {
							bt1, bt2, bv = t1, t2, v
						}
					}
				}
			}
			best = min(best, bv)
		}
	}
	return best
}

func TestProcrustesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	b := Blocks{T: 3, N: 4, D: 2}
	g := ChainWeights([]float64{1, 2.5})
	for trial := 0; trial < 4; trial++ {
		x := randVec(rng, b.Len(), 1)
		for _, so := range []bool{false, true} {
			p := &Procrustes{SO: so, Pool: testPool(2)}
			if err := p.Init(b, g); err != nil {
				t.Fatal(err)
			}
			y := append([]float64(nil), x...)
			st := p.Round(y)
			want := bruteChain2(x, b, g, !so)
			if math.Abs(st.PsiAfter-want) > 1e-9*(1+want) {
				t.Errorf("trial %d SO=%v: Procrustes psi %.12g, brute force %.12g", trial, so, st.PsiAfter, want)
			}
		}
	}
}

func TestProcrustesOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	b := Blocks{Offset: 1, T: 6, N: 7, D: 3}
	star, _ := NewGraph(6, []Edge{{2, 0, 1}, {2, 1, 0.5}, {2, 3, 2}, {3, 4, 1}, {5, 3, 1}})
	for _, g := range []*Graph{Chain(b.T, 3), star} {
		for _, so := range []bool{false, true} {
			x := randVec(rng, b.Offset+b.Len(), 1)
			p := &Procrustes{SO: so, Pool: testPool(3)}
			if err := p.Init(b, g); err != nil {
				t.Fatal(err)
			}
			gap := p.Gap(x)
			y := append([]float64(nil), x...)
			st := p.Round(y)
			if e := math.Abs(st.PsiBefore - st.PsiAfter - gap); e > 1e-10*st.PsiBefore {
				t.Errorf("SO=%v: Gap %v, psi drop %v", so, gap, st.PsiBefore-st.PsiAfter)
			}
			if !so {
				gg, err := GaugeGap(x, b, g)
				if err != nil || math.Abs(gg-gap) > 1e-10*st.PsiBefore {
					t.Errorf("GaugeGap %v (%v), want %v", gg, err, gap)
				}
			}
			// Applied maps are orthogonal; SO keeps det = +1.
			for s := 0; s < b.T; s++ {
				r := mat.NewDense(b.D, b.D, p.rot[s*p.dd:(s+1)*p.dd])
				var rtr mat.Dense
				rtr.Mul(r.T(), r)
				if !mat.EqualApprox(&rtr, eye(b.D), 1e-12) {
					t.Fatalf("map %d not orthogonal", s)
				}
				if so && math.Abs(mat.Det(r)-1) > 1e-12 {
					t.Fatalf("SO: map %d has det %v", s, mat.Det(r))
				}
			}
			// No random set of maps does better.
			for k := 0; k < 200; k++ {
				maps := make([][]float64, b.T)
				for s := range maps {
					det := 1.0
					if !so && rng.IntN(2) == 0 {
						det = -1
					}
					maps[s] = randOrth(rng, b.D, det)
				}
				if v := Psi(applyMaps(x, b, maps), b, g); v < st.PsiAfter*(1-1e-12) {
					t.Fatalf("SO=%v: random maps give psi %v < Procrustes %v", so, v, st.PsiAfter)
				}
			}
		}
	}
}

// TestProcrustesCollapsedDimensions: when the prior has shrunk some
// embedding dimensions to nearly zero (as after 6,000 steps of the paper's
// MovieLens setting, d = 30, lambda = 10), the overlaps have singular values
// near the SVD's working precision. The applied maps must still be
// orthogonal: a round lowers psi by the gauge gap and keeps every block's
// row Gram matrix (which fixes the likelihood). Before optim.SVD replaced
// the unrotated near-zero columns, the maps here were far from orthogonal
// and the round raised psi.
func TestProcrustesCollapsedDimensions(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	b := Blocks{T: 6, N: 40, D: 30}
	for _, tail := range []float64{1e-6, 1e-7, 2e-7, 1e-8} {
		// 20 live dimensions drifting slowly along the chain, 10 shrunk to tail.
		x := make([]float64, b.Len())
		base := randVec(rng, b.N*b.D, 1)
		for s := 0; s < b.T; s++ {
			z := b.Block(x, s)
			for i := 0; i < b.N; i++ {
				for a := 0; a < b.D; a++ {
					v := base[i*b.D+a] + 0.1*rng.NormFloat64()
					if a >= 20 {
						v *= tail
					}
					z[i*b.D+a] = v
				}
			}
		}
		p := &Procrustes{Pool: testPool(2)}
		if err := p.Init(b, Chain(b.T, 1)); err != nil {
			t.Fatal(err)
		}
		y := append([]float64(nil), x...)
		st := p.Round(y)
		if drop := st.PsiBefore - st.PsiAfter; math.Abs(drop+st.Predicted) > 1e-10*st.PsiBefore {
			t.Errorf("tail %g: psi fell by %v, predicted %v", tail, drop, -st.Predicted)
		}
		for s := 0; s < b.T; s++ {
			zx, zy := b.Block(x, s), b.Block(y, s)
			for i := 0; i < b.N; i++ {
				for j := 0; j <= i; j++ {
					var gx, gy float64
					for a := 0; a < b.D; a++ {
						gx += zx[i*b.D+a] * zx[j*b.D+a]
						gy += zy[i*b.D+a] * zy[j*b.D+a]
					}
					if math.Abs(gx-gy) > 1e-11*float64(b.D) {
						t.Fatalf("tail %g: step %d: rows %d, %d: Gram %v before the round, %v after: the map is not orthogonal", tail, s, i, j, gx, gy)
					}
				}
			}
		}
	}
}

// TestProcrustesReflection: a reflected time step is undone by O(d) but not by SO(d).
func TestProcrustesReflection(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 1))
	b := Blocks{T: 4, N: 8, D: 3}
	g := Chain(b.T, 1)
	x := twisted(rng, b, 0.3, 0)
	refl := []float64{1, 0, 0, 0, 1, 0, 0, 0, -1}
	id := []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	x = applyMaps(x, b, [][]float64{id, id, refl, refl})
	for _, tc := range []struct {
		so      bool
		wantGap bool
	}{{false, false}, {true, true}} {
		y := append([]float64(nil), x...)
		p := &Procrustes{SO: tc.so}
		if err := p.Init(b, g); err != nil {
			t.Fatal(err)
		}
		st := p.Round(y)
		if left := st.PsiAfter > 1e-9*st.PsiBefore; left != tc.wantGap {
			t.Errorf("SO=%v: psi %v -> %v", tc.so, st.PsiBefore, st.PsiAfter)
		}
	}
}

func TestProcrustesNotTree(t *testing.T) {
	cycle, _ := NewGraph(3, []Edge{{0, 1, 1}, {1, 2, 1}, {2, 0, 1}})
	b := Blocks{T: 3, N: 2, D: 2}
	if err := new(Procrustes).Init(b, cycle); err == nil {
		t.Fatal("Procrustes.Init accepted a cycle")
	}
	if _, err := GaugeGap(make([]float64, b.Len()), b, cycle); err == nil {
		t.Fatal("GaugeGap accepted a cycle")
	}
	if _, err := GaugeGap(make([]float64, b.Len()), b, Chain(3, 1)); err != nil {
		t.Fatalf("GaugeGap on a chain after a cycle: %v", err)
	}
}

// TestProcrustesDivergedIterate: an iterate whose overlaps' squares
// overflow (a diverged training step) gives a NaN gap and a NaN round, for
// the driver to report as divergence, not a panic.
func TestProcrustesDivergedIterate(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	b := Blocks{T: 4, N: 8, D: 3}
	g := Chain(b.T, 1)
	x := twisted(rng, b, 0.3, 0)
	for i := range x {
		x[i] *= 1e120 // overlaps near 1e241: their squares are +Inf
	}
	p := &Procrustes{}
	if err := p.Init(b, g); err != nil {
		t.Fatal(err)
	}
	if gap := p.Gap(x); !math.IsNaN(gap) {
		t.Errorf("gap of a diverged iterate %v, want NaN", gap)
	}
	if st := p.Round(x); !math.IsNaN(st.Predicted) {
		t.Errorf("round of a diverged iterate: %+v, want no prediction", st)
	}
	if z := b.Block(x, b.T-1); !math.IsNaN(z[0]) { // the root's block keeps the identity
		t.Errorf("a round of a diverged iterate left the last block at %v, want NaN", z[0])
	}
}

// TestProcrustesDiverged: an iterate holding an infinite or NaN entry (a
// diverged run) gives a NaN gauge gap and a round that does not panic.
func TestProcrustesDiverged(t *testing.T) {
	b := Blocks{T: 4, N: 5, D: 3}
	g := Chain(b.T, 1)
	for _, bad := range []float64{math.Inf(1), math.NaN()} {
		x := detVec(rand.New(rand.NewPCG(9, 9)), b.Len(), 1)
		x[b.N*b.D+4] = bad // in Z_1
		gap, err := GaugeGap(x, b, g)
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(gap) {
			t.Errorf("entry %v: gap %v, want NaN", bad, gap)
		}
		var p Procrustes
		if err := p.Init(b, g); err != nil {
			t.Fatal(err)
		}
		p.Round(x)
	}
}
