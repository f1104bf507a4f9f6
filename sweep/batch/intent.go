package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"goldstone/internal/atomicfile"
)

// Intent is a submission about to be made: written (atomically) to the
// run's directory before sbatch runs, and removed once the job ids are in
// the results database. A runner killed in between leaves it, and the next
// submission of the run looks for the jobs by its name in the queue and
// adopts them instead of submitting the trials again.
type Intent struct {
	Attempt int       `json:"attempt"`
	Name    string    `json:"name"`  // the trials job's name (the collect job's adds "-collect")
	Array   string    `json:"array"` // --array of the trials job
	Created time.Time `json:"created"`
}

// IntentPath is the path of the run's intent file.
func (d Dir) IntentPath() string { return d.path("submitting.json") }

// WriteIntent records a submission about to be made.
func WriteIntent(d Dir, in *Intent) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(d.IntentPath(), append(b, '\n')); err != nil {
		return err
	}
	return syncDir(string(d))
}

// ReadIntent returns the intent a submission left, or nil when there is
// none.
func ReadIntent(d Dir) (*Intent, error) {
	b, err := os.ReadFile(d.IntentPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var in Intent
	if err := json.Unmarshal(b, &in); err != nil || in.Attempt < 1 || in.Name == "" {
		return nil, fmt.Errorf("%s: not a submission intent (remove it if no job of this run is queued): %v", d.IntentPath(), err)
	}
	return &in, nil
}

// RemoveIntent removes the intent once the submission is recorded.
func RemoveIntent(d Dir) error {
	if err := os.Remove(d.IntentPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
