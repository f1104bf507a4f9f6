package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestGoldstoneRateScale: RateScale multiplies the automatic rho' and
// nothing else; a bad scale is refused at Init.
func TestGoldstoneRateScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	mf := newMF(rng, 6, 6, 3, 12)
	b := mf.blocks()
	gr := Chain(b.T, 10)
	x := twisted(rng, b, 0.15, 0.05)
	rate := func(scale float64) float64 {
		y := append([]float64(nil), x...)
		g := Goldstone{RateScale: scale, NoGuard: true}
		if err := g.Init(b, gr); err != nil {
			t.Fatal(err)
		}
		return g.Round(y).Rate
	}
	one, quarter := rate(0), rate(0.25)
	if quarter != one*0.25 {
		t.Errorf("RateScale 0.25: rho' %v, want %v (a quarter of %v)", quarter, one*0.25, one)
	}
	if got := rate(1); got != one {
		t.Errorf("RateScale 1: rho' %v, want the automatic %v", got, one)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		g := Goldstone{RateScale: bad}
		if err := g.Init(b, gr); err == nil {
			t.Errorf("RateScale %v accepted", bad)
		}
	}
}

// TestGoldstoneFlipsOnly: a flips-only round removes a reflection wall as
// the full round does, and otherwise leaves x exactly as it was (no
// continuous step: no rate; the parameters bit for bit).
func TestGoldstoneFlipsOnly(t *testing.T) {
	x, b := reflectionWall()
	gr := Chain(b.T, 1)
	g := Goldstone{FlipsOnly: true, Pool: testPool(2)}
	if err := g.Init(b, gr); err != nil {
		t.Fatal(err)
	}
	psi0 := Psi(x, b, gr)
	st := g.Round(x)
	if st.Flips == 0 || !(st.PsiAfter < 0.01*psi0) {
		t.Fatalf("flips-only round: %d flips, psi %v -> %v; want the wall removed", st.Flips, psi0, st.PsiAfter)
	}
	if !math.IsNaN(st.Rate) {
		t.Errorf("flips-only round reports rate %v, want NaN (no natural-gradient step)", st.Rate)
	}
	// Without a wall, a flips-only round changes nothing.
	y := append([]float64(nil), x...)
	st = g.Round(y)
	if st.Flips != 0 {
		t.Fatalf("second round flipped %d steps", st.Flips)
	}
	for i := range y {
		if math.Float64bits(y[i]) != math.Float64bits(x[i]) {
			t.Fatalf("flips-only round without walls changed x[%d]: %v -> %v", i, x[i], y[i])
		}
	}
}

// TestGoldstoneConcentration checks the statistic against a direct
// eigendecomposition (gonum), with both rotations (the linear one reuses
// its Gram matrices), and that it is NaN when not asked for.
func TestGoldstoneConcentration(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	b := Blocks{T: 7, N: 15, D: 4}
	x := randVec(rng, b.Len(), 1)
	blk := b.Block(x, 3) // one step holds much energy in one direction
	for i := 0; i < b.N; i++ {
		blk[i*b.D] *= 6
	}
	var want, sz float64
	for k := 0; k < b.T; k++ {
		z := mat.NewDense(b.N, b.D, append([]float64(nil), b.Block(x, k)...))
		var c mat.SymDense
		c.SymOuterK(1, z.T())
		var eig mat.EigenSym
		if !eig.Factorize(&c, false) {
			t.Fatal("eigen")
		}
		vals := eig.Values(nil)
		want = math.Max(want, vals[len(vals)-1])
		for _, v := range b.Block(x, k) {
			sz += v * v
		}
	}
	want /= sz / float64(b.T*b.D)
	gr := Chain(b.T, 1)
	for _, rot := range []Rotation{RotationExact, RotationLinear} {
		g := Goldstone{Concentration: true, Rotation: rot, NoFlip: true}
		if err := g.Init(b, gr); err != nil {
			t.Fatal(err)
		}
		got := g.Round(append([]float64(nil), x...)).Concentration
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("rotation %d: concentration %v, want %v", rot, got, want)
		}
		if !(want > 3) {
			t.Errorf("test data: concentration %v, want a concentrated step (> 3)", want)
		}
	}
	g := Goldstone{}
	if err := g.Init(b, gr); err != nil {
		t.Fatal(err)
	}
	if c := g.Round(append([]float64(nil), x...)).Concentration; !math.IsNaN(c) {
		t.Errorf("concentration %v without Concentration, want NaN", c)
	}
}
