package htmlreport

import (
	"strings"
	"testing"

	"goldstone/runs"
)

// TestSweepFiguresByHeadline: the sweep figures follow the experiment's
// headline metrics (test_ll before final_gauge_gap and ref_*), not the
// alphabet; other figures keep their places.
func TestSweepFiguresByHeadline(t *testing.T) {
	var figs []Figure
	for _, f := range []string{"curves.png", "figure2.png", "sweep-final_gauge_gap.png", "sweep-ref_static_mf_test_ll.png", "sweep-steps_to_x.png", "sweep-test_auc.png", "sweep-test_ll.png"} {
		figs = append(figs, Figure{File: f})
	}
	orderSweepFigures(figs, []runs.Headline{{Metric: "test_ll"}, {Metric: "test_auc"}, {Metric: "valid_ll"}})
	var got []string
	for _, f := range figs {
		got = append(got, f.File)
	}
	want := "curves.png figure2.png sweep-test_ll.png sweep-test_auc.png sweep-final_gauge_gap.png sweep-ref_static_mf_test_ll.png sweep-steps_to_x.png"
	if strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}
