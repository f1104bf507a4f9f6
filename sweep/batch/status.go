package batch

import "strings"

// Trial states shown by Status: the result statuses, and these.
const (
	Pending = "pending" // queued (the queue says so)
	Running = "running" // running (the queue says so)
	Missing = "missing" // no result and not in the queue: resubmitted by re-running the command
)

// TrialState is a trial's state as the result files and the queue say.
type TrialState struct {
	Index   int
	Trial   string
	Name    string
	State   string // done, diverged, failed, interrupted, pending, running, missing
	Attempt int    // of the latest result file; 0 without one
	Error   string // of a diverged, failed or interrupted result
	Queue   string // the queue's state of the task in the latest submission ("" when not queued)
	// Ended is how the scheduler says the task's latest run ended
	// (sacct: OUT_OF_MEMORY, TIMEOUT, NODE_FAIL, PREEMPTED, CANCELLED,
	// FAILED...), for a trial without a done result; "" when unknown.
	Ended string
}

// Status combines the result files (the truth) with the queue's view of the
// tasks of submission attempt (a hint, by array index, e.g. "RUNNING"). A
// result of that attempt or a later one decides; otherwise a task the queue
// lists is pending or running, whatever an earlier attempt wrote; otherwise
// the latest result decides, and a trial with neither is missing.
func Status(d Dir, m *Manifest, queue map[int]string, attempt int) ([]TrialState, error) {
	latest, err := Latest(d)
	if err != nil {
		return nil, err
	}
	out := make([]TrialState, len(m.Trials))
	for i, tr := range m.Trials {
		s := TrialState{Index: tr.Index, Trial: tr.ID, Name: tr.Name, State: Missing, Queue: queue[tr.Index]}
		if r := latest[tr.Index]; r != nil {
			s.State, s.Attempt = r.Status, r.Attempt
			if r.Status != Done {
				s.Error = r.Error
			}
		}
		if q := s.Queue; q != "" && s.Attempt < attempt {
			switch strings.ToUpper(q) {
			case "PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "RESV_DEL_HOLD":
				s.State = Pending
			case "RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING", "RESIZING":
				s.State = Running
			default:
				s.State = strings.ToLower(q) // suspended, preempted, ...
			}
		}
		out[i] = s
	}
	return out, nil
}

// Count returns how many trials are in each state.
func Count(states []TrialState) map[string]int {
	c := map[string]int{}
	for _, s := range states {
		c[s.State]++
	}
	return c
}
