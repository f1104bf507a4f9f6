package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedData returns the path of the shared data folder sub (e.g. "sotu"), found from the
// module root (the directory holding go.mod) as ../shared/data/sub; it skips the test when
// that folder is absent.
func sharedData(t testing.TB, sub string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the package directory: cannot locate ../shared/data")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "data", sub)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared data %s absent: %v", p, err)
	}
	return p
}

func near(a, b, tol float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= tol
}
