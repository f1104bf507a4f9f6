package slurmexec

import (
	"context"
	"strconv"
	"strings"

	"goldstone/internal/slurm"
	"goldstone/runs"
)

// DefaultMaxArraySize is the cluster's MaxArraySize assumed when
// `scontrol show config` cannot tell (Slurm's own default).
const DefaultMaxArraySize = 1001

// maxArraySize is Options.MaxArraySize, else the cluster's (scontrol show
// config), else DefaultMaxArraySize.
func (o *Options) maxArraySize(ctx context.Context) int {
	if o.MaxArraySize > 0 {
		return o.MaxArraySize
	}
	n, err := o.client().MaxArraySize(ctx)
	if err != nil {
		o.log().Info("cannot read the cluster's MaxArraySize; assuming Slurm's default", "default", DefaultMaxArraySize, "err", err)
		n = DefaultMaxArraySize
	}
	o.MaxArraySize = n
	return n
}

// chunk is one array job of a submission: trial index = Offset + array
// index.
type chunk struct {
	Offset  int
	Indices []int // trial indices, ascending
}

// chunks splits the trial indices todo (ascending) into arrays whose task
// indices stay below maxSize: the first holds the indices below maxSize
// as they are (offset 0), each further one starts at the next index left
// (its offset) and holds those below offset+maxSize.
func chunks(todo []int, maxSize int) []chunk {
	var out []chunk
	for i := 0; i < len(todo); {
		off := 0
		if todo[i] >= maxSize {
			off = todo[i]
		}
		j := i
		for j < len(todo) && todo[j]-off < maxSize {
			j++
		}
		out = append(out, chunk{Offset: off, Indices: todo[i:j]})
		i = j
	}
	return out
}

// spec is the sbatch --array value of c with at most limit tasks at once
// (0: no limit, nor one stated when it is not below the chunk's size).
func (c chunk) spec(limit int) string {
	idx := make([]int, len(c.Indices))
	for i, x := range c.Indices {
		idx[i] = x - c.Offset
	}
	if limit >= len(idx) {
		limit = 0
	}
	return slurm.ArraySpec(idx, limit)
}

// recorded is the array_spec recorded for c in slurm_jobs: its --array
// value, after "OFFSET+" when the offset is not 0.
func (c chunk) recorded(spec string) string {
	if c.Offset == 0 {
		return spec
	}
	return strconv.Itoa(c.Offset) + "+" + spec
}

// offsetOf is the offset of a trials job's array (see chunk.recorded):
// its trial index is the offset plus the array index.
func offsetOf(j runs.SlurmJob) int {
	if k, _, ok := strings.Cut(j.Array, "+"); ok {
		if n, err := strconv.Atoi(k); err == nil {
			return n
		}
	}
	return 0
}

// latestTrialsJobs are the trials jobs of the run's latest submission (one
// per array it was split into).
func latestTrialsJobs(jobs []runs.SlurmJob) []runs.SlurmJob {
	attempt := 0
	for _, j := range jobs {
		if j.Role == runs.RoleTrials {
			attempt = max(attempt, j.Attempt)
		}
	}
	var out []runs.SlurmJob
	for _, j := range jobs {
		if j.Role == runs.RoleTrials && j.Attempt == attempt {
			out = append(out, j)
		}
	}
	return out
}

// arraySpec is the sbatch --array value of a trials job (its recorded
// array_spec without the offset).
func arraySpec(j runs.SlurmJob) string {
	if _, spec, ok := strings.Cut(j.Array, "+"); ok {
		return spec
	}
	return j.Array
}
