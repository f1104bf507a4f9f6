package workdir

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryPathIsInAnArea: each path of the layout lies in one of Areas
// (or is a repro's scratch), so that checkReportsDir's refusal covers it.
func TestEveryPathIsInAnArea(t *testing.T) {
	w, err := New("w")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(w.Root()) {
		t.Fatalf("New: %s is not absolute", w.Root())
	}
	for _, p := range []string{w.Cache(), w.CacheEntry("s", "k"), w.Tmp(), w.GCTrash(), w.State(), w.Logs(), w.Batch(),
		w.BatchRun("e", 3), w.BatchManifests(3), w.BatchTasks(), w.BatchBin(), w.Procs()} {
		rel, err := filepath.Rel(w.Root(), p)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("%s is not under %s", p, w.Root())
			continue
		}
		first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if !slices.Contains(Areas, first) {
			t.Errorf("%s: %q is not an area", p, first)
		}
	}
	if got := w.BatchRun("e", 3); got != filepath.Join(w.Root(), "batch", "e", "run-3") {
		t.Errorf("BatchRun: %s", got)
	}
}
