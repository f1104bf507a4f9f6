package pipeline

import (
	"fmt"
	"path/filepath"

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
