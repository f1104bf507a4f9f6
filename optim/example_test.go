package optim_test

import (
	"fmt"

	"goldstone/optim"
)

// A chain of two time steps whose second embedding is the first one rotated by
// 90 degrees: all of psi is stored in the Goldstone mode, and Procrustes gauge
// fixing removes it without changing the rotation-invariant local loss.
func ExampleGaugeGap() {
	b := optim.Blocks{T: 2, N: 2, D: 2}
	g := optim.Chain(2, 1)
	x := []float64{
		1, 0, 0, 2, // Z_0: columns (1,0) and (0,2)
		0, 1, -2, 0, // Z_1 = R(90 deg) Z_0
	}
	gap, err := optim.GaugeGap(x, b, g)
	if err != nil {
		panic(err)
	}
	fmt.Printf("psi %.3f, gauge gap %.3f\n", optim.Psi(x, b, g), gap)

	p := &optim.Procrustes{}
	if err := p.Init(b, g); err != nil {
		panic(err)
	}
	st := p.Round(x)
	fmt.Printf("after Procrustes: psi %.3f -> %.3f\n", st.PsiBefore, st.PsiAfter)
	// Output:
	// psi 5.000, gauge gap 5.000
	// after Procrustes: psi 5.000 -> 0.000
}

// Driver.Run minimises a local loss plus the coupling psi, with a Goldstone
// gauge round after every 10 steps.
func ExampleDriver_Run() {
	b := optim.Blocks{T: 3, N: 2, D: 2}
	target := []float64{1, 0, 0, 1}
	// l = sum_t 1/2 ||Z_t - C||^2 (not rotation invariant; it only anchors the example).
	local := func(grad, x []float64) float64 {
		var l float64
		for i, v := range x {
			r := v - target[i%4]
			grad[i] = r
			l += 0.5 * r * r
		}
		return l
	}
	p := optim.Problem{Local: local, Blocks: b, Graph: optim.Chain(3, 1)}
	x := make([]float64, b.Len())
	d := optim.Driver{Method: &optim.GD{Rate: optim.Constant(0.2)}, Gauge: &optim.Procrustes{}, K1: 10}
	var last optim.Iter
	_, err := d.Run(p, x, 200, func(it *optim.Iter) error { last = *it; return nil })
	fmt.Printf("err %v, loss %.6f, psi %.6f, x[:4] %.3f\n", err, last.Loss, last.Psi, x[:4])
	// Output:
	// err <nil>, loss 0.000000, psi 0.000000, x[:4] [1.000 0.000 0.000 1.000]
}
