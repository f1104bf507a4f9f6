package sweep

import (
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
)

// TestTrialParamsKeepFloats: float settings keep a decimal point (the
// trials view types lr = 1 as REAL, not INTEGER); ints and strings do not
// change.
func TestTrialParamsKeepFloats(t *testing.T) {
	p := trialParams(experiment.Trial{Name: "gd seed=1", Variant: "gd", Settings: settings.Values{
		"lr": 1.0, "lambda": 0.25, "big": 1e21, "steps": int64(5), "snapshots": []float64{0, 400.5}, "gauge": "none"}})
	for k, want := range map[string]string{"lr": "1.0", "lambda": "0.25", "big": "1e+21", "steps": "5",
		"snapshots": "[0.0,400.5]", "gauge": `"none"`, "variant": `"gd"`, "name": `"gd seed=1"`} {
		if p[k] != want {
			t.Errorf("%s = %s, want %s", k, p[k], want)
		}
	}
}
