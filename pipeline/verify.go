package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// EntryReport is the verification of one cache entry.
type EntryReport struct {
	Stage   string
	Key     CacheKey // the entry directory's name (a CacheKey when the entry is sound)
	Node    string   // node that built the entry ("" if the manifest is unreadable)
	Dir     string
	OK      bool
	Problem string // why the entry is not OK: "incomplete: no manifest", "output x content digest ... does not match ..."
	Evicted bool   // removed by Verify (VerifyOptions.Evict)
	InUse   bool   // not OK, but not evicted: a runner holds its lock (it is replacing the entry)
	Bytes   int64  // size of the entry's files
}

// VerifyOptions configures Verify.
type VerifyOptions struct {
	// Evict removes every entry that is not OK, each under its own
	// exclusive lock (RemoveEntry): one a runner holds locked, to replace
	// it, is left to that runner (EntryReport.InUse). It runs beside
	// runs.
	Evict bool
}

// Verify checks every entry of WorkDir's cache, in (stage, key) order: its
// manifest must parse and carry the key the entry is filed under, and every
// output it lists must exist with the recorded content digest. A run does
// the same check when it reuses an entry; Verify does it for all of them.
// Without Evict it only reads. Either way it may run beside runs.
func Verify(ctx context.Context, workDir string, opts VerifyOptions) ([]EntryReport, error) {
	work, err := filepath.Abs(workDir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(work); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, fmt.Errorf("verify %s: %w", workDir, err)
	}
	dirs, err := filepath.Glob(filepath.Join(work, "cache", "*", "*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(dirs)
	var out []EntryReport
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		r := EntryReport{Stage: filepath.Base(filepath.Dir(dir)), Key: CacheKey(filepath.Base(dir)), Dir: dir, Bytes: treeSize(dir)}
		if b, err := os.ReadFile(filepath.Join(dir, manifestName)); err == nil {
			var m manifest
			if json.Unmarshal(b, &m) == nil {
				r.Node = m.Node
			}
		}
		_, st, problem, err := checkEntry(ctx, dir, r.Key, nil)
		if err != nil {
			return out, err
		}
		switch st {
		case entryOK:
			r.OK = true
		case entryAbsent:
			r.Problem = "incomplete: no manifest"
		default:
			r.Problem = problem
		}
		if !r.OK && opts.Evict {
			switch err := RemoveEntry(work, dir); {
			case errors.Is(err, ErrEntryInUse):
				r.InUse = true
			case errors.Is(err, fs.ErrNotExist): // removed meanwhile
			case err != nil:
				return out, err
			default:
				r.Evicted = true
			}
		}
		out = append(out, r)
	}
	return out, nil
}

func treeSize(root string) int64 {
	var n int64
	filepath.WalkDir(root, func(_ string, de fs.DirEntry, err error) error {
		if err == nil && de.Type().IsRegular() {
			if fi, err := de.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
