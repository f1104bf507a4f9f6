package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"goldstone/internal/atomicfile"
)

// PacksFormat is the version of the pack file's layout.
const PacksFormat = 1

// Packs is how a submission packed several trials into each array task
// (--slurm-trials-per-task K > 1): Tasks[t] are the trial indices (manifest
// order) that the task with index t runs, one after another. It is written
// (atomically) beside the manifest before the submission's array is
// submitted, as packs.<attempt>.json, and read by the tasks, status,
// collect, resume and cancel to map a task to its trials. A submission
// without one (K = 1, and every run made before packing) runs trial t as
// task t.
//
// Every trial still writes its own result file
// (results/<trial index>.<attempt>.json) and keeps its own checkpoints
// (tasks/<trial index>/), exactly as an unpacked task writes them.
type Packs struct {
	Format  int     `json:"format"`
	RunID   int64   `json:"run_id"`
	Attempt int     `json:"attempt"`
	PerTask int     `json:"trials_per_task"`
	Tasks   [][]int `json:"tasks"`
}

// Pack chunks the trial indices todo (in the order given: the manifest's)
// into tasks of k trials each, the last holding the rest: ceil(len/k)
// tasks.
func Pack(todo []int, k int) [][]int {
	if k < 1 {
		k = 1
	}
	var out [][]int
	for i := 0; i < len(todo); i += k {
		out = append(out, append([]int(nil), todo[i:min(i+k, len(todo))]...))
	}
	return out
}

// PacksPath is the path of submission attempt's pack file.
func (d Dir) PacksPath(attempt int) string { return d.path(fmt.Sprintf("packs.%d.json", attempt)) }

// Check reports the first inconsistency of p for a run of n trials, naming
// the field: every task holds at least one trial, and a trial is in one
// task at most.
func (p *Packs) Check(n int) error {
	switch {
	case p.Format != PacksFormat:
		return fmt.Errorf("format %d, this runner reads %d", p.Format, PacksFormat)
	case p.Attempt < 1:
		return fmt.Errorf("attempt %d", p.Attempt)
	case p.PerTask < 1:
		return fmt.Errorf("trials_per_task %d", p.PerTask)
	case len(p.Tasks) == 0:
		return errors.New("no tasks")
	}
	seen := map[int]bool{}
	for t, trials := range p.Tasks {
		if len(trials) == 0 || len(trials) > p.PerTask {
			return fmt.Errorf("tasks[%d] holds %d trials (want 1-%d)", t, len(trials), p.PerTask)
		}
		for _, i := range trials {
			if i < 0 || i >= n || seen[i] {
				return fmt.Errorf("tasks[%d]: trial %d is out of range 0-%d or repeated", t, i, n-1)
			}
			seen[i] = true
		}
	}
	return nil
}

// WritePacks writes p as d's pack file of its attempt, atomically, after
// checking it against m.
func WritePacks(d Dir, m *Manifest, p *Packs) error {
	p.Format, p.RunID = PacksFormat, m.RunID
	if err := p.Check(len(m.Trials)); err != nil {
		return fmt.Errorf("write %s: %w", d.PacksPath(p.Attempt), err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(d.PacksPath(p.Attempt), append(b, '\n')); err != nil {
		return err
	}
	return syncDir(string(d))
}

// RemovePacks removes submission attempt's pack file, if any: an unpacked
// submission that takes the number of a packed one that never reached the
// queue (its sbatch failed) must not be read through it.
func RemovePacks(d Dir, attempt int) error {
	if err := os.Remove(d.PacksPath(attempt)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// ReadPacks reads and checks submission attempt's pack file against m;
// nil (and no error) when that submission packed nothing.
func ReadPacks(d Dir, m *Manifest, attempt int) (*Packs, error) {
	b, err := os.ReadFile(d.PacksPath(attempt))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p Packs
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", d.PacksPath(attempt), err)
	}
	if err := p.Check(len(m.Trials)); err != nil {
		return nil, fmt.Errorf("%s: %w", d.PacksPath(attempt), err)
	}
	if p.Attempt != attempt || p.RunID != m.RunID {
		return nil, fmt.Errorf("%s: holds submission %d of run %d", d.PacksPath(attempt), p.Attempt, p.RunID)
	}
	return &p, nil
}

// Trials returns the trial indices of array task t of the submission
// packed as p (p nil: the unpacked task t runs trial t); nil when p has
// no task t.
func (p *Packs) Trials(t int) []int {
	if p == nil {
		return []int{t}
	}
	if t < 0 || t >= len(p.Tasks) {
		return nil
	}
	return p.Tasks[t]
}
