package pipeline

import (
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
type Checkpoint struct {
	checkpoint.Dir
	Policy checkpoint.Policy
}

// CheckpointsDir is the directory of the checkpoints under workdir:
// <workdir>/checkpoints/<stage>/<key>/.
func CheckpointsDir(workdir string) string { return filepath.Join(workdir, "checkpoints") }

func (s *session) checkpointOf(t *task) Checkpoint {
	return Checkpoint{
		Dir:    checkpoint.Dir{Path: filepath.Join(CheckpointsDir(s.work), t.stage, t.key.String()), Key: t.stage + "/" + t.key.String()},
		Policy: s.opts.Checkpoint,
	}
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
