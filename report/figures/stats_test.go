package figures

import (
	"math"
	"slices"
	"testing"
)

func TestCensoredRatio(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		name         string
		base, method []float64
		want         float64
	}{
		{"both reach", []float64{100, 200, 300}, []float64{10, 20, 30}, 10},
		{"base censored at the median", []float64{100, nan, nan}, []float64{10, 20, 30}, inf},
		{"method censored at the median", []float64{100, 200, 300}, []float64{10, inf, nan}, 0},
		{"both censored", []float64{nan, nan, 1}, []float64{nan, nan, 1}, nan},
		{"empty", nil, []float64{1}, nan},
		{"even count: mean of the middle two", []float64{100, 300}, []float64{50, 50}, 4},
	} {
		got := CensoredRatio(c.base, c.method)
		if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%s: CensoredRatio = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestReached(t *testing.T) {
	if n := Reached([]float64{1, math.NaN(), math.Inf(1), 0, math.Inf(-1)}); n != 2 {
		t.Errorf("Reached = %d, want 2", n)
	}
}

func TestBootstrap(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	mean := func(idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += xs[i]
		}
		return s / float64(len(idx))
	}
	lo, hi := Bootstrap(len(xs), 4000, 7, 0.95, mean)
	// The mean is 5.5 with standard error about 0.91 (n = 10): the
	// percentile interval is close to 5.5 ± 1.96 * 0.91.
	if !(lo < 5.5 && hi > 5.5) || lo < 3 || hi > 8 || hi-lo < 2.5 || hi-lo > 4.5 {
		t.Errorf("interval of the mean [%v, %v]: want about [3.7, 7.3]", lo, hi)
	}
	lo2, hi2 := Bootstrap(len(xs), 4000, 7, 0.95, mean)
	if lo2 != lo || hi2 != hi {
		t.Errorf("not deterministic: [%v, %v] then [%v, %v]", lo, hi, lo2, hi2)
	}
	// The seed picks the resamples.
	first := func(seed uint64) (f []int) {
		Bootstrap(4, 3, seed, 0.95, func(idx []int) float64 { f = append(f, idx...); return 0 })
		return f
	}
	if a, b := first(1), first(2); slices.Equal(a, b) {
		t.Errorf("seeds 1 and 2 drew the same resamples %v", a)
	}
	// A constant statistic has a degenerate interval.
	if lo, hi := Bootstrap(5, 100, 1, 0.95, func([]int) float64 { return 3 }); lo != 3 || hi != 3 {
		t.Errorf("constant: [%v, %v], want [3, 3]", lo, hi)
	}
	// Undefined resamples widen the interval on both sides: NaN in more than
	// 2.5% of the resamples makes both bounds infinite.
	calls := 0
	lo, hi = Bootstrap(5, 1000, 1, 0.95, func([]int) float64 {
		calls++
		if calls%10 == 0 {
			return math.NaN()
		}
		return 3
	})
	if !math.IsInf(lo, -1) || !math.IsInf(hi, 1) {
		t.Errorf("10%% undefined resamples: [%v, %v], want [-Inf, +Inf]", lo, hi)
	}
	// In fewer than 2.5% they do not move the bounds.
	calls = 0
	lo, hi = Bootstrap(5, 1000, 1, 0.95, func([]int) float64 {
		calls++
		if calls%100 == 0 {
			return math.NaN()
		}
		return 3
	})
	if lo != 3 || hi != 3 {
		t.Errorf("1%% undefined resamples: [%v, %v], want [3, 3]", lo, hi)
	}
	if lo, hi := Bootstrap(0, 100, 1, 0.95, mean); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("no units: [%v, %v], want NaN", lo, hi)
	}
}

func TestTInterval(t *testing.T) {
	// {1, 2, 3}: mean 2, s = 1, t(0.975, 2 df) = 4.302653 (tables):
	// 2 ± 4.302653/sqrt(3) = 2 ± 2.484138.
	m, lo, hi := TInterval([]float64{1, 2, math.NaN(), 3}, 0.95)
	if m != 2 || math.Abs(lo-(2-2.484138)) > 1e-6 || math.Abs(hi-(2+2.484138)) > 1e-6 {
		t.Errorf("TInterval({1,2,3}) = %v [%v, %v], want 2 [-0.484138, 4.484138]", m, lo, hi)
	}
	// Ten values 0..9: mean 4.5, s = 3.02765, t(0.95, 9 df) = 1.833113 at
	// level 0.9: half width 1.755072.
	xs := make([]float64, 10)
	for i := range xs {
		xs[i] = float64(i)
	}
	m, lo, hi = TInterval(xs, 0.9)
	if m != 4.5 || math.Abs(hi-m-1.755072) > 1e-5 || math.Abs(m-lo-1.755072) > 1e-5 {
		t.Errorf("TInterval(0..9, 0.9) = %v [%v, %v], want 4.5 ± 1.755072", m, lo, hi)
	}
	if m, lo, hi := TInterval([]float64{5}, 0.95); m != 5 || !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("one value: %v [%v, %v], want 5 [NaN, NaN]", m, lo, hi)
	}
	if m, _, _ := TInterval(nil, 0.95); !math.IsNaN(m) {
		t.Errorf("no values: mean %v, want NaN", m)
	}
}

func TestCensoredRatioBounds(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		name         string
		base, method []float64
		lo, hi       float64
	}{
		{"nothing censored", []float64{100, 200, 300}, []float64{10, 20, 30}, 10, 10},
		// GD never reaches on 2 of 3 seeds within 1000 steps: it needs more
		// than 1000 at the median, so at least 1000/20 = 50x, not infinitely
		// many times the method's steps.
		{"base censored at the median", []float64{100, nan, inf}, []float64{10, 20, 30}, 50, inf},
		{"method censored at the median", []float64{100, 200, 300}, []float64{10, inf, nan}, 0, 0.2},
		{"both censored", []float64{nan, nan, 1}, []float64{inf, 5, nan}, 0, inf},
		{"even count, one middle censored", []float64{100, 300, nan, nan}, []float64{10, 10, 10, 10}, (300 + 1000) / 2.0 / 10, inf},
		{"empty", nil, []float64{1}, nan, nan},
	}
	for _, c := range cases {
		lo, hi := CensoredRatioBounds(c.base, c.method, 1000)
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		if !same(lo, c.lo) || !same(hi, c.hi) {
			t.Errorf("%s: CensoredRatioBounds = [%v, %v], want [%v, %v]", c.name, lo, hi, c.lo, c.hi)
		}
	}
}

// TestFisherExact checks the test against R's fisher.test.
func TestFisherExact(t *testing.T) {
	for _, c := range []struct {
		a, b, c, d int
		want       float64
	}{
		{20, 0, 9, 11, 1.45307e-4}, // 2 C(29,9)/C(40,20): 20/20 vs 9/20 reached (issue 27: "1.5e-4")
		{3, 1, 1, 3, 0.4857},       // the tea-tasting lady
		{10, 10, 10, 10, 1},        // no difference
		{1, 9, 11, 3, 0.002759},    // fisher.test(matrix(c(1,11,9,3),2))
		{0, 5, 5, 0, 0.007937},     // complete separation, 5 + 5
	} {
		got := FisherExact(c.a, c.b, c.c, c.d)
		if math.Abs(got-c.want) > 1e-3*c.want {
			t.Errorf("FisherExact(%d, %d, %d, %d) = %.6g, want %.6g", c.a, c.b, c.c, c.d, got, c.want)
		}
	}
	if !math.IsNaN(FisherExact(-1, 0, 0, 0)) {
		t.Error("negative count accepted")
	}
}
