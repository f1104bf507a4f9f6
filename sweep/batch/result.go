package batch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"goldstone/internal/atomicfile"
)

// ResultFormat is the version of the result file's layout.
const ResultFormat = 1

// Task outcomes (Result.Status); they are trial statuses of the results
// store.
const (
	Done        = "done"
	Diverged    = "diverged" // done, and its training diverged: Error says where (a result, like done)
	Failed      = "failed"
	Interrupted = "interrupted" // SIGTERM (preemption, time limit, scancel) or Ctrl-C
)

// HasResult reports whether a task status comes with the trial's summary
// and series: done and diverged.
func HasResult(status string) bool { return status == Done || status == Diverged }

// Result is what one task attempt wrote: its trial's outcome, and for a
// done or diverged trial its summary metrics and step-wise series.
type Result struct {
	Format  int   `json:"format"`
	RunID   int64 `json:"run_id"`
	Index   int   `json:"index"`
	Attempt int   `json:"attempt"`
	// Restart is SLURM_RESTART_COUNT: how often Slurm restarted this
	// attempt's task (requeue, preemption) before this execution.
	Restart int    `json:"restart,omitempty"`
	Trial   string `json:"trial"`
	Status  string `json:"status"`
	Error   string `json:"error,omitempty"`
	// Where and when it ran.
	Host        string    `json:"host"`
	JobID       string    `json:"job_id,omitempty"` // SLURM_ARRAY_JOB_ID_SLURM_ARRAY_TASK_ID
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended"`
	WallSeconds float64   `json:"wall_seconds"`
	// Stop says how an interrupted execution stopped (nil otherwise).
	Stop *Stop `json:"stop,omitempty"`
	// NotRun marks an interrupted result of a trial that its pack's task
	// (several trials per task, --slurm-trials-per-task) never started:
	// the task was stopped while an earlier trial of the pack ran.
	NotRun bool `json:"not_run,omitempty"`
	// Summary and Series of a done or diverged trial.
	Summary map[string]Num `json:"summary,omitempty"`
	Series  []Curve        `json:"series,omitempty"`
}

// Curve is one metric's series: Steps[i] has Values[i].
type Curve struct {
	Metric string `json:"metric"`
	Steps  []int  `json:"steps"`
	Values []Num  `json:"values"`
}

// Check reports the first inconsistency of r, naming the field.
func (r *Result) Check() error {
	switch {
	case r.Format != ResultFormat:
		return fmt.Errorf("format %d, this runner reads %d", r.Format, ResultFormat)
	case r.Trial == "":
		return fmt.Errorf("trial is empty")
	case r.Attempt < 1:
		return fmt.Errorf("attempt %d", r.Attempt)
	case r.Restart < 0:
		return fmt.Errorf("restart %d", r.Restart)
	case r.Status != Done && r.Status != Diverged && r.Status != Failed && r.Status != Interrupted:
		return fmt.Errorf("status %q (want done, diverged, failed or interrupted)", r.Status)
	}
	for _, c := range r.Series {
		if len(c.Steps) != len(c.Values) {
			return fmt.Errorf("series %q: %d steps but %d values", c.Metric, len(c.Steps), len(c.Values))
		}
	}
	return nil
}

// SortedSummary returns the summary's names in order.
func (r *Result) SortedSummary() []string {
	ks := make([]string, 0, len(r.Summary))
	for k := range r.Summary {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// WriteResult writes r as d's result file of its index and attempt,
// atomically (temporary file, fsync, rename): a reader sees the whole file
// or none.
func WriteResult(d Dir, r *Result) error {
	r.Format = ResultFormat
	if err := r.Check(); err != nil {
		return fmt.Errorf("write result of task %d: %w", r.Index, err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("write result of task %d: %w", r.Index, err)
	}
	dst := d.Result(r.Index, r.Exec())
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(dst, append(b, '\n')); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

// Exec is the execution r is of.
func (r *Result) Exec() Exec { return Exec{r.Attempt, r.Restart} }

// ReadResult reads and checks the result file of a task's execution.
func ReadResult(d Dir, index int, e Exec) (*Result, error) {
	path := d.Result(index, e)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := r.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Index != index || r.Exec() != e {
		return nil, fmt.Errorf("%s: holds task %d attempt %s", path, r.Index, r.Exec())
	}
	return &r, nil
}

// Latest returns the latest execution's result of every task that has one,
// by index.
func Latest(d Dir) (map[int]*Result, error) {
	files, err := d.ResultFiles()
	if err != nil {
		return nil, err
	}
	out := make(map[int]*Result, len(files))
	for i, as := range files {
		r, err := ReadResult(d, i, as[len(as)-1])
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}
