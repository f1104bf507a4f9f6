package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestBatch(t *testing.T) {
	withUmask(t, 0o022, func() { testBatch(t) })
}

func testBatch(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "f0"), []byte("old")); err != nil {
		t.Fatal(err)
	}
	var b Batch
	var names []string
	for i := range 100 {
		name := fmt.Sprintf("f%d", i)
		names = append(names, name)
		if err := b.Add(filepath.Join(dir, name), []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing is in place before Commit: f0 is still the old one.
	if got, _ := os.ReadFile(filepath.Join(dir, "f0")); string(got) != "old" {
		t.Fatalf("f0 before Commit: %q", got)
	}
	if b.Len() != 100 {
		t.Fatalf("Len %d", b.Len())
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != name {
			t.Fatalf("%s: %q, %v", name, got, err)
		}
		if fi, _ := os.Stat(filepath.Join(dir, name)); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", name, fi.Mode().Perm())
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 100 {
		t.Fatalf("%d files after Commit, want 100", len(ents))
	}
	b.Abort() // after Commit: nothing

	// Add into a missing directory fails at once, naming the file.
	if err := b.Add(filepath.Join(dir, "missing", "x"), nil); err == nil {
		t.Fatal("Add into a missing directory")
	}
	// Abort removes what was added.
	sub := filepath.Join(t.TempDir(), "sub")
	os.Mkdir(sub, 0o755)
	b.Add(filepath.Join(sub, "a"), []byte("a"))
	b.Add(filepath.Join(sub, "b"), []byte("b"))
	b.Abort()
	assertOnly(t, sub)
	// A rename that fails removes the files not yet in place.
	b.Add(filepath.Join(sub, "a"), []byte("a"))
	b.Add(filepath.Join(sub, "b"), []byte("b"))
	os.Mkdir(filepath.Join(sub, "b"), 0o755)
	os.WriteFile(filepath.Join(sub, "b", "x"), nil, 0o644) // a non-empty directory is in the way
	if err := b.Commit(); err == nil {
		t.Fatal("Commit onto a non-empty directory")
	}
	assertOnly(t, sub, "a", "b")
}
