package batch

// Stop is how an interrupted execution stopped, as the task saw it: the
// signal, whether it was the warning Slurm sends before the task's time
// limit (--signal=B:TERM@<lead>: the task had run to within the lead,
// plus a margin for the signal's delivery, of the limit its submission's
// script asked for), the step its trial had reached (the last progress
// event: "node: step N of M") and how long it had run. A resubmission
// reads it to scale the time limit (--slurm-time-retry-scale) where
// accounting (sacct's TIMEOUT) is absent: a task stopped at the warning
// saves its checkpoint and exits, so Slurm records it FAILED or
// CANCELLED, never TIMEOUT.
type Stop struct {
	Signal       string  `json:"signal"`
	TimeLimit    bool    `json:"time_limit,omitempty"`
	LimitSeconds int64   `json:"limit_seconds,omitempty"` // the submission's --time
	LeadSeconds  int64   `json:"lead_seconds,omitempty"`  // the submission's warning lead
	Step         string  `json:"step,omitempty"`
	AfterSeconds float64 `json:"after_seconds"`
}
