package optim

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestScheduleRate(t *testing.T) {
	for _, tc := range []struct {
		s    Schedule
		step int
		want float64
	}{
		{Schedule{Rho0: 0.5}, 100, 0.5},
		{Schedule{Rho0: 1, S0: 100, Kappa: 0.7}, 0, 1},
		{Schedule{Rho0: 1, S0: 100, Kappa: 0.7}, 100, math.Pow(0.5, 0.7)},
		{Schedule{Rho0: 2, S0: 0, Kappa: 1}, 3, 0.5},
	} {
		if got := tc.s.Rate(tc.step); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%+v.Rate(%d) = %v, want %v", tc.s, tc.step, got, tc.want)
		}
	}
}

// TestMethodSteps checks one or two steps of every method against the formulas.
func TestMethodSteps(t *testing.T) {
	g := []float64{0.5, -2, 0}
	for _, tc := range []struct {
		name string
		m    Method
		want func(step int, x0, g float64, h *[2]float64) float64 // returns x after the step
	}{
		{"GD", &GD{}, func(_ int, x, g float64, _ *[2]float64) float64 { return x - 1e-2*g }},
		{"GDClip", &GD{Rate: Constant(0.1), Clip: 1}, func(_ int, x, g float64, _ *[2]float64) float64 { return x - 0.1*min(max(g, -1), 1) }},
		{"AdaGrad", &AdaGrad{Rate: Constant(0.3)}, func(_ int, x, g float64, h *[2]float64) float64 {
			h[0] += g * g
			return x - 0.3*g/(math.Sqrt(h[0])+1e-8)
		}},
		{"Adam", &Adam{Rate: Schedule{Rho0: 0.1, S0: 10, Kappa: 1}}, func(s int, x, g float64, h *[2]float64) float64 {
			h[0] = 0.9*h[0] + 0.1*g
			h[1] = 0.999*h[1] + 0.001*g*g
			mh := h[0] / (1 - math.Pow(0.9, float64(s+1)))
			vh := h[1] / (1 - math.Pow(0.999, float64(s+1)))
			return x - 0.1*10/(float64(s)+10)*mh/(math.Sqrt(vh)+1e-8)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := []float64{1, 2, 3}
			want := append([]float64(nil), x...)
			state := make([][2]float64, len(x))
			tc.m.Init(len(x))
			for s := 0; s < 2; s++ {
				Step(tc.m, x, g, s)
				for i := range want {
					want[i] = tc.want(s, want[i], g[i], &state[i])
				}
				for i := range x {
					if math.Abs(x[i]-want[i]) > 1e-14 {
						t.Fatalf("step %d: x[%d] = %v, want %v", s, i, x[i], want[i])
					}
				}
			}
			n := 1000
			xs, gs := make([]float64, n), make([]float64, n)
			tc.m.Init(n)
			if a := testing.AllocsPerRun(10, func() { Step(tc.m, xs, gs, 3) }); a != 0 {
				t.Fatalf("Step allocates %v times", a)
			}
		})
	}
}

// TestMethodsAVX: the AVX kernels give the scalar loops' results bit for bit.
func TestMethodsAVX(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX on this machine")
	}
	defer func() { useAVX = true }()
	n := 1003
	for _, mk := range []func() Method{
		func() Method { return &AdaGrad{Rate: Constant(0.3)} },
		func() Method { return &Adam{Rate: Schedule{Rho0: 0.1, S0: 10, Kappa: 1}} },
	} {
		var xs [2][]float64
		for k, avx := range []bool{false, true} {
			useAVX = avx
			m := mk()
			m.Init(n)
			x := randVec(rand.New(rand.NewPCG(44, 1)), n, 1)
			for s := range 3 {
				g := randVec(rand.New(rand.NewPCG(45, uint64(s))), n, 2)
				m.Begin(s)
				m.Update(x[:517], g[:517], 0) // ranges of any length and offset
				m.Update(x[517:], g[517:], 517)
			}
			xs[k] = x
		}
		for i := range xs[0] {
			if math.Float64bits(xs[0][i]) != math.Float64bits(xs[1][i]) {
				t.Fatalf("%T: x[%d] scalar %v, AVX %v", mk(), i, xs[0][i], xs[1][i])
			}
		}
	}
}
