package fdcheck

import (
	"testing"
)

// recorder counts the failures Check reports instead of failing the test.
type recorder struct {
	testing.TB
	errs int
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(string, ...any)     { r.errs++ }
func (r *recorder) Fatalf(f string, a ...any) { r.TB.Fatalf(f, a...) }

func TestCheck(t *testing.T) {
	f := func(x []float64) float64 { return x[0]*x[0]*x[1] + 3*x[1] } // grad (2 x0 x1, x0^2 + 3)
	x := []float64{1.5, -2}
	good := []float64{2 * 1.5 * -2, 1.5*1.5 + 3}
	r := &recorder{TB: t}
	if w := Check(r, "good", f, x, good, nil, 1e-6, 1e-7); r.errs != 0 || w > 1e-7 {
		t.Fatalf("a correct gradient failed: %d errors, worst %g", r.errs, w)
	}
	bad := []float64{good[0], good[1] + 0.01}
	r = &recorder{TB: t}
	Check(r, "bad", f, x, bad, nil, 1e-6, 1e-7)
	if r.errs != 1 {
		t.Fatalf("a gradient wrong in one coordinate gave %d errors, want 1", r.errs)
	}
	if x[0] != 1.5 || x[1] != -2 {
		t.Fatalf("x not restored: %v", x)
	}
	grad, loss := Overwrites(t, func(g, x []float64) float64 { g[0] = 1; return f(x) }, x)
	r = &recorder{TB: t}
	Check(r, "forgotten coordinate", loss, x, grad, nil, 1e-6, 1e-7)
	if r.errs != 2 { // grad[0] wrong, grad[1] left NaN
		t.Fatalf("got %d errors, want 2", r.errs)
	}
}
