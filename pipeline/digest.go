package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"goldstone/internal/atomicfile"
)

// dirDigestHeader starts the hashed text of a directory digest.
const dirDigestHeader = "goldstone-pipeline-dir-v1\n"

// racyWindow: files modified this recently are not memoised, since a
// same-size rewrite within the file system's mtime granularity would
// otherwise go unnoticed.
const racyWindow = 2 * time.Second

// Digest returns the content digest of the file or directory at path: the
// hex SHA-256 of a file's bytes, or for a directory the SHA-256 of its sorted
// relative file paths (slash-separated) each with its file digest. Empty
// directories do not count; symbolic links are followed.
func Digest(ctx context.Context, path string) (string, error) {
	return (&digester{}).digest(ctx, path)
}

// memoEntry is one memoised file digest.
type memoEntry struct {
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
	SHA256  string `json:"sha256"`
}

type memoFile struct {
	Files map[string]memoEntry `json:"files"`
}

// digester computes digests, memoising file digests by (absolute path, size,
// mtime). The zero value memoises nothing. Safe for concurrent use.
type digester struct {
	file  string // memo file; "" = in-memory only
	mu    sync.Mutex
	memo  map[string]memoEntry
	dirty bool
	now   func() time.Time
}

func loadDigester(file string) (*digester, error) {
	d := &digester{file: file, memo: map[string]memoEntry{}}
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load digest memo: %w", err)
	}
	var m memoFile
	if err := json.Unmarshal(b, &m); err != nil {
		// A corrupt memo only costs rehashing.
		return d, nil
	}
	if m.Files != nil {
		d.memo = m.Files
	}
	return d, nil
}

func (d *digester) save() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.file == "" || !d.dirty {
		return nil
	}
	b, err := json.MarshalIndent(memoFile{Files: d.memo}, "", " ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(d.file, b); err != nil {
		return fmt.Errorf("save digest memo: %w", err)
	}
	d.dirty = false
	return nil
}

func (d *digester) digest(ctx context.Context, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return d.fileDigest(ctx, abs, fi)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil { // WalkDir does not follow a symlinked root
		return "", err
	}
	type entry struct{ rel, sum string }
	var files []entry
	err = filepath.WalkDir(abs, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() {
			return nil
		}
		fi, err := os.Stat(p) // follows symlinks
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return fmt.Errorf("%s: symbolic link to a directory is not supported", p)
		}
		sum, err := d.fileDigest(ctx, p, fi)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(abs, p)
		if err != nil {
			return err
		}
		files = append(files, entry{filepath.ToSlash(rel), sum})
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	h := sha256.New()
	io.WriteString(h, dirDigestHeader)
	for _, f := range files {
		io.WriteString(h, f.rel)
		h.Write([]byte{0})
		io.WriteString(h, f.sum)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (d *digester) fileDigest(ctx context.Context, abs string, fi fs.FileInfo) (string, error) {
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file (%v)", abs, fi.Mode().Type())
	}
	mtime := fi.ModTime().UnixNano()
	if d.memo != nil {
		d.mu.Lock()
		e, ok := d.memo[abs]
		d.mu.Unlock()
		if ok && e.Size == fi.Size() && e.MtimeNs == mtime {
			return e.SHA256, nil
		}
	}
	sum, err := hashFile(ctx, abs)
	if err != nil {
		return "", err
	}
	now := time.Now
	if d.now != nil {
		now = d.now
	}
	if d.memo != nil && now().Sub(fi.ModTime()) > racyWindow {
		d.mu.Lock()
		d.memo[abs] = memoEntry{Size: fi.Size(), MtimeNs: mtime, SHA256: sum}
		d.dirty = true
		d.mu.Unlock()
	}
	return sum, nil
}

func hashFile(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, ctxReader{ctx, f}); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ctxReader stops a long read when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// writeFileAtomic writes b to a temporary file next to path and renames it
// over path.
func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	f, err := atomicfile.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
