// Package testdata locates the shared real data sets for tests. The data sets
// live beside the repository, in ../shared/data (see its README); tests that
// need one skip, saying why, when it is absent. Never copy them into the repo.
package testdata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of the shared data directory (../shared/data
// from the module root, the directory holding go.mod). It skips the test
// unless sub (a file or folder under it, e.g. "sotu") exists.
func Dir(t testing.TB, sub string) string {
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
			t.Skip("no go.mod above the test directory: cannot locate ../shared/data")
		}
		dir = parent
	}
	data, err := filepath.Abs(filepath.Join(dir, "..", "shared", "data"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(data, sub)); err != nil {
		t.Skipf("shared data %s absent (%v): skipping", filepath.Join(data, sub), err)
	}
	return data
}

// Path returns the absolute path of sub under the shared data directory,
// skipping the test when it is absent.
func Path(t testing.TB, sub string) string {
	t.Helper()
	return filepath.Join(Dir(t, sub), sub)
}
