package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"goldstone/pipeline"
	"os"
	"path/filepath"
	"time"
)

// ManifestFormat is the version of the manifest's layout.
const ManifestFormat = 1

// Manifest is what a run's tasks need, frozen at its first submission.
type Manifest struct {
	Format     int       `json:"format"`
	RunID      int64     `json:"run_id"`
	Experiment string    `json:"experiment"`
	ConfigHash string    `json:"config_hash"` // of the resolved experiment; a task checks it
	Sets       []string  `json:"sets"`        // --set overrides, applied to the frozen experiments file
	DB         string    `json:"db"`          // absolute path of the results database (submit host)
	WorkDir    string    `json:"workdir"`     // absolute path of the shared work directory
	DataDir    string    `json:"data_dir"`    // absolute path of the data directory
	Reports    string    `json:"reports"`     // absolute path of the reports directory
	Created    time.Time `json:"created"`
	// Token makes the run's Slurm job names unique on the cluster
	// (JobName): a submission the runner did not live to record is found
	// by its name and adopted, never submitted twice.
	Token  string  `json:"token,omitempty"`
	Trials []Trial `json:"trials"` // in enumeration order; Trials[i].Index == i
	// Search is the search wave whose trials these are (a search run on a
	// batch back end; its layout is the executor's): the workers rebuild
	// the trials from it. A search's later wave rewrites the manifest with
	// its trials after the earlier waves' (the same indices), and its
	// wave. Empty for a grid.
	Search json.RawMessage `json:"search,omitempty"`
}

// Trial is one trial of a manifest: the task with array index Index runs it.
type Trial struct {
	Index  int               `json:"index"`
	ID     string            `json:"id"`
	Name   string            `json:"name"`
	Seed   int64             `json:"seed"`
	Params map[string]string `json:"params"` // resolved settings as JSON texts (as in the results store)
	// CPUs and MemMB are what the task asks the scheduler for.
	CPUs  int `json:"cpus"`
	MemMB int `json:"mem_mb"`
}

// Check reports the first inconsistency of m, naming the field.
func (m *Manifest) Check() error {
	switch {
	case m.Format != ManifestFormat:
		return fmt.Errorf("format %d, this runner reads %d", m.Format, ManifestFormat)
	case m.RunID <= 0:
		return fmt.Errorf("run_id %d", m.RunID)
	case m.Experiment == "":
		return errors.New("experiment is empty")
	case m.ConfigHash == "":
		return errors.New("config_hash is empty")
	case len(m.Trials) == 0:
		return errors.New("no trials")
	}
	seen := map[string]bool{}
	for i, t := range m.Trials {
		if t.Index != i {
			return fmt.Errorf("trials[%d].index is %d", i, t.Index)
		}
		if t.ID == "" || seen[t.ID] {
			return fmt.Errorf("trials[%d].id %q is empty or repeated", i, t.ID)
		}
		seen[t.ID] = true
	}
	return nil
}

// JobName is the name of the run's array jobs (its collect jobs add
// "-collect"): gs-<experiment>-<run>-<token>.
func (m *Manifest) JobName() string {
	if m.Token == "" {
		return fmt.Sprintf("gs-%s-%d", m.Experiment, m.RunID)
	}
	return fmt.Sprintf("gs-%s-%d-%s", m.Experiment, m.RunID, m.Token)
}

// TrialByID returns the trial with id, or nil.
func (m *Manifest) TrialByID(id string) *Trial {
	for i := range m.Trials {
		if m.Trials[i].ID == id {
			return &m.Trials[i]
		}
	}
	return nil
}

// ErrExists is returned (wrapped) by WriteManifest when the run directory
// already has a manifest.
var ErrExists = errors.New("manifest already written")

// WriteManifest freezes m into d: it is written to a temporary file and
// hard-linked into place, so a manifest appears complete or not at all, and
// never replaces one that exists (ErrExists).
func WriteManifest(d Dir, m *Manifest) error {
	if err := m.Check(); err != nil {
		return fmt.Errorf("write manifest of run %d: %w", m.RunID, err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(string(d), ".manifest-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", d.Manifest(), err)
	}
	if err := os.Link(tmp, d.Manifest()); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s: %w", d.Manifest(), ErrExists)
		}
		return fmt.Errorf("write %s: %w", d.Manifest(), err)
	}
	return syncDir(string(d))
}

// ReadManifest reads and checks d's manifest.
func ReadManifest(d Dir) (*Manifest, error) {
	b, err := os.ReadFile(d.Manifest())
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", d.Manifest(), err)
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", d.Manifest(), err)
	}
	return &m, nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// Freeze copies the file src to dst (mode perm) atomically, unless dst
// exists already: the experiments file and the runner binary are frozen
// at the first submission.
func Freeze(src, dst string, perm os.FileMode) error {
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("freeze %s: %w", src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		return fmt.Errorf("freeze %s as %s: %w", src, dst, err)
	}
	return nil
}

// FreezeShared freezes src as dst like Freeze, keeping one copy per content
// in dir (named by its SHA-256) and hard-linking dst to it, so that the
// runs of one binary share its bytes.
func FreezeShared(src, dir, dst string, perm os.FileMode) error {
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	sum, err := pipeline.Digest(context.Background(), src) // a file's digest is its SHA-256
	if err != nil {
		return fmt.Errorf("freeze %s: %w", src, err)
	}
	shared := filepath.Join(dir, sum[:16])
	if err := Freeze(src, shared, perm); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(shared, dst); err != nil && !errors.Is(err, os.ErrExist) {
		return Freeze(shared, dst, perm) // no hard links here: copy
	}
	return nil
}
