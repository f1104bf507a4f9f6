package htmlreport

import (
	"os"
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

// TestComparePartialRun: the rows of a run that has not ended say partial
// on the compare page; an ended run's do not.
func TestComparePartialRun(t *testing.T) {
	cell := runs.Cell{Variant: "gd", N: 1, Mean: 1, Values: []float64{1}}
	aggs := []CompareAggregate{{Headline: runs.Headline{Metric: "test_ll"}, Rows: []CompareCell{{Run: 1, Cell: cell}, {Run: 2, Cell: cell}}}}
	var ls []runs.RunListing
	for id, st := range map[int64]string{1: runs.StatusFinished, 2: runs.StatusRunning} {
		l := runs.RunListing{}
		l.ID, l.Status, l.Experiment = id, st, "e"
		ls = append(ls, l)
	}
	MarkPartial(aggs, ls)
	if aggs[0].Rows[0].Partial || !aggs[0].Rows[1].Partial {
		t.Fatalf("partial rows: %+v", aggs[0].Rows)
	}
	dir := t.TempDir()
	path, err := WriteCompare(dir, &ComparePage{Runs: ls, Aggregates: aggs})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `<span class="muted">partial</span>`); n != 1 {
		t.Errorf("%d partial labels on the page, want 1", n)
	}
}
