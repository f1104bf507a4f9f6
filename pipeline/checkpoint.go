package pipeline

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"goldstone/internal/checkpoint"
)

// Checkpoint is where a running stage keeps its checkpoints and when it
// writes them (IO.Checkpoint). The directory is the node's own: named by
// its stage and cache key, under WorkDir/checkpoints, and the checkpoints'
// key is the same, so a checkpoint is only ever read by the code and
// settings that wrote it (a stage's version, its parameters and its
// inputs are all in the cache key). The runner removes the directory once
// the node has ended (its outputs are in the cache, or the stage failed);
// what a stopped stage (cancelled, killed) saved is read by its next run.
// With Options.Force the node starts afresh: its checkpoints are removed
// before it runs.
//
// A Resumable stage's checkpoints are keyed by its ResumeParams (its
// parameters without its budget) in place of its Params, under
// <workdir>/checkpoints/<stage>/resume-<key>: a run of the same stage with
// a larger budget finds a shorter run's checkpoints. With
// Options.KeepCheckpoints they outlive the node (Keep), and the stage
// saves one at its end, so that a longer run continues from there (a
// pruned search promoting a trial to its next rung).
type Checkpoint struct {
	checkpoint.Dir
	Policy checkpoint.Policy
	// Keep is set when the checkpoints outlive the node: the stage saves
	// one at the end of its budget, which a longer run continues.
	Keep bool
}

// Resumable is a Stage whose state part-way is reusable by a run of the
// same stage with a larger budget: ResumeParams are its Params without the
// budget (a training stage's settings without the steps), and what the
// stage computes in its first s steps must not depend on the budget.
type Resumable interface {
	Stage
	ResumeParams() any
}

// ended is called when the node ended: its checkpoints go unless they are
// kept for a longer run (Keep) and the node did not fail.
func (c Checkpoint) ended(failed bool) {
	if c.Keep && !failed {
		return
	}
	c.Remove()
}

// CheckpointsDir is the directory of the checkpoints under workdir:
// <workdir>/checkpoints/<stage>/<key>/.
func CheckpointsDir(workdir string) string { return filepath.Join(workdir, "checkpoints") }

func (s *session) checkpointOf(t *task) (Checkpoint, error) {
	name, keep := t.key.String(), false
	if r, ok := t.n.Stage.(Resumable); ok {
		params, err := CanonicalJSON(r.ResumeParams())
		if err != nil {
			return Checkpoint{}, fmt.Errorf("resume params of stage %s: %w", t.stage, err)
		}
		name, keep = "resume-"+key(t.stage, t.n.Stage.Version(), params, t.inDigests, t.n.Outputs).String(), s.opts.KeepCheckpoints
	}
	return Checkpoint{
		Dir:    checkpoint.Dir{Path: filepath.Join(CheckpointsDir(s.work), t.stage, name), Key: t.stage + "/" + name},
		Policy: s.opts.Checkpoint,
		Keep:   keep,
	}, nil
}

// Checkpoint returns where the running stage keeps its checkpoints and when
// it writes them (see Checkpoint). Outside a runner (NewIO) the policy is
// off and the directory empty.
func (io *IO) Checkpoint() Checkpoint {
	if io.ckpt.Path == "" {
		return Checkpoint{Policy: checkpoint.Policy{Off: true}}
	}
	return io.ckpt
}

// KeepMarkPrefix starts the name of the file that marks a kept checkpoint
// directory with an owner (Options.KeepMark): "kept-by-<mark>".
const KeepMarkPrefix = "kept-by-"

// mark writes the owner's mark into a kept checkpoint directory (nothing
// for checkpoints that are not kept, or no mark).
func (c Checkpoint) mark(owner string) error {
	if !c.Keep || owner == "" {
		return nil
	}
	if strings.ContainsAny(owner, `/\`) || owner == "." || owner == ".." {
		return fmt.Errorf("checkpoint mark %q is not a file name", owner)
	}
	if err := os.MkdirAll(c.Path, 0o777); err != nil {
		return err
	}
	p := filepath.Join(c.Path, KeepMarkPrefix+owner)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	return os.WriteFile(p, nil, 0o666)
}

// KeptCheckpoint is a kept checkpoint directory (a Resumable stage's,
// <workdir>/checkpoints/<stage>/resume-<key>) and the marks of its owners
// (Options.KeepMark; none for one kept by a run without a mark).
type KeptCheckpoint struct {
	Dir   string
	Marks []string
	Bytes int64
}

// KeptCheckpoints lists the kept checkpoint directories under workdir, in
// the order of their paths.
func KeptCheckpoints(workdir string) ([]KeptCheckpoint, error) {
	dirs, err := filepath.Glob(filepath.Join(CheckpointsDir(workdir), "*", "resume-*"))
	if err != nil {
		return nil, err
	}
	slices.Sort(dirs)
	var out []KeptCheckpoint
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			if os.IsNotExist(err) {
				continue // removed meanwhile
			}
			return nil, err
		}
		k := KeptCheckpoint{Dir: d}
		for _, e := range ents {
			if m, ok := strings.CutPrefix(e.Name(), KeepMarkPrefix); ok && !e.IsDir() {
				k.Marks = append(k.Marks, m)
			}
		}
		k.Bytes = treeBytes(d)
		out = append(out, k)
	}
	return out, nil
}

// ReleaseKept removes the owner's mark from a kept checkpoint directory,
// and the directory when no other owner's mark is left in it; removed
// says whether it went. A directory without the mark is left as it is.
func ReleaseKept(dir, mark string) (removed bool, err error) {
	if err := os.Remove(filepath.Join(dir, KeepMarkPrefix+mark)); err != nil {
		if os.IsNotExist(err) {
			return false, nil
		}
		return false, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return false, nil
		}
		return false, err
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), KeepMarkPrefix) {
			return false, nil // another owner's
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, err
	}
	return true, nil
}

// treeBytes is the size of the files under dir (what can be read of it).
func treeBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
