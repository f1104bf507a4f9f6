package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"goldstone/internal/atomicfile"
)

// manifest is a cache entry's manifest.json, written last.
type manifest struct {
	Key     CacheKey          `json:"key"`
	Stage   string            `json:"stage"`
	Version string            `json:"version"`
	Params  json.RawMessage   `json:"params"`
	Inputs  map[string]string `json:"inputs"`  // input name -> content digest
	Outputs map[string]string `json:"outputs"` // output name -> content digest
	Node    string            `json:"node"`    // ID of the node that built the entry
	Created time.Time         `json:"created"`
}

func (s *session) entryDir(stage string, key CacheKey) string {
	return entryDir(s.work, stage, key)
}

func entryDir(work, stage string, key CacheKey) string {
	return filepath.Join(work, "cache", stage, key.String())
}

// CachedOutput is the path of output name of a cached plan item (Plan:
// it.Cached) in the cache under work.
func CachedOutput(work string, it PlanItem, name string) string {
	return filepath.Join(entryDir(work, it.Stage, it.Key), name)
}

// entryState is what a cache entry directory holds.
type entryState int

const (
	entryAbsent  entryState = iota // no manifest: never completed
	entryOK                        // complete and every output matches its digest
	entryCorrupt                   // a manifest, but an output is missing or its content changed
)

// checkEntry verifies the cache entry at dir for key: its manifest must
// parse, carry key and list every declared output, and every output must
// exist with the content digest the manifest records. It returns the
// manifest's output digests when the entry is sound, otherwise the state and
// a one-line description of the problem. Only a cancelled ctx is an error.
func checkEntry(ctx context.Context, dir string, key CacheKey, outputs []string) (digests map[string]string, st entryState, problem string, err error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, entryAbsent, "", nil
	}
	if err != nil {
		return nil, entryCorrupt, "manifest unreadable: " + err.Error(), nil
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, entryCorrupt, "manifest does not parse: " + err.Error(), nil
	}
	if key != "" && m.Key != key {
		return nil, entryCorrupt, fmt.Sprintf("manifest key %.12s does not match %.12s", m.Key, key), nil
	}
	if outputs == nil {
		outputs = keys(m.Outputs)
	}
	for _, o := range outputs {
		want, ok := m.Outputs[o]
		if !ok || want == "" {
			return nil, entryCorrupt, fmt.Sprintf("manifest lists no digest for output %s", o), nil
		}
		p := filepath.Join(dir, o)
		if _, err := os.Lstat(p); err != nil {
			return nil, entryCorrupt, fmt.Sprintf("output %s missing", o), nil
		}
		got, err := Digest(ctx, p)
		if err != nil {
			if ctx.Err() != nil {
				return nil, entryAbsent, "", ctx.Err()
			}
			return nil, entryCorrupt, fmt.Sprintf("output %s unreadable: %v", o, err), nil
		}
		if got != want {
			return nil, entryCorrupt, fmt.Sprintf("output %s content digest %.12s does not match the manifest's %.12s", o, got, want), nil
		}
	}
	return m.Outputs, entryOK, "", nil
}

// lookup returns the output digests of a sound cache entry, or ok=false
// (absent, corrupt, or ctx cancelled).
func lookup(ctx context.Context, dir string, key CacheKey, outputs []string) (digests map[string]string, ok bool) {
	d, st, _, err := checkEntry(ctx, dir, key, outputs)
	return d, err == nil && st == entryOK
}

// evictEntry removes a corrupt cache entry: it is first renamed into
// tmpDir, so that the entry disappears in one step, then deleted.
func evictEntry(dir, tmpDir string) error {
	aside, err := atomicfile.MkdirTemp(tmpDir, "evicted-*")
	if err != nil {
		return fmt.Errorf("evict %s: %w", dir, err)
	}
	dst := filepath.Join(aside, "entry")
	if err := os.Rename(dir, dst); err != nil {
		os.RemoveAll(aside)
		return fmt.Errorf("evict %s: %w", dir, err)
	}
	syncPath(filepath.Dir(dir))
	return os.RemoveAll(aside)
}

// writeManifest writes m into dir and fsyncs every file and directory under
// dir, so that after a rename of dir the entry is durable.
func writeManifest(dir string, m *manifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, manifestName), b, 0o666); err != nil {
		return err
	}
	return syncTree(dir)
}

func syncTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case de.IsDir():
			dirs = append(dirs, p)
		case de.Type().IsRegular():
			return syncPath(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syncPath(dirs[i]); err != nil {
			return err
		}
	}
	return nil
}

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", p, err)
	}
	return nil
}

// promote renames the complete entry tmp to final. If final already exists
// and is trusted, tmp is discarded and the existing entry's output digests
// are returned, unless replace is set, in which case final is replaced.
func promote(ctx context.Context, tmp, final string, key CacheKey, outputs []string, replace bool) (existing map[string]string, err error) {
	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, final); err == nil {
		return nil, syncPath(parent)
	} else if _, serr := os.Lstat(final); serr != nil {
		return nil, fmt.Errorf("promote cache entry: %w", err)
	}
	if !replace {
		if d, ok := lookup(ctx, final, key, outputs); ok {
			os.RemoveAll(tmp)
			return d, nil
		}
	}
	// Untrusted (or to be replaced) entry in the way: move it aside, then
	// rename ours in.
	old := tmp + ".old"
	if err := os.Rename(final, old); err != nil {
		return nil, fmt.Errorf("promote cache entry: move old entry aside: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("promote cache entry: %w", err)
	}
	if err := os.RemoveAll(old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("promote cache entry: remove old entry: %w", err)
	}
	return nil, syncPath(parent)
}

// CheckEntry verifies the cache entry at dir as a run does before it
// reuses one: its manifest must parse and every output it lists must exist
// with the content digest the manifest records. It returns whether the
// entry is sound and, if not, a one-line description of the problem
// ("incomplete: no manifest" for an entry that was never completed). Only
// a cancelled ctx is an error.
func CheckEntry(ctx context.Context, dir string) (ok bool, problem string, err error) {
	_, st, problem, err := checkEntry(ctx, dir, "", nil)
	if err != nil {
		return false, "", err
	}
	switch st {
	case entryOK:
		return true, "", nil
	case entryAbsent:
		return false, "incomplete: no manifest", nil
	}
	return false, problem, nil
}
