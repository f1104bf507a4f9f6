package report

import (
	"testing"

	"goldstone/runs"
)

// TestOutcomeColors: finished, failed and diverged keep their colours, and
// a status the store records beyond them (pruned) gets one of its own.
func TestOutcomeColors(t *testing.T) {
	trials := []SearchTrial{{Status: runs.StatusDone}, {Status: runs.StatusCached}, {Status: "pruned"}, {Status: runs.StatusFailed}, {Status: "zapped"}}
	m := outcomeColors(trials)
	if m["finished"] != 0 || m[runs.StatusFailed] != 3 || m[runs.StatusDiverged] != 4 {
		t.Fatalf("fixed colours: %v", m)
	}
	seen := map[int]string{}
	for o, c := range m {
		if other, ok := seen[c]; ok {
			t.Fatalf("%s and %s share colour %d", o, other, c)
		}
		seen[c] = o
	}
	if _, ok := m["pruned"]; !ok || Outcome(runs.StatusCached) != "finished" || Outcome("pruned") != "pruned" {
		t.Fatalf("outcomes: %v", m)
	}
}
