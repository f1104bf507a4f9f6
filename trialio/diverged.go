package trialio

import (
	"fmt"
	"math"
)

// The summary metrics of a trial whose training diverged: its training
// loop stopped at step diverged_step, where diverged_quantity (a code:
// QuantityCodes) had the value diverged_value, not finite or past the
// run's bound diverged_bound. A summary with diverged_step is a diverged
// trial's (status "diverged" in the results store).
const (
	DivergedStep     = "diverged_step"
	DivergedQuantity = "diverged_quantity"
	DivergedValue    = "diverged_value"
	DivergedBound    = "diverged_bound"
)

// QuantityCodes are the values of diverged_quantity: the quantity a
// training step diverged in (optim.QuantityLoss, QuantityLocal and
// QuantityPsi), by name.
var QuantityCodes = map[string]float64{"loss": 1, "local loss": 2, "psi": 3}

// Divergence is where and how a trial's training diverged.
type Divergence struct {
	Step     int
	Quantity string  // "loss", "local loss" or "psi"
	Value    float64 // not finite, or finite and past Bound
	Bound    float64 // NaN when the step had no bound yet (step 0)
}

// Divergence returns the divergence m records, if any.
func (m Summary) Divergence() (Divergence, bool) {
	step, ok := m[DivergedStep]
	if !ok {
		return Divergence{}, false
	}
	d := Divergence{Step: int(step), Value: m[DivergedValue], Bound: math.NaN(), Quantity: "value"}
	if b, ok := m[DivergedBound]; ok {
		d.Bound = b
	}
	for name, c := range QuantityCodes {
		if m[DivergedQuantity] == c {
			d.Quantity = name
		}
	}
	return d, true
}

// SetDivergence records d in m.
func (m Summary) SetDivergence(d Divergence) {
	m[DivergedStep] = float64(d.Step)
	m[DivergedQuantity] = QuantityCodes[d.Quantity]
	m[DivergedValue] = d.Value
	m[DivergedBound] = d.Bound
}

// Finite reports whether the value was finite (past the bound) rather than
// NaN or an infinity.
func (d Divergence) Finite() bool { return !math.IsNaN(d.Value) && !math.IsInf(d.Value, 0) }

// String is the trial's notice: "diverged at step 912: psi 3.8e+200 past
// its bound 1.8e+08", or "diverged at step 5: local loss +Inf".
func (d Divergence) String() string {
	if d.Finite() {
		return fmt.Sprintf("diverged at step %d: %s %.3g past its bound %.3g", d.Step, d.Quantity, d.Value, d.Bound)
	}
	return fmt.Sprintf("diverged at step %d: %s %v", d.Step, d.Quantity, d.Value)
}
