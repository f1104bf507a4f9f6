package batch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"goldstone/internal/atomicfile"
)

// SharedResult is what a submission's shared job (the stages every trial
// shares, run before the trials' array) wrote: done, or failed with the
// error of the stage that failed.
type SharedResult struct {
	RunID   int64     `json:"run_id"`
	Attempt int       `json:"attempt"`
	Status  string    `json:"status"` // Done, Failed or Interrupted
	Error   string    `json:"error,omitempty"`
	Host    string    `json:"host"`
	JobID   string    `json:"job_id,omitempty"` // SLURM_JOB_ID
	Ran     []string  `json:"ran,omitempty"`    // the stages it ran (not cached)
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
}

// SharedResult is the path of the result file of submission attempt's
// shared job.
func (d Dir) SharedResult(attempt int) string { return d.path(fmt.Sprintf("shared.%d.json", attempt)) }

// SharedWorkDir is the shared job's private pipeline workdir (its cache/ a
// link to the shared cache: see LinkCacheAt).
func (d Dir) SharedWorkDir() string { return d.path("tasks", "shared") }

// SharedLog is the Slurm output file of shared job id.
func (d Dir) SharedLog(jobID string) string { return filepath.Join(d.Logs(), "shared-"+jobID+".out") }

// WriteSharedResult writes r as the result file of its attempt, atomically.
func WriteSharedResult(d Dir, r *SharedResult) error {
	if r.Attempt < 1 || (r.Status != Done && r.Status != Failed && r.Status != Interrupted) {
		return fmt.Errorf("write shared result: attempt %d, status %q", r.Attempt, r.Status)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	dst := d.SharedResult(r.Attempt)
	if err := atomicfile.WriteFile(dst, append(b, '\n')); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}

// ReadSharedResult reads the result file of submission attempt's shared
// job; (nil, nil) when there is none.
func ReadSharedResult(d Dir, attempt int) (*SharedResult, error) {
	path := d.SharedResult(attempt)
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r SharedResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Attempt != attempt {
		return nil, fmt.Errorf("%s: holds attempt %d", path, r.Attempt)
	}
	return &r, nil
}
