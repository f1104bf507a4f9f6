package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func widen32(x []float32) []float64 {
	w := make([]float64, len(x))
	for i, v := range x {
		w[i] = float64(v)
	}
	return w
}

// kernelModes runs f with the FMA kernels (AVX-512 tiles on and off where
// the CPU has them) and without them (the Go twins).
func kernelModes(t *testing.T, f func(t *testing.T)) {
	fma, avx512 := useFMA, useAVX512
	defer func() { useFMA, useAVX512 = fma, avx512 }()
	for _, m := range []struct{ fma, avx512 bool }{{fma, avx512}, {fma, false}, {false, false}} {
		useFMA, useAVX512 = m.fma, m.avx512
		t.Run(fmt.Sprintf("fma=%v,avx512=%v", m.fma, m.avx512), f)
	}
}

// TestRotateOverlap32: on float32 blocks the overlap is the float64
// overlap of the widened blocks, and the rotation the float64 rotation of
// the widened block rounded to float32, bit for bit, at every column
// count around the group widths (64) and on every kernel path.
func TestRotateOverlap32(t *testing.T) {
	kernelModes(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(71, 3))
		for _, d := range []int{1, 3, 5, 8} {
			for _, n := range []int{1, 5, 63, 64, 70, 131} {
				zs := narrow32(randVec(rng, n*d, 1))
				zt := narrow32(randVec(rng, n*d, 1))
				buf := make([]float64, scratchLen(d))
				m32, m64 := make([]float64, d*d), make([]float64, d*d)
				a0, a1, a2 := overlap32(m32, zs, zt, n, d, buf)
				b0, b1, b2 := overlap(m64, widen32(zs), widen32(zt), n, d, buf)
				if a0 != b0 || a1 != b1 || a2 != b2 || !slices.Equal(m32, m64) {
					t.Fatalf("d=%d n=%d: overlap32 is not the widened overlap", d, n)
				}
				if e := relErr(halfSqDistOf(zs, zt), b0); e > 1e-14 {
					t.Fatalf("d=%d n=%d: halfSqDistOf %v, overlap's %v", d, n, halfSqDistOf(zs, zt), b0)
				}
				r := randOrth(rng, d, 1)
				want := widen32(zs)
				rotate(want, n, d, r, buf)
				rotate32(zs, n, d, r, buf)
				for i, v := range zs {
					if v != float32(want[i]) {
						t.Fatalf("d=%d n=%d: rotate32 entry %d = %v, float64 rotation rounded %v", d, n, i, v, float32(want[i]))
					}
				}
			}
		}
	})
}

// TestGauge32 runs the gauge rounds on float32 parameters: every
// Goldstone variant (the exact and linear maps, the wall flips of a
// reflected time step, the guard's line searches) and Procrustes. The
// rounds are bit-identical at 1, 2 and 3 workers and track the same
// rounds on float64 parameters from the same start within float32
// rounding: psi after each round within 1e-5 relative, x after 10 rounds
// within 1e-5 of its largest entry. Gap32 is Gap of the widened
// parameters, and a Gauge that is not a Gauge32 is refused by the float32
// Driver.
func TestGauge32(t *testing.T) {
	cases := []struct {
		name string
		g    func(p *Pool) Gauge32
	}{
		{"goldstone exact", func(p *Pool) Gauge32 { return &Goldstone{Pool: p} }},
		{"goldstone linear", func(p *Pool) Gauge32 { return &Goldstone{Pool: p, Rotation: RotationLinear} }},
		{"goldstone rate search", func(p *Pool) Gauge32 { return &Goldstone{Pool: p, Search: SearchRate, RateScale: 8} }},
		{"goldstone direction search concentration", func(p *Pool) Gauge32 {
			return &Goldstone{Pool: p, Search: SearchDirection, RateScale: 8, Concentration: true}
		}},
		{"procrustes", func(p *Pool) Gauge32 { return &Procrustes{Pool: p} }},
		{"procrustes SO", func(p *Pool) Gauge32 { return &Procrustes{Pool: p, SO: true} }},
	}
	rng := rand.New(rand.NewPCG(5, 17))
	b := Blocks{Offset: 2, T: 6, N: 70, D: 3}
	gr := Chain(b.T, 2)
	x0 := twisted(rng, b, 0.2, 0.05)
	x0 = append(x0, 0.5, -0.25) // entries after the blocks stay put
	z := b.Block(x0, 4)         // a reflected time step: a wall for the flips
	for i := 0; i < b.N; i++ {
		z[i*b.D] = -z[i*b.D]
	}
	x32 := narrow32(x0)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ref := widen32(x32)
			g64 := tc.g(nil)
			if err := g64.Init(b, gr); err != nil {
				t.Fatal(err)
			}
			var refPsi []float64
			for r := 0; r < 10; r++ {
				refPsi = append(refPsi, g64.Round(ref).PsiAfter)
			}
			var first []float32
			for _, w := range []int{1, 2, 3} {
				x := slices.Clone(x32)
				g := tc.g(testPool(w))
				if err := g.Init(b, gr); err != nil {
					t.Fatal(err)
				}
				for r := 0; r < 10; r++ {
					st := g.Round32(x)
					if e := relErr(st.PsiAfter, refPsi[r]); e > 1e-5 {
						t.Fatalf("%d workers, round %d: psi after %v, float64 rounds %v", w, r, st.PsiAfter, refPsi[r])
					}
					if e := relErr(st.PsiAfter, PsiOf(x, b, gr)); e > 1e-5 {
						t.Fatalf("%d workers, round %d: PsiAfter %v, psi of x %v", w, r, st.PsiAfter, PsiOf(x, b, gr))
					}
				}
				xmax := 0.0
				for _, v := range ref {
					xmax = max(xmax, math.Abs(v))
				}
				for i, v := range x {
					if e := math.Abs(float64(v) - ref[i]); !(e <= 1e-5*xmax) {
						t.Fatalf("%d workers: x[%d] = %v, float64 rounds %v", w, i, v, ref[i])
					}
				}
				if x[len(x)-1] != -0.25 || x[0] != x32[0] {
					t.Fatalf("a round changed entries outside the blocks")
				}
				if first == nil {
					first = x
				} else if !slices.Equal(first, x) {
					t.Fatalf("%d workers: other bits than at 1 worker", w)
				}
			}
		})
	}
	var p Procrustes
	if err := p.Init(b, gr); err != nil {
		t.Fatal(err)
	}
	if g32, g64 := p.Gap32(x32), p.Gap(widen32(x32)); g32 != g64 || !(g32 > 0) {
		t.Errorf("Gap32 %v, Gap of the widened parameters %v", g32, g64)
	}
	local := func(grad, x []float32) float64 { return 0 }
	d := &DriverOf[float32]{Method: &AdaGradOf[float32]{}, Gauge: float64Only{&Procrustes{}}, K1: 1}
	if _, err := d.Run(ProblemOf[float32]{Local: local, Blocks: b, Graph: gr}, slices.Clone(x32), 1, nil); err == nil {
		t.Error("a float32 driver ran a gauge step that is not a Gauge32")
	}
	d = &DriverOf[float32]{Method: &AdaGradOf[float32]{}, Gauge: &Procrustes{}, K1: 1}
	x := slices.Clone(x32)
	if _, err := d.Run(ProblemOf[float32]{Local: local, Blocks: b, Graph: gr}, x, 1, nil); err != nil {
		t.Fatal(err)
	}
	if !(PsiOf(x, b, gr) < 0.9*PsiOf(x32, b, gr)) {
		t.Errorf("the float32 driver's Procrustes round did not lower psi: %v -> %v", PsiOf(x32, b, gr), PsiOf(x, b, gr))
	}
}

// float64Only hides Round32.
type float64Only struct{ g Gauge }

func (f float64Only) Init(b Blocks, g *Graph) error { return f.g.Init(b, g) }
func (f float64Only) Round(x []float64) RoundStats  { return f.g.Round(x) }

// TestGauge32NoAlloc: a float32 round allocates nothing (it widens the
// blocks a group of columns at a time into its scratch, never a copy of
// x).
func TestGauge32NoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	rng := rand.New(rand.NewPCG(3, 3))
	b := Blocks{T: 5, N: 300, D: 4}
	x := narrow32(twisted(rng, b, 0.1, 0.05))
	for _, g := range []Gauge32{&Goldstone{Pool: testPool(2)}, &Procrustes{Pool: testPool(2)}} {
		if err := g.Init(b, Chain(b.T, 1)); err != nil {
			t.Fatal(err)
		}
		g.Round32(x)
		if a := testing.AllocsPerRun(5, func() { g.Round32(x) }); a > 0 {
			t.Errorf("%T.Round32: %v allocations per round", g, a)
		}
	}
}
