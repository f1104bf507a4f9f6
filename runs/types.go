package runs

import (
	"errors"
	"time"
)

// Run statuses (runs.status): what a script can act on.
const (
	StatusRunning     = "running"     // a process is (or was, if it died) working on it
	StatusFinished    = "finished"    // ended; every trial done or diverged
	StatusFailed      = "failed"      // ended; some trials failed, or a data error stopped it
	StatusInterrupted = "interrupted" // stopped before every trial ended (Ctrl-C, kill); resumable
)

// Trial statuses (trials.status): running, failed and interrupted as for
// runs, and these.
const (
	StatusDone    = "done"
	StatusPending = "pending"
	StatusCached  = "cached" // result reused from an earlier run, not recomputed
	// StatusDiverged: the trial's training blew up (a loss or psi that is
	// not finite, or past its bound) at a recorded step. An outcome of the
	// algorithm, not a failure of the pipeline: its stages completed, and
	// the metrics it never reached are "never".
	StatusDiverged = "diverged"
	// StatusPruned: a trial of a pruned search whose point its pruner
	// stopped at the trial's rung (trial_rows.rung, pruned_at_step): it
	// ran to its steps and has its results, and its point went no further.
	StatusPruned = "pruned"
)

// Run kinds (runs.kind).
const (
	KindRun   = "run"   // an ordinary experiment run
	KindRepro = "repro" // a reproduction check of an earlier run
)

var (
	// ErrNotFound is returned (wrapped) when a run id does not exist.
	ErrNotFound = errors.New("runs: not found")
	// ErrClosed is returned (or recorded) when the Store is used after Close.
	ErrClosed = errors.New("runs: store closed")
)

// RunInfo is one row of the runs table. Times are returned in UTC; a zero
// time is stored as NULL.
type RunInfo struct {
	ID         int64
	Experiment string
	Kind       string // KindRun or KindRepro; "" means KindRun on CreateRun
	ConfigJSON string
	ConfigHash string
	Status     string // a run status; "" means StatusRunning on CreateRun
	GitCommit  string // "" when not a git checkout
	GitDirty   bool
	GoVersion  string
	OS         string
	Arch       string
	CPUModel   string
	Host       string // with PID, OwnerStarted and OwnerToken: the run's owner (see Owner)
	GOMAXPROCS int
	PID        int
	Started    time.Time
	Ended      time.Time
	Note       string
	// ReportState is the state of the run's report (SetReport): "" (none
	// asked for), ReportWriting, ReportDone or ReportFailed, with
	// ReportError.
	ReportState string
	ReportError string
	// OwnerStarted and OwnerToken (runs.owner_started, owner_token) tell
	// the owner's process from a later one given its pid, and its claim
	// from a later claim: see Owner.
	OwnerStarted string
	OwnerToken   string
}

// Report states (runs.report_state).
const (
	ReportWriting = "writing" // begun and not ended: a kill leaves it so
	ReportDone    = "done"
	ReportFailed  = "failed"
)

// Trial is one row of the trials table. ID is a stable identifier of the
// trial within its run (e.g. a digest of its parameters); trials are
// ordered by ID. Each Params value is a JSON text (e.g. `0.1`, `"adam"`,
// `[1,2]`); keys are free-form.
type Trial struct {
	RunID       int64
	ID          string
	Params      map[string]string
	Seed        int64
	Status      string
	Error       string
	Started     time.Time
	Ended       time.Time
	WallSeconds float64
}

// Point is one step of a metric series.
type Point struct {
	Step  int
	Value float64
}

// Artifact records a file produced by a run; Trial is "" for run-level
// artifacts.
type Artifact struct {
	RunID  int64
	Trial  string
	Path   string
	SHA256 string
	Kind   string
}

func validRunStatus(s string) bool {
	switch s {
	case StatusRunning, StatusFinished, StatusFailed, StatusInterrupted:
		return true
	}
	return false
}

// Ended reports whether a run status is final: finished or failed. A run
// that ended is not resumed; one that is running or interrupted is.
func Ended(status string) bool { return status == StatusFinished || status == StatusFailed }

// HasResult reports whether a trial status comes with the trial's results
// (series and summary metrics): done, cached, diverged and pruned.
func HasResult(status string) bool {
	return status == StatusDone || status == StatusCached || status == StatusDiverged || status == StatusPruned
}

func validTrialStatus(s string) bool {
	switch s {
	case StatusPending, StatusRunning, StatusDone, StatusDiverged, StatusFailed, StatusInterrupted, StatusCached:
		return true
	}
	return false
}
