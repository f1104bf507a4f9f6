package optim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	blasgonum "gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

func TestGemmTiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		tA, tB  bool
		m, n, k int
	}{{false, false, 70, 130, 5}, {true, false, 65, 3, 200}, {false, true, 129, 66, 7}, {true, true, 2, 200, 3}} {
		a := randVec(rng, tc.m*tc.k, 1)
		b := randVec(rng, tc.k*tc.n, 1)
		c := randVec(rng, tc.m*tc.n, 1)
		var am, bm mat.Matrix
		lda, ldb := tc.k, tc.n
		am = mat.NewDense(tc.m, tc.k, a)
		if tc.tA {
			lda = tc.m
			am = mat.NewDense(tc.k, tc.m, a).T()
		}
		bm = mat.NewDense(tc.k, tc.n, b)
		if tc.tB {
			ldb = tc.k
			bm = mat.NewDense(tc.n, tc.k, b).T()
		}
		var want mat.Dense
		want.Mul(am, bm)
		want.Scale(2, &want)
		want.Add(&want, mat.NewDense(tc.m, tc.n, append([]float64(nil), c...)))
		gemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 2, a, lda, b, ldb, 1, c, tc.n, make([]float64, tc.m*tc.k+tc.k*tc.n))
		if !mat.EqualApprox(&want, mat.NewDense(tc.m, tc.n, c), 1e-12) {
			t.Errorf("%+v: gemm differs from mat.Mul", tc)
		}
	}
}

func TestExpm(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 1))
	for _, tc := range []struct {
		d     int
		scale float64
		skew  bool
	}{{1, 1, false}, {2, 0.1, true}, {3, 3, true}, {5, 1e-8, true}, {30, 0.5, true}, {30, 20, true}, {6, 2, false}} {
		a := randVec(rng, tc.d*tc.d, tc.scale)
		if tc.skew {
			s := make([]float64, len(a))
			skew(s, a, tc.d)
			a = s
		}
		got := make([]float64, tc.d*tc.d)
		expm(got, a, tc.d, make([]float64, 3*tc.d*tc.d))
		var want mat.Dense
		want.Exp(mat.NewDense(tc.d, tc.d, a))
		if !mat.EqualApprox(&want, mat.NewDense(tc.d, tc.d, got), 1e-11*math.Max(1, mat.Norm(&want, math.Inf(1)))) {
			t.Errorf("%+v: expm differs from mat.Exp", tc)
		}
		if tc.skew { // orthogonal
			g := mat.NewDense(tc.d, tc.d, got)
			var qtq mat.Dense
			qtq.Mul(g.T(), g)
			if !mat.EqualApprox(&qtq, eye(tc.d), 1e-12) {
				t.Errorf("%+v: exp(skew) not orthogonal", tc)
			}
		}
	}
	d := 30
	a, dst, w := randVec(rng, d*d, 1), make([]float64, d*d), make([]float64, 3*d*d)
	if n := testing.AllocsPerRun(10, func() { expm(dst, a, d, w) }); n != 0 {
		t.Fatalf("expm allocates %v times", n)
	}
}

func eye(d int) *mat.Dense {
	m := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		m.Set(i, i, 1)
	}
	return m
}

func TestDetSign(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	for d := 1; d <= 7; d++ {
		for k := 0; k < 20; k++ {
			a := randVec(rng, d*d, 1)
			want := math.Copysign(1, mat.Det(mat.NewDense(d, d, a)))
			if got := detSign(a, d, make([]float64, d*d)); got != want {
				t.Fatalf("d=%d: detSign %v, want %v", d, got, want)
			}
		}
	}
	if got := detSign(make([]float64, 4), 2, make([]float64, 4)); got != 0 {
		t.Fatalf("singular: detSign %v", got)
	}
}

// overlapGemm and rotateGemm are gonum Dgemm formulations of overlap and
// rotate (the code before the FMA kernels, whose bits depended on the
// build), kept as references for benchmarks.
func overlapGemm(m, zs, zt []float64, n, d int) {
	if n == 0 {
		clear(m[:d*d])
		return
	}
	blasgonum.Implementation{}.Dgemm(blas.Trans, blas.NoTrans, d, d, n, 1, zs, d, zt, d, 0, m, d)
}

func rotateGemm(z []float64, n, d int, r, buf []float64) {
	const rotRows = 64
	for i := 0; i < n; i += rotRows {
		rows := min(rotRows, n-i)
		zi := z[i*d : (i+rows)*d]
		blasgonum.Implementation{}.Dgemm(blas.NoTrans, blas.Trans, rows, d, d, 1, zi, d, r, d, 0, buf, d)
		copy(zi, buf[:rows*d])
	}
}

// sumSq returns sum_i z_i^2 in storage order.
func sumSq(z []float64) float64 {
	var s float64
	for _, v := range z {
		s += v * v
	}
	return s
}

func TestOverlapRotate(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	for _, tc := range []struct{ n, d int }{
		{0, 3}, {1, 1}, {1, 5}, {2, 2}, {3, 4}, {7, 7}, {64, 30}, {65, 30}, {129, 6}, {200, 9}, {131, 100},
	} {
		zs := randVec(rng, tc.n*tc.d, 1)
		zt := randVec(rng, tc.n*tc.d, 1)
		r := randVec(rng, tc.d*tc.d, 1)
		var want mat.Dense
		if tc.n > 0 {
			want.Mul(mat.NewDense(tc.n, tc.d, zs).T(), mat.NewDense(tc.n, tc.d, zt))
		} else {
			want.ReuseAs(tc.d, tc.d)
		}
		m := randVec(rng, tc.d*tc.d, 1) // overwritten
		buf := randVec(rng, scratchLen(tc.d), 1)
		dist, ss, st := overlap(m, zs, zt, tc.n, tc.d, buf)
		if !mat.EqualApprox(&want, mat.NewDense(tc.d, tc.d, m), 1e-12*float64(tc.n+1)) {
			t.Errorf("n=%d d=%d: overlap differs from mat.Mul", tc.n, tc.d)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"1/2||Z_s-Z_t||^2", dist, halfSqDist(zs, zt)}, {"||Z_s||^2", ss, sumSq(zs)}, {"||Z_t||^2", st, sumSq(zt)}} {
			if relErr(c.got, c.want) > 1e-13 {
				t.Errorf("n=%d d=%d: overlap %s = %v, want %v", tc.n, tc.d, c.name, c.got, c.want)
			}
		}
		if tc.n == 0 {
			continue
		}
		var rot mat.Dense
		rot.Mul(mat.NewDense(tc.n, tc.d, zs), mat.NewDense(tc.d, tc.d, r).T())
		rotate(zs, tc.n, tc.d, r, buf)
		if !mat.EqualApprox(&rot, mat.NewDense(tc.n, tc.d, zs), 1e-12*float64(tc.d)) {
			t.Errorf("n=%d d=%d: rotate differs from mat.Mul", tc.n, tc.d)
		}
	}
	n, d := 100, 30
	zs, zt, m := randVec(rng, n*d, 1), randVec(rng, n*d, 1), make([]float64, d*d)
	r, buf := randVec(rng, d*d, 1), make([]float64, scratchLen(d))
	if a := testing.AllocsPerRun(5, func() { overlap(m, zs, zt, n, d, buf); rotate(zs, n, d, r, buf) }); a != 0 {
		t.Fatalf("overlap+rotate allocate %v times", a)
	}
}

// TestOverlapRotateKernels: overlap and rotate give the same bits with the
// FMA micro-kernels and with their pure-Go versions, at every d (the
// artificial problems' d = 3 included); and a row's rotation does not depend
// on where it lies in the block (the last n mod 4 rows included).
func TestOverlapRotateKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 1))
	for _, tc := range []struct{ n, d int }{{1, 3}, {70, 3}, {3, 5}, {1, 8}, {5, 8}, {67, 30}, {130, 9}, {64, 32}, {200, 100}} {
		zs := randVec(rng, tc.n*tc.d, 1)
		zt := randVec(rng, tc.n*tc.d, 1)
		r := randVec(rng, tc.d*tc.d, 1)
		type res struct {
			m, rot  []float64
			a, b, c float64
		}
		var got [2]res
		withFMA(t, func(t *testing.T, fma bool) {
			m, buf := make([]float64, tc.d*tc.d), randVec(rng, scratchLen(tc.d), 1)
			a, b, c := overlap(m, zs, zt, tc.n, tc.d, buf)
			rot := slices.Clone(zs)
			rotate(rot, tc.n, tc.d, r, buf)
			got[b2i(fma)] = res{m, rot, a, b, c}
			// The last row rotated alone (a block of one row) gives the same bits.
			last := slices.Clone(zs[(tc.n-1)*tc.d:])
			rotate(last, 1, tc.d, r, buf)
			if !slices.Equal(last, rot[(tc.n-1)*tc.d:]) {
				t.Fatalf("n=%d d=%d: the last row rotated alone differs", tc.n, tc.d)
			}
		})
		if g0, g1 := got[0], got[1]; g1.m != nil {
			if !slices.Equal(g0.m, g1.m) || !slices.Equal(g0.rot, g1.rot) || g0.a != g1.a || g0.b != g1.b || g0.c != g1.c {
				t.Fatalf("n=%d d=%d: pure-Go and FMA kernels differ", tc.n, tc.d)
			}
		}
	}
}
