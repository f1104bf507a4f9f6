package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	withUmask(t, 0o022, func() { testWriteFile(t) })
}

func testWriteFile(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "sub", "a.txt")
	if err := WriteFile(dst, []byte("one")); err == nil {
		t.Fatal("wrote into a missing directory")
	}
	if err := os.Mkdir(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dst, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dst, []byte("two")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dst)
	if err != nil || string(b) != "two" {
		t.Fatalf("read %q, %v; want \"two\"", b, err)
	}
	fi, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	assertOnly(t, filepath.Dir(dst), "a.txt")
}

func TestFailedWriteLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "a.txt")
	if err := WriteFile(dst, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(dst, func(w io.Writer) error {
		if _, err := w.Write([]byte("half")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	b, _ := os.ReadFile(dst)
	if string(b) != "old" {
		t.Fatalf("destination %q after a failed write, want \"old\"", b)
	}
	assertOnly(t, dir, "a.txt")
}

func TestAbortAfterCommitKeepsFile(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "b.bin")
	f, err := Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort()
	if b, err := os.ReadFile(dst); err != nil || len(b) != 3 {
		t.Fatalf("read %v, %v", b, err)
	}
	g, err := Create(filepath.Join(dir, "c.bin"))
	if err != nil {
		t.Fatal(err)
	}
	g.Abort()
	assertOnly(t, dir, "b.bin")
}

// assertOnly fails unless dir holds exactly the named files (no temporaries).
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("%s holds %v, want %v", dir, got, names)
	}
	for i := range got {
		if got[i] != names[i] {
			t.Fatalf("%s holds %v, want %v", dir, got, names)
		}
	}
}
