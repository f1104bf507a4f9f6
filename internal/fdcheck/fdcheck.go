// Package fdcheck checks analytic gradients against central finite
// differences, for the tests of every package that writes a gradient.
package fdcheck

import (
	"math"
	"testing"
)

// Check compares grad, the analytic gradient of f at x, with central
// differences (f(x + h_i e_i) - f(x - h_i e_i)) / (2 h_i), h_i = h max(1, |x_i|),
// on the coordinates idx (every coordinate when idx is nil). A coordinate
// fails when |fd - grad_i| > tol max(1, |fd|); the first five failures are
// reported one by one, then their count. x is restored. It returns the worst
// relative error seen.
func Check(t testing.TB, name string, f func(x []float64) float64, x, grad []float64, idx []int, h, tol float64) float64 {
	t.Helper()
	if idx == nil {
		idx = make([]int, len(x))
		for i := range idx {
			idx[i] = i
		}
	}
	worst, bad := 0.0, 0
	for _, i := range idx {
		old := x[i]
		hi := float64(h * math.Max(1, math.Abs(old)))
		x[i] = old + hi
		fp := f(x)
		x[i] = old - hi
		fm := f(x)
		x[i] = old
		fd := (fp - fm) / (2 * hi)
		d := math.Abs(fd-grad[i]) / math.Max(1, math.Abs(fd))
		worst = math.Max(worst, d)
		if !(d <= tol) {
			if bad++; bad <= 5 {
				t.Errorf("%s: d/dx[%d]: analytic %.10g, finite difference %.10g (rel err %.2g)", name, i, grad[i], fd, d)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d coordinates wrong", name, bad, len(idx))
	}
	return worst
}

// Overwrites returns the gradient f writes at x into a buffer filled with NaN
// first (so a coordinate f forgets to write fails any check), and a function
// of x alone for Check. It fails the test if the loss at x is not finite.
func Overwrites(t testing.TB, f func(grad, x []float64) float64, x []float64) (grad []float64, loss func(x []float64) float64) {
	t.Helper()
	grad = make([]float64, len(x))
	for i := range grad {
		grad[i] = math.NaN()
	}
	if f0 := f(grad, x); math.IsNaN(f0) || math.IsInf(f0, 0) {
		t.Fatalf("loss = %v", f0)
	}
	scratch := make([]float64, len(x))
	return grad, func(x []float64) float64 { return f(scratch, x) }
}
