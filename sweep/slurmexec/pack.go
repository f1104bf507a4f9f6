package slurmexec

import (
	"goldstone/internal/slurm"
	"goldstone/runs"
	"goldstone/sweep/batch"
)

// taskMap maps the array tasks of a run's trials jobs to the trials they
// run: through the pack file of the job's submission
// (packs.<attempt>.json, --slurm-trials-per-task), else one trial per
// task (trial index = the job's offset + the array index). It reads each
// submission's pack file once.
type taskMap struct {
	d     batch.Dir
	m     *batch.Manifest
	packs map[int]*batch.Packs // by attempt; nil: not packed
}

func newTaskMap(d batch.Dir, m *batch.Manifest) *taskMap {
	return &taskMap{d: d, m: m, packs: map[int]*batch.Packs{}}
}

// pack is the pack file of submission attempt (nil: not packed).
func (tm *taskMap) pack(attempt int) (*batch.Packs, error) {
	if p, ok := tm.packs[attempt]; ok {
		return p, nil
	}
	p, err := batch.ReadPacks(tm.d, tm.m, attempt)
	if err != nil {
		return nil, err
	}
	tm.packs[attempt] = p
	return p, nil
}

// trials are the trial indices that array task index of trials job j runs
// (nil when the job has no such task).
func (tm *taskMap) trials(j runs.SlurmJob, index int) ([]int, error) {
	p, err := tm.pack(j.Attempt)
	if err != nil {
		return nil, err
	}
	return p.Trials(offsetOf(j) + index), nil
}

// byTask are the array indices of trials job j (its array_spec), each
// with the trial indices its task runs; nil when the array_spec cannot be
// read.
func (tm *taskMap) byTask(j runs.SlurmJob) (map[int][]int, error) {
	idx, _, err := slurm.ParseArraySpec(arraySpec(j))
	if err != nil {
		return nil, nil
	}
	out := make(map[int][]int, len(idx))
	for _, i := range idx {
		trials, err := tm.trials(j, i)
		if err != nil {
			return nil, err
		}
		out[i] = trials
	}
	return out, nil
}

// submitted are the trial indices trials job j ran, ascending within each
// task.
func (tm *taskMap) submitted(j runs.SlurmJob) ([]int, error) {
	idx, _, err := slurm.ParseArraySpec(arraySpec(j))
	if err != nil {
		return nil, nil
	}
	var out []int
	for _, i := range idx {
		trials, err := tm.trials(j, i)
		if err != nil {
			return nil, err
		}
		out = append(out, trials...)
	}
	return out, nil
}
