package main

import (
	"fmt"
	"strings"
	"testing"

	"goldstone/internal/testdata"
)

// TestMovieLensBiasEndToEnd: with bias = true the logistic MF on
// ml-latest-small beats the base-rate predictor on held-out ratings, for
// plain AdaGrad and with Goldstone rounds (which leave the biases alone).
func TestMovieLensBiasEndToEnd(t *testing.T) {
	data := testdata.Dir(t, "ml-latest-small/ratings.csv")
	e := newEnv(t)
	e.writeConfig(fmt.Sprintf(mlConfig, mlSteps))
	out := e.mustRun(0, "--data-dir", data, "--experiment", "ml", "--set", "bias=true", "--jobs", "2", "--quiet")
	if !strings.Contains(out, "2 trials: 2 done, 0 failed") {
		t.Fatalf("unexpected summary: %s", out)
	}
	rs := e.results("ml")
	if len(rs) != 2 {
		t.Fatalf("%d result rows, want 2", len(rs))
	}
	for _, r := range rs {
		ll, base := r.Metrics["test_ll"], r.Metrics["baseline_test_ll"]
		if ll == nil || base == nil {
			t.Fatalf("trial %s: test_ll %v, baseline_test_ll %v", r.Trial, ll, base)
		}
		t.Logf("%v: test_ll %.4f, base rate %.4f", r.Params["variant"], *ll, *base)
		if !(*ll > *base) {
			t.Errorf("%v with biases: test_ll %.4f does not beat the base rate %.4f", r.Params["variant"], *ll, *base)
		}
	}
}
