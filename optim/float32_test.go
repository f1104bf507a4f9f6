package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func narrow32(x []float64) []float32 {
	n := make([]float32, len(x))
	for i, v := range x {
		n[i] = float32(v)
	}
	return n
}

// TestDriverFloat32 runs the Driver in the float32 mode (every Method, on
// every coupling kind, with a row tail): bit-identical at 1, 2 and 3
// workers, with and without the AVX kernels (2 workers: the Go loops), and
// within float32 rounding of the float64 mode from the same
// (float32) start: psi and the local loss within 1e-5 relative and x within
// 1e-5 of its largest entry after 3 steps.
func TestDriverFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 1))
	b := Blocks{Offset: 1, T: 5, N: 51, D: 3}
	n := b.Offset + b.Len() + 3
	localGrad := randVec(rng, n, 1)
	local64 := func(grad, x []float64) float64 {
		for i := range grad {
			grad[i] += localGrad[i] * math.Sin(x[i])
		}
		return 1
	}
	local32 := func(grad, x []float32) float64 {
		for i := range grad {
			grad[i] += float32(localGrad[i] * math.Sin(float64(x[i])))
		}
		return 1
	}
	x32 := narrow32(randVec(rng, n, 1))
	x0 := make([]float64, n)
	for i, v := range x32 {
		x0[i] = float64(v)
	}
	methods := []struct {
		name string
		m64  func() Method
		m32  func() MethodOf[float32]
	}{
		{"GDClip", func() Method { return &GD{Rate: Constant(0.05), Clip: 0.5} }, func() MethodOf[float32] { return &GDOf[float32]{Rate: Constant(0.05), Clip: 0.5} }},
		{"AdaGrad", func() Method { return &AdaGrad{Rate: Constant(0.1)} }, func() MethodOf[float32] { return &AdaGradOf[float32]{Rate: Constant(0.1)} }},
		{"Adam", func() Method { return &Adam{Rate: Constant(0.05)} }, func() MethodOf[float32] { return &AdamOf[float32]{Rate: Constant(0.05)} }},
	}
	for _, m := range methods {
		for _, gr := range fusedGraphs(b.T) {
			t.Run(fmt.Sprintf("%s/%s", m.name, gr.name), func(t *testing.T) {
				const steps = 3
				ref := slices.Clone(x0)
				var refPsi, refLocal []float64
				d64 := &Driver{Method: m.m64()}
				if _, err := d64.Run(Problem{Local: local64, Blocks: b, Graph: gr.g, L2: 0.25}, ref, steps, func(it *Iter) error {
					refPsi, refLocal = append(refPsi, it.Psi), append(refLocal, it.Local)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				var first []float32
				avx := useAVX
				defer func() { useAVX = avx }()
				for _, w := range []int{1, 2, 3} {
					useAVX = avx && w != 2 // the Go loops at 2 workers
					x := slices.Clone(x32)
					var k int
					d := &DriverOf[float32]{Method: m.m32(), Pool: testPool(w)}
					_, err := d.Run(ProblemOf[float32]{Local: local32, Blocks: b, Graph: gr.g, L2: 0.25}, x, steps, func(it *Iter) error {
						if relErr(it.Psi, refPsi[k]) > 1e-5 || relErr(it.Local, refLocal[k]) > 1e-5 {
							t.Errorf("%d workers, step %d: psi %v local %v, float64 mode %v %v", w, k, it.Psi, it.Local, refPsi[k], refLocal[k])
						}
						k++
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					var xmax float64
					for _, v := range ref {
						xmax = max(xmax, math.Abs(v))
					}
					for i := range x {
						if e := math.Abs(float64(x[i]) - ref[i]); !(e <= 1e-5*xmax) {
							t.Fatalf("%d workers: x[%d] = %v, float64 mode %v", w, i, x[i], ref[i])
						}
					}
					if first == nil {
						first = x
					} else if !slices.Equal(x, first) {
						t.Fatalf("%d workers (AVX %v): other bits than at 1 worker", w, useAVX)
					}
				}
			})
		}
	}
}

// TestDriverFloat32NoAlloc: the float32 steps allocate nothing.
func TestDriverFloat32NoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	b := Blocks{T: 4, N: 50, D: 3}
	x := narrow32(randVec(rand.New(rand.NewPCG(19, 2)), b.Len(), 0.3))
	local := func(grad, x []float32) float64 {
		for i := range grad {
			grad[i] += x[i]
		}
		return 0
	}
	p := ProblemOf[float32]{Local: local, Blocks: b, Graph: Chain(b.T, 1)}
	d := &DriverOf[float32]{Method: &AdamOf[float32]{}, Pool: testPool(2)}
	var a10, a40 float64
	for try := 0; try < 4; try++ {
		a10 = testing.AllocsPerRun(3, func() { d.Run(p, x, 10, nil) })
		a40 = testing.AllocsPerRun(3, func() { d.Run(p, x, 40, nil) })
		if a40 <= a10 {
			return
		}
	}
	t.Fatalf("allocations grow with steps: %v for 10 steps, %v for 40", a10, a40)
}
