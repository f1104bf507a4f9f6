package atomicfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

// withUmask runs f with the process's umask set to m.
func withUmask(t *testing.T, m int, f func()) {
	t.Helper()
	old := syscall.Umask(m)
	defer syscall.Umask(old)
	f()
}

// Files and directories follow the umask: 0666 and 0777 less it (issue 19,
// item 9: reports were 0644 under umask 077, cache entries 0700 under 022).
func TestModesFollowTheUmask(t *testing.T) {
	for _, m := range []int{0o022, 0o077, 0o002} {
		withUmask(t, m, func() {
			dir := t.TempDir()
			dst := filepath.Join(dir, "a.txt")
			if err := WriteFile(dst, []byte("x")); err != nil {
				t.Fatal(err)
			}
			d, err := MkdirTemp(dir, "entry-*")
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range map[string]os.FileMode{dst: 0o666 &^ os.FileMode(m), d: 0o777 &^ os.FileMode(m)} {
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != want {
					t.Errorf("umask %03o: %s: mode %v, want %v", m, filepath.Base(p), fi.Mode().Perm(), want)
				}
			}
		})
	}
}

// RemoveStale removes the temporary names of processes that are gone and
// keeps those of live ones and every other file.
func TestRemoveStale(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1) to get the pid of a finished process:", err)
	}
	gone := strconv.Itoa(dead.Process.Pid)
	me := strconv.Itoa(os.Getpid())
	root := t.TempDir()
	sub := filepath.Join(root, "small", "run-1")
	if err := os.MkdirAll(filepath.Join(sub, ".export.tmp-"+gone+"-7"), 0o777); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		".summary.md.tmp-" + gone + "-1",         // a write killed before its rename
		".index.html.tmp-" + me + "-2",           // a write in progress
		".export.old-" + gone + "-3",             // an export killed between its renames
		"summary.md", "notes.tmp-" + gone + "-4", // not temporary names
	} {
		if err := os.WriteFile(filepath.Join(sub, name), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveStale(root)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range removed {
		removed[i], _ = filepath.Rel(sub, p)
	}
	slices.Sort(removed)
	want := []string{".export.old-" + gone + "-3", ".export.tmp-" + gone + "-7", ".summary.md.tmp-" + gone + "-1"}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	assertOnly(t, sub, ".index.html.tmp-"+me+"-2", "notes.tmp-"+gone+"-4", "summary.md")
	if r, err := RemoveStale(filepath.Join(root, "missing")); err != nil || len(r) != 0 {
		t.Errorf("RemoveStale of a missing root: %v, %v", r, err)
	}
}

func TestReplaceDir(t *testing.T) {
	parent := t.TempDir()
	dst := filepath.Join(parent, "export")
	for _, content := range []string{"one", "two"} {
		tmp, err := MkdirTemp(parent, ".export.tmp-*")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, "f"), []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := ReplaceDir(tmp, dst); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dst, "f")); string(b) != content {
			t.Errorf("after replacing with %q: %q", content, b)
		}
		assertOnly(t, parent, "export")
	}
}
