package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDigestFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, "abc")
	got, err := Digest(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("abc"))
	if want := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Digest = %s, want sha256 %s", got, want)
	}
}

func TestDigestDir(t *testing.T) {
	mk := func(t *testing.T, files map[string]string) string {
		t.Helper()
		dir := t.TempDir()
		for rel, data := range files {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, p, data)
		}
		return dir
	}
	dig := func(t *testing.T, files map[string]string) string {
		t.Helper()
		d, err := Digest(context.Background(), mk(t, files))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := map[string]string{"a.txt": "1", "a/b": "2", "z/y/x": "3"}
	ref := dig(t, base)
	// An empty directory does not count.
	withEmpty := mk(t, base)
	os.MkdirAll(filepath.Join(withEmpty, "empty"), 0o755)
	if d, _ := Digest(context.Background(), withEmpty); d != ref {
		t.Error("empty subdirectory changed the digest")
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(mk(t, base), link); err != nil {
		t.Fatal(err)
	}
	if d, err := Digest(context.Background(), link); err != nil || d != ref {
		t.Errorf("symlinked directory: digest %s, %v; want %s", d, err, ref)
	}
	tests := []struct {
		name  string
		files map[string]string
		same  bool
	}{
		{"same content elsewhere", map[string]string{"z/y/x": "3", "a/b": "2", "a.txt": "1"}, true},
		{"content change", map[string]string{"a.txt": "1", "a/b": "X", "z/y/x": "3"}, false},
		{"rename", map[string]string{"a.txt": "1", "a/c": "2", "z/y/x": "3"}, false},
		{"move between dirs", map[string]string{"a.txt": "1", "a/b": "2", "z/x": "3"}, false},
		{"added file", map[string]string{"a.txt": "1", "a/b": "2", "z/y/x": "3", "n": ""}, false},
		{"swap contents", map[string]string{"a.txt": "2", "a/b": "1", "z/y/x": "3"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := dig(t, tc.files); (got == ref) != tc.same {
				t.Errorf("digest equal to reference = %v, want %v", got == ref, tc.same)
			}
		})
	}
}

func TestDigestMemo(t *testing.T) {
	dir := t.TempDir()
	memo := filepath.Join(dir, "state", "digests.json")
	p := filepath.Join(dir, "big")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	writeFile(t, p, "aaaa")
	os.Chtimes(p, old, old)
	ctx := context.Background()

	d, err := loadDigester(memo)
	if err != nil {
		t.Fatal(err)
	}
	first, err := d.digest(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.save(); err != nil {
		t.Fatal(err)
	}
	// Same size and mtime: the memo answers without reading the file, which
	// shows as the stale digest.
	writeFile(t, p, "bbbb")
	os.Chtimes(p, old, old)
	d, _ = loadDigester(memo)
	if got, _ := d.digest(ctx, p); got != first {
		t.Errorf("memo not used: digest %s, want memoised %s", got, first)
	}
	// A new mtime invalidates the entry.
	newer := old.Add(time.Second)
	os.Chtimes(p, newer, newer)
	if got, _ := d.digest(ctx, p); got == first {
		t.Error("changed mtime still served from memo")
	}
	// Recently modified files are never memoised.
	q := filepath.Join(dir, "fresh")
	writeFile(t, q, "cccc")
	d, _ = loadDigester(memo)
	d.digest(ctx, q)
	if _, ok := d.memo[q]; ok {
		t.Error("file modified just now was memoised")
	}
	// A corrupt memo only costs rehashing.
	writeFile(t, memo, "{not json")
	if d, err = loadDigester(memo); err != nil || len(d.memo) != 0 {
		t.Errorf("corrupt memo: %v, %d entries", err, len(d.memo))
	}
}

func TestSanitizeID(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{"train", "train/lr=0.1", "train_lr_0.1", "train_lr=0.1", "..", "a b"} {
		s := sanitizeID(id)
		if prev, ok := seen[s]; ok {
			t.Errorf("sanitizeID(%q) = sanitizeID(%q) = %q", id, prev, s)
		}
		seen[s] = id
		if checkOutputName(s) != nil {
			t.Errorf("sanitizeID(%q) = %q is not a file name", id, s)
		}
	}
	if got := sanitizeID("train"); got != "train" {
		t.Errorf("sanitizeID(train) = %q", got)
	}
}
