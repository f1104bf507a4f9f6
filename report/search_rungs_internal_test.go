package report

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/runs"
)

// TestSearchRungs: the rungs table of a pruned search (rungs 3, 9, 27;
// two seeds a point): per rung the points that reached it, those that went
// on, the best and median of the points' mean values there (a point with
// a failed trial has none), and the points stopped there.
func TestSearchRungs(t *testing.T) {
	tr := func(point, steps int, status string, v float64) SearchTrial {
		return SearchTrial{Point: point, RungSteps: steps, Rung: steps < 27, Status: status, Objective: v}
	}
	d := &SearchData{Search: &experiment.Search{Direction: "minimize", Objective: "final_loss",
		Pruning: &experiment.Pruning{Pruner: "asha", MinSteps: 3, Eta: 3, MaxSteps: 27, Brackets: 1}}}
	d.Trials = []SearchTrial{
		tr(0, 3, runs.StatusDone, 1), tr(0, 3, runs.StatusDone, 3), tr(0, 9, runs.StatusDone, 0.5), tr(0, 9, runs.StatusDone, 0.7), tr(0, 27, runs.StatusDone, 0.1), tr(0, 27, runs.StatusDone, 0.3),
		tr(1, 3, runs.StatusDone, 4), tr(1, 3, runs.StatusDone, 4), tr(1, 9, runs.StatusPruned, 2), tr(1, 9, runs.StatusPruned, 2),
		tr(2, 3, runs.StatusPruned, 5), tr(2, 3, runs.StatusPruned, 7),
		tr(3, 3, runs.StatusPruned, 9), tr(3, 3, runs.StatusFailed, math.NaN()),
	}
	d.Points = groupPoints(d.Trials)
	got := d.SearchRungs()
	want := []SearchRung{
		{Index: 0, Steps: 3, Points: 4, Trials: 8, Promoted: 2, Best: 2, Median: 4, Valued: 3, Pruned: []string{"s2", "s3"}},
		{Index: 1, Steps: 9, Points: 2, Trials: 4, Promoted: 1, Best: 0.6, Median: 1.3, Valued: 2, Pruned: []string{"s1"}},
		{Index: 2, Steps: 27, Points: 1, Trials: 2, Promoted: -1, Best: 0.2, Median: 0.2, Valued: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rungs:\n got %+v\nwant %+v", got, want)
	}
	md := SearchRungsMarkdown("final_loss", false, got)
	for _, row := range []string{"| 0 | 3 | 4 | 2 of 4 | 2 | 4 | s2, s3 |", "| 1 | 9 | 2 | 1 of 2 | 0.6 | 1.3 | s1 |", "| 2 | 27 | 1 | (last rung) | 0.2 | 0.2 | none |", "lower is better"} {
		if !strings.Contains(md, row) {
			t.Errorf("the Markdown table lacks %q:\n%s", row, md)
		}
	}
	d.Search.Pruning = nil
	if d.SearchRungs() != nil {
		t.Fatal("a search without a pruner has a rungs table")
	}
}
