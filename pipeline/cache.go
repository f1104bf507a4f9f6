package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// manifest is a cache entry's manifest.json, written last.
type manifest struct {
	Key     string            `json:"key"`
	Stage   string            `json:"stage"`
	Version string            `json:"version"`
	Params  json.RawMessage   `json:"params"`
	Inputs  map[string]string `json:"inputs"`  // input name -> content digest
	Outputs map[string]string `json:"outputs"` // output name -> content digest
	Node    string            `json:"node"`    // ID of the node that built the entry
	Created time.Time         `json:"created"`
}

func (s *session) entryDir(stage, key string) string {
	return filepath.Join(s.work, "cache", stage, key)
}

// lookup returns the output digests of a trusted cache entry, or ok=false.
func lookup(dir, key string, outputs []string) (digests map[string]string, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, false
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Key != key {
		return nil, false
	}
	for _, o := range outputs {
		if _, ok := m.Outputs[o]; !ok {
			return nil, false
		}
		if _, err := os.Lstat(filepath.Join(dir, o)); err != nil {
			return nil, false
		}
	}
	return m.Outputs, true
}

// writeManifest writes m into dir and fsyncs every file and directory under
// dir, so that after a rename of dir the entry is durable.
func writeManifest(dir string, m *manifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, manifestName), b, 0o644); err != nil {
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
func promote(tmp, final, key string, outputs []string, replace bool) (existing map[string]string, err error) {
	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, final); err == nil {
		return nil, syncPath(parent)
	} else if _, serr := os.Lstat(final); serr != nil {
		return nil, fmt.Errorf("promote cache entry: %w", err)
	}
	if !replace {
		if d, ok := lookup(final, key, outputs); ok {
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
