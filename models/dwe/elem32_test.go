package dwe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"goldstone/optim"
)

// elem32Value returns a float32 test score: mostly ordinary scores, and the
// edges of the float32 element-wise maths (signed zeros, subnormal scores,
// 1+e around sqrt 2, e^-|x| subnormal (|x| in 87.3..103.9), around the
// clamp at 104, huge; with wild, infinities and NaN).
func elem32Value(rng *rand.Rand, wild bool) float32 {
	edges := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -1e-45, 0.8813736, -0.8813735, 0.88137364,
		16.6, -17.4, 87.3, -90.1, 100.5, -103.27, 103.9, -103.99999, 104, 104.00001, -150, 3e38}
	if wild {
		edges = append(edges, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	}
	switch k := rng.IntN(10); {
	case k < 2:
		return edges[rng.IntN(len(edges))]
	case k < 3:
		return float32(220 * (rng.Float64() - 0.5)) // subnormal and zero e^-|x| included
	case k < 5:
		return float32(40 * (rng.Float64() - 0.5))
	default:
		return float32(4 * rng.NormFloat64())
	}
}

// TestElem32MatchesGo: the float32 element-wise kernels (elemRow32 on
// elem32AVX2x8 and elem32AVX512x16) give the same bits as their Go twin
// elemRow32Go for the loss, every dl/dx and the positive-count cursor: on
// rows of every length mod 16 and across chunks, positive counts anywhere
// (first, last, adjacent, none), the edges of elem32Value (NaN: the chunk's
// fallback to Go); and each kernel called directly (checkElem32Direct).
func TestElem32MatchesGo(t *testing.T) {
	if !useElem32AVX2 {
		t.Skip("no AVX2 kernel on this build/CPU")
	}
	a2, a5 := useElem32AVX2, useElem32AVX512
	defer func() { useElem32AVX2, useElem32AVX512 = a2, a5 }()
	for _, on := range []bool{false, true} {
		if on && !a5 {
			t.Log("avx512: not on this CPU")
			continue
		}
		useElem32AVX512 = on
		t.Run(map[bool]string{false: "avx2", true: "avx512"}[on], checkElem32MatchesGo)
	}
}

// checkElem32MatchesGo compares elemRow32 (on the kernel useElem32AVX512
// selects) with elemRow32Go bit for bit on random rows.
func checkElem32MatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 1))
	var buf elem32Buf
	for trial := range 600 {
		n := 1 + rng.IntN(200)
		row := make([]float32, n)
		bj := make([]float64, n)
		for j := range row {
			row[j] = elem32Value(rng, trial%4 == 3)
			bj[j] = rng.Float64()
		}
		// Positive counts in columns [7, 7+n) given as absolute columns,
		// with entries before and after the tile; none in every 7th row.
		sp := sparseRows{col: []int32{2}, val: []float64{9}}
		for j := range n {
			if trial%7 != 6 && (rng.IntN(8) == 0 || (trial%5 == 0 && (j == 0 || j == n-1))) {
				sp.col = append(sp.col, int32(7+j))
				sp.val = append(sp.val, 5*rng.Float64())
			}
		}
		sp.col, sp.val = append(sp.col, int32(7+n+3)), append(sp.val, 1)
		ai, scale := rng.Float64(), []float64{1, 2.5}[trial%2]
		loss0 := rng.NormFloat64()
		name := fmt.Sprintf("trial %d (n=%d)", trial, n)
		pg := tilePositives{sp: sp, k: 1, kend: len(sp.col), lo: 7, hi: int32(7 + n)}
		pa := pg
		checkElem32Direct(t, name, row, bj, ai, scale, loss0)
		rg, ra := slices.Clone(row), slices.Clone(row)
		lg := elemRow32Go(rg, bj, ai, scale, &pg, loss0)
		la := elemRow32(ra, bj, ai, scale, &pa, loss0, &buf)
		if math.Float64bits(lg) != math.Float64bits(la) && !(math.IsNaN(lg) && math.IsNaN(la)) {
			t.Fatalf("%s: loss %v (%x), Go %v (%x)", name, la, math.Float64bits(la), lg, math.Float64bits(lg))
		}
		if pa.k != pg.k || pg.k != len(sp.col)-1 {
			t.Fatalf("%s: cursor %d, Go %d, want %d", name, pa.k, pg.k, len(sp.col)-1)
		}
		for j := range rg {
			if math.Float32bits(rg[j]) != math.Float32bits(ra[j]) && !(rg[j] != rg[j] && ra[j] != ra[j]) {
				t.Fatalf("%s: entry %d (x = %v): dl/dx %v, Go %v", name, j, row[j], ra[j], rg[j])
			}
		}
	}
}

// checkElem32Direct calls the kernel useElem32AVX512 selects
// (elem32AVX512x16 or elem32AVX2x8) on the first 16 k (8 k) <= 64 entries
// of row (with a NaN it must refuse them and leave x unchanged; without,
// take them) and checks each loss term, each
// dl/dx (in place in the first nsum groups, the rest unchanged) and the sum
// of the first nsum groups' terms against elemRow32Go on
// single entries without positive counts.
func checkElem32Direct(t *testing.T, name string, row []float32, bj []float64, ai, scale, loss0 float64) {
	kernel, grp := elem32AVX2x8, 8
	if useElem32AVX512 {
		kernel, grp = elem32AVX512x16, 16
	}
	nv := min(len(row), elemChunk) / grp * grp
	if nv == 0 {
		return
	}
	var lt [elemChunk]float64
	var gs [elemChunk]float32
	nsum := len(row) / 3 % (nv/grp + 1)
	xa := slices.Clone(row[:nv])
	l, ok := kernel(&xa[0], &bj[0], &lt[0], &gs[0], nv, ai, scale, loss0, nsum)
	if slices.ContainsFunc(row[:nv], func(v float32) bool { return v != v }) {
		if ok || !slices.EqualFunc(xa, row[:nv], func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
			t.Fatalf("%s: the kernel took a NaN (%v) or changed x", name, ok)
		}
		return
	}
	if !ok {
		t.Fatalf("%s: the kernel refused %d entries without NaN", name, nv)
	}
	want := loss0
	for j := range nv {
		g := []float32{row[j]}
		var none tilePositives
		lj := elemRow32Go(g, bj[j:j+1], ai, scale, &none, 0)
		ga := gs[j]
		if j < grp*nsum {
			want += lt[j]
			ga = xa[j] // in place
		} else if math.Float32bits(xa[j]) != math.Float32bits(row[j]) {
			t.Fatalf("%s: entry %d (x = %v) of an unsummed group changed to %v", name, j, row[j], xa[j])
		}
		if math.Float64bits(lj) != math.Float64bits(lt[j]) || math.Float32bits(g[0]) != math.Float32bits(ga) {
			t.Fatalf("%s: entry %d (x = %v): term %v, dl/dx %v; Go %v, %v", name, j, row[j], lt[j], ga, lj, g[0])
		}
	}
	if math.Float64bits(l) != math.Float64bits(want) {
		t.Fatalf("%s: the kernel's sum of %d groups %v, want %v", name, nsum, l, want)
	}
}

// ulps32 returns |got - want| in units of the float32 spacing at want
// (2^-149 below the normal range).
func ulps32(got float32, want float64) float64 {
	_, exp := math.Frexp(want) // want = f 2^exp, f in [0.5, 1)
	return math.Abs(float64(got)-want) / math.Ldexp(1, max(exp-24, -149))
}

// TestElem32Accuracy measures the float32 element-wise maths against
// float64 references (optim.Exp, math.Log1p) over a dense sweep of a =
// |x| in [0, 110]: 4M float32 values spaced evenly in their bit patterns
// (every binade from 2^-149 up) and 4M on an even grid. The errors, in
// float32 ulps of the exact value (units of 2^-149 where it is subnormal),
// are bounded at about 1.3-1.5 times the measured maxima (logged; measured
// on 2026-11-27: e^-a 0.98 ulp, log(1+e^-a) = softplus(-a) 1.86, sig(a)
// 2.86 and sig(-a) 3.55 (the products of e and 1/(1+e), both rounded),
// softplus(a) 1.72).
func TestElem32Accuracy(t *testing.T) {
	var worst [6]float64
	var at [6]float32
	check := func(a float32) {
		e := optim.Exp(-float64(a))
		l1 := math.Log1p(e)
		sig, sigm, spp, spm := sigSoftplus32(a) // x = a >= 0
		errs := [6]float64{
			ulps32(expNeg32(a), e),
			ulps32(spm, l1),            // softplus(-a) = log(1+e^-a)
			ulps32(sig, 1/(1+e)),       // sig(a)
			ulps32(sigm, e/(1+e)),      // sig(-a)
			ulps32(spp, float64(a)+l1), // softplus(a)
			0,
		}
		_, _, _, spm2 := sigSoftplus32(-a) // softplus(a) from x = -a
		errs[5] = ulps32(spm2, float64(a)+l1)
		for k, v := range errs {
			if !(v <= worst[k]) {
				worst[k], at[k] = v, a
			}
		}
	}
	top := math.Float32bits(110)
	for b := uint32(0); b < top; b += top / (1 << 22) {
		check(math.Float32frombits(b))
	}
	for i := range 1 << 22 {
		check(float32(110 * float64(i) / (1 << 22)))
	}
	names := []string{"e^-a", "log(1+e^-a)", "sig(a)", "sig(-a)", "softplus(a)", "softplus(a) from -a"}
	bounds := []float64{1.5, 2.5, 3.5, 4.5, 2.5, 2.5}
	for k, n := range names {
		t.Logf("%s: max error %.2f ulp (at a = %v)", n, worst[k], at[k])
		if !(worst[k] <= bounds[k]) {
			t.Errorf("%s: error %.2f ulp at a = %v, want <= %v", n, worst[k], at[k], bounds[k])
		}
	}
}
