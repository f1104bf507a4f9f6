package dwe

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// fma32Exact is a*b + c rounded once to float32, by math/big.
func fma32Exact(a, b, c float32) float32 {
	if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) || math.IsNaN(float64(c)) || math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) || math.IsInf(float64(c), 0) {
		return float32(float64(a)*float64(b) + float64(c))
	}
	x := new(big.Float).SetPrec(400).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(400).SetFloat64(float64(c)))
	f, _ := x.Float32()
	if f == 0 && x.Sign() == 0 { // the sign of an exact zero: +0 unless both terms are -0
		return float32(float64(a)*float64(b) + float64(c))
	}
	return f
}

// fma32Cases returns random triples and triples whose exact result lies
// next to a float32 halfway point (the double-rounding cases), next to the
// overflow threshold, in the subnormal range, and with cancellation.
func fma32Cases(rng *rand.Rand, n int) [][3]float32 {
	var cs [][3]float32
	r32 := func() float32 { return float32(rng.NormFloat64()) }
	for range n {
		a, b := r32(), r32()
		cs = append(cs, [3]float32{a, b, r32()})
		cs = append(cs, [3]float32{a, b, -a * b})                                        // cancellation
		cs = append(cs, [3]float32{a, b, float32(-float64(a) * float64(b) * 1.0000001)}) // near cancellation
		// a*b with its 25th significant bit set and the rest of its bits
		// zero is a halfway point; c below float64's ulp of it decides.
		m1 := float32(1<<12 + rng.IntN(1<<12))
		m2 := float32(1<<12 + rng.IntN(1<<12))
		p := float64(m1) * float64(m2) // up to 26 bits
		tiny := float32(math.Ldexp(p, -60-rng.IntN(8)))
		cs = append(cs, [3]float32{m1, m2, tiny}, [3]float32{m1, m2, -tiny})
		cs = append(cs, [3]float32{m1 * 0x1p-80, m2 * 0x1p-80, tiny * 0x1p-150}) // subnormal range
		cs = append(cs, [3]float32{a * 0x1p100, b * 0x1p27, r32() * 0x1p127})    // near overflow
	}
	cs = append(cs, [3]float32{0, 5, 0}, [3]float32{float32(math.Copysign(0, -1)), 5, 0}, [3]float32{-1, 0, float32(math.Copysign(0, -1))},
		[3]float32{math.MaxFloat32, 2, -math.MaxFloat32}, [3]float32{float32(math.Inf(1)), 0, 1}, [3]float32{float32(math.Inf(1)), 1, float32(math.Inf(-1))},
		[3]float32{float32(math.NaN()), 1, 1}, [3]float32{0x1p-149, 0.5, 0}, [3]float32{0x1p-149, 0.5, 0x1p-149}, [3]float32{3, 0x1p-150, 0})
	return cs
}

// TestFMA32: fma32 is a*b+c rounded once, on random triples and on the
// cases where rounding twice (to float64, then float32) goes wrong; the
// naive float32(float64(a)*float64(b) + float64(c)) is checked to fail
// some of them, so the cases do reach the double-rounding error.
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 1))
	naiveWrong := 0
	for _, c := range fma32Cases(rng, 100000) {
		got, want := fma32(c[0], c[1], c[2]), fma32Exact(c[0], c[1], c[2])
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fma32(%g, %g, %g) = %g (%#x), exact rounding %g (%#x)", c[0], c[1], c[2], got, math.Float32bits(got), want, math.Float32bits(want))
		}
		if naive := float32(float64(float64(c[0])*float64(c[1])) + float64(c[2])); naive != want && want == want {
			naiveWrong++
		}
	}
	if naiveWrong == 0 {
		t.Fatal("no case where rounding twice differs: the cases miss the halfway points")
	}
	t.Logf("rounding twice is wrong in %d cases", naiveWrong)
}

// withGemm32 runs fn on every float32 kernel path this CPU has (Go twin,
// AVX2, AVX-512), restoring the selection afterwards.
func withGemm32(t *testing.T, fn func(path string)) {
	t.Helper()
	a2, a5 := useGemm32AVX2, useGemm32AVX512
	defer func() { useGemm32AVX2, useGemm32AVX512 = a2, a5 }()
	for _, p := range []struct {
		name   string
		on     bool
		v2, v5 bool
	}{{"go", true, false, false}, {"avx2", a2, true, false}, {"avx512", a5, true, true}} {
		if !p.on {
			t.Logf("%s: not on this CPU", p.name)
			continue
		}
		useGemm32AVX2, useGemm32AVX512 = p.v2, p.v5
		fn(p.name)
	}
}

func randVec32(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// checkGemm32 runs gemmAcc32 on every kernel path and checks that each
// gives, bit for bit, the definition (one fma32 chain per entry in p
// order, computed directly) and lies within float32 rounding of the
// product in float64.
func checkGemm32(t *testing.T, rng *rand.Rand, rows, cols, n int, aT, bT bool) {
	t.Helper()
	aOut, aRed := n, 1
	if aT {
		aOut, aRed = 1, rows
	}
	bRed, bOut := cols+1, 1 // B row-major with padding (bT: without)
	if bT {
		bRed = cols
	}
	ldo := cols + 3
	a := randVec32(rng, max(rows*n, 1))
	b := randVec32(rng, max(n*(cols+1), 1))
	out0 := randVec32(rng, rows*ldo)
	def := slices.Clone(out0)
	for i := range rows {
		for j := range cols {
			acc := def[i*ldo+j]
			var ref, mag float64 = float64(out0[i*ldo+j]), math.Abs(float64(out0[i*ldo+j]))
			for p := range n {
				x, y := a[i*aOut+p*aRed], b[p*bRed+j*bOut]
				acc = fma32(x, y, acc)
				ref += float64(x) * float64(y)
				mag += math.Abs(float64(x) * float64(y))
			}
			def[i*ldo+j] = acc
			if math.Abs(float64(acc)-ref) > float64(n+1)*0x1p-24*mag {
				t.Fatalf("%dx%dx%d: entry (%d,%d) = %g, float64 product %g", rows, cols, n, i, j, acc, ref)
			}
		}
	}
	var buf gemm32Buf
	withGemm32(t, func(path string) {
		out := slices.Clone(out0)
		gemmAcc32(out, ldo, a, aOut, aRed, b, bRed, rows, cols, n, &buf)
		if !slices.Equal(out, def) {
			for i := range out {
				if out[i] != def[i] {
					t.Fatalf("%s %dx%dx%d aT=%v bT=%v: out[%d] = %g, the fma32 chain %g", path, rows, cols, n, aT, bT, i, out[i], def[i])
				}
			}
		}
	})
}

// TestGemm32: the float32 tile products on every kernel path equal their
// definition bit for bit, on shapes with every kind of edge (rows not a
// multiple of 8 or 4, columns not a multiple of 32 or 16, n = 0, 1), with
// A in both layouts and B with and without row padding; gemmNT32 (on v
// transposed by transpose32) equals the chains of u_r . v_c.
func TestGemm32(t *testing.T) {
	rng := rand.New(rand.NewPCG(62, 1))
	for _, sz := range []struct{ rows, cols, n int }{{1, 1, 1}, {8, 32, 1}, {8, 32, 64}, {64, 100, 64}, {16, 64, 100}, {13, 47, 9}, {3, 5, 7}, {9, 33, 0}, {4, 16, 5}, {17, 31, 64}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			t.Run(fmt.Sprintf("%dx%dx%d/aT=%v/bT=%v", sz.rows, sz.cols, sz.n, tr[0], tr[1]), func(t *testing.T) {
				checkGemm32(t, rng, sz.rows, sz.cols, sz.n, tr[0], tr[1])
			})
		}
	}
	for _, sz := range []struct{ m, n, d int }{{64, 64, 100}, {13, 37, 30}, {1, 1, 1}} {
		u, v := randVec32(rng, sz.m*sz.d), randVec32(rng, sz.n*sz.d)
		want := make([]float32, sz.m*sz.n)
		for r := range sz.m {
			for c := range sz.n {
				var acc float32
				for k := range sz.d {
					acc = fma32(u[r*sz.d+k], v[c*sz.d+k], acc)
				}
				want[r*sz.n+c] = acc
			}
		}
		var buf gemm32Buf
		vt := make([]float32, sz.d*sz.n)
		transpose32(vt, v, sz.n, sz.d)
		withGemm32(t, func(path string) {
			x := randVec32(rng, sz.m*sz.n)
			gemmNT32(x, u, vt, sz.m, sz.n, sz.d, sz.n, &buf)
			if !slices.Equal(x, want) {
				t.Fatalf("%s %v: gemmNT32 differs from the fma32 chains", path, sz)
			}
		})
	}
}

// FuzzGemm32: random shapes and values (including non-finite ones through
// the raw bits), every kernel path against the definition.
func FuzzGemm32(f *testing.F) {
	f.Add(uint8(8), uint8(32), uint8(5), uint64(1), false, false)
	f.Add(uint8(13), uint8(47), uint8(9), uint64(2), true, true)
	f.Add(uint8(64), uint8(100), uint8(64), uint64(3), true, false)
	f.Fuzz(func(t *testing.T, rows, cols, n uint8, seed uint64, aT, bT bool) {
		if rows == 0 || cols == 0 || rows > 80 || cols > 120 || n > 120 {
			return
		}
		checkGemm32(t, rand.New(rand.NewPCG(seed, 7)), int(rows), int(cols), int(n), aT, bT)
	})
}
