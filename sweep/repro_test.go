package sweep

import (
	"reflect"
	"testing"

	"goldstone/runs"
)

// TestCompareStatus: a trial that diverged in the recorded run must
// diverge again (and one that was done must not); done and cached are one
// outcome; trials without a result are not compared.
func TestCompareStatus(t *testing.T) {
	rec := map[string]string{"a": runs.StatusDone, "b": runs.StatusDiverged, "c": runs.StatusDiverged, "d": runs.StatusCached, "e": runs.StatusFailed, "f": runs.StatusDone}
	now := map[string]string{"a": runs.StatusDiverged, "b": runs.StatusDone, "c": runs.StatusDiverged, "d": runs.StatusDone, "e": runs.StatusDone}
	want := []StatusDrift{{"a", runs.StatusDone, runs.StatusDiverged}, {"b", runs.StatusDiverged, runs.StatusDone}, {"f", runs.StatusDone, ""}}
	if got := CompareStatus(rec, now); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
