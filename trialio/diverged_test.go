package trialio

import (
	"math"
	"path/filepath"
	"testing"
)

// TestDivergence: a divergence set in a summary survives summary.json and
// reads back with its notice; a summary without diverged_step has none.
func TestDivergence(t *testing.T) {
	cases := []struct {
		d    Divergence
		text string
	}{
		{Divergence{Step: 912, Quantity: "psi", Value: 3.8e200, Bound: 1.8e8}, "diverged at step 912: psi 3.8e+200 past its bound 1.8e+08"},
		{Divergence{Step: 5, Quantity: "local loss", Value: math.Inf(1), Bound: 7e9}, "diverged at step 5: local loss +Inf"},
		{Divergence{Step: 0, Quantity: "loss", Value: math.NaN(), Bound: math.NaN()}, "diverged at step 0: loss NaN"},
	}
	for _, c := range cases {
		m := Summary{"final_loss": math.NaN()}
		m.SetDivergence(c.d)
		path := filepath.Join(t.TempDir(), "summary.json")
		if err := WriteSummary(path, m); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSummary(path)
		if err != nil {
			t.Fatal(err)
		}
		d, ok := got.Divergence()
		if !ok || d.String() != c.text || d.Step != c.d.Step || d.Quantity != c.d.Quantity {
			t.Errorf("%+v: read %+v (%v): %q, want %q", c.d, d, ok, d.String(), c.text)
		}
	}
	if _, ok := (Summary{"final_loss": 1}).Divergence(); ok {
		t.Error("a summary without diverged_step has a divergence")
	}
}
