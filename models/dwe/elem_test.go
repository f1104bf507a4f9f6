package dwe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// elemValue returns a test value of the pair matrix: mostly ordinary scores,
// and the edges of the element-wise maths (signed zeros, 1+e around sqrt 2,
// e near the underflow of the Taylor range, |x| around 700, huge, infinite,
// NaN).
func elemValue(rng *rand.Rand, wild bool) float64 {
	edges := []float64{0, math.Copysign(0, -1), 1e-300, -5e-324, 0.881373587019543, -0.8813735870195429,
		0.8813735870195432, 36.7, -37.5, 699.9999999999999, -700, 700.0000000000001, 745.2, -1e10}
	if wild {
		edges = append(edges, math.Inf(1), math.Inf(-1), math.NaN())
	}
	switch k := rng.IntN(10); {
	case k < 2:
		return edges[rng.IntN(len(edges))]
	case k < 4:
		return 40 * (rng.Float64() - 0.5)
	default:
		return 4 * rng.NormFloat64()
	}
}

// TestElemAVX2MatchesGo: the assembly element-wise kernel (elemRowAVX2)
// gives the same bits as the Go loop (elemRowGo) for the loss, the
// gradient row and the positive-count cursor: on rows of every length mod 4
// and across chunks, with positive counts anywhere (first, last, adjacent
// entries, none), and with arguments outside expNeg's fast range.
func TestElemAVX2MatchesGo(t *testing.T) {
	if !useElemAVX2 {
		t.Skip("no AVX2 kernel on this build/CPU")
	}
	a5 := useElemAVX512
	defer func() { useElemAVX512 = a5 }()
	for _, on := range []bool{false, true} {
		if on && !a5 {
			t.Log("avx512: not on this CPU")
			continue
		}
		useElemAVX512 = on
		t.Run(map[bool]string{false: "avx2", true: "avx512"}[on], checkElemVecMatchesGo)
	}
}

// checkElemVecMatchesGo compares elemRowAVX2 (on the kernel useElemAVX512
// selects) with elemRowGo bit for bit on random rows.
func checkElemVecMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 1))
	for trial := range 400 {
		n := 1 + rng.IntN(150)
		wild := trial%4 == 3
		row := make([]float64, n)
		bj := make([]float64, n)
		for j := range row {
			row[j] = elemValue(rng, wild)
			bj[j] = rng.Float64()
		}
		// Positive counts in columns of [lo, hi) = [7, 7+n), given as
		// absolute columns, with entries before and after the tile.
		sp := sparseRows{col: []int32{2}, val: []float64{9}}
		for j := range n {
			if rng.IntN(8) == 0 || (trial%5 == 0 && (j == 0 || j == n-1)) {
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
		rg, ra := append([]float64(nil), row...), append([]float64(nil), row...)
		lg := elemRowGo(rg, bj, ai, scale, &pg, loss0)
		la := elemRowAVX2(ra, bj, ai, scale, &pa, loss0)
		if math.Float64bits(lg) != math.Float64bits(la) && !(math.IsNaN(lg) && math.IsNaN(la)) {
			t.Fatalf("%s: loss %v (%x), Go %v (%x)", name, la, math.Float64bits(la), lg, math.Float64bits(lg))
		}
		if pa.k != pg.k || pg.k != len(sp.col)-1 {
			t.Fatalf("%s: cursor %d, Go %d, want %d", name, pa.k, pg.k, len(sp.col)-1)
		}
		for j := range rg {
			if math.Float64bits(rg[j]) != math.Float64bits(ra[j]) && !(math.IsNaN(rg[j]) && math.IsNaN(ra[j])) {
				t.Fatalf("%s: entry %d (x = %v): gradient %v, Go %v", name, j, row[j], ra[j], rg[j])
			}
		}
	}
}
