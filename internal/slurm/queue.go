package slurm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Task is what the queue says about one task of a job.
type Task struct {
	JobID  string // the array's job id
	Index  int    // array index; -1 for a job that is not an array
	State  string // PENDING, RUNNING, COMPLETING, ...
	Reason string // why it is pending ("Resources", "JobArrayTaskLimit"), "None" otherwise
}

// Active reports whether the task still holds or waits for resources, or
// may run again: the final states (a just-ended job squeue still lists) do
// not count; COMPLETING does (its result file may not be written yet, and
// a task being requeued passes through it), and so do the requeued states
// (REQUEUED, REQUEUE_HOLD, REQUEUE_FED) and every state not known here.
func (t Task) Active() bool {
	switch t.State {
	case "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL",
		"PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT":
		return false
	}
	return true
}

// Queue returns what squeue says about a job's tasks, with one call
// (-r lists every array task on its own line). A job the controller no
// longer knows (finished long ago) has no tasks: that is not an error.
func (c *Client) Queue(ctx context.Context, jobID string) ([]Task, error) {
	out, err := c.exec(ctx, or(c.Squeue, "squeue"), []string{"-h", "-r", "-j", jobID, "-o", "%i|%T|%r"}, "")
	if err != nil {
		var ce *CommandError
		if errors.As(err, &ce) && strings.Contains(strings.ToLower(ce.Msg), "invalid job id") {
			return nil, nil
		}
		return nil, err
	}
	return parseQueue(jobID, out)
}

// Accounting returns how the tasks of an array job ended, as sacct says
// (one call: sacct -n -P -X -j JOB -o JobID,State): by array index, the
// state of the task's latest run (COMPLETED, FAILED, OUT_OF_MEMORY,
// TIMEOUT, NODE_FAIL, PREEMPTED, CANCELLED, ...). Many clusters keep no
// accounting: sacct then fails, and so does Accounting. A job that is
// not an array has its state at index -1.
func (c *Client) Accounting(ctx context.Context, jobID string) (map[int]string, error) {
	out, err := c.exec(ctx, or(c.Sacct, "sacct"), []string{"-n", "-P", "-X", "-j", jobID, "-o", "JobID,State"}, "")
	if err != nil {
		return nil, err
	}
	states := map[int]string{}
	for n, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		id, state, ok := strings.Cut(line, "|")
		if !ok {
			return nil, fmt.Errorf("sacct: line %d: unexpected %q (want jobid|state)", n+1, line)
		}
		job, idx, ok := strings.Cut(id, "_")
		if !ok && id == jobID {
			idx = "-1" // a job that is not an array
		} else if !ok || job != jobID {
			continue
		}
		i, err := strconv.Atoi(idx)
		if err != nil {
			continue // a pending range "[3-5]"
		}
		if f := strings.Fields(state); len(f) > 0 {
			states[i] = f[0] // "CANCELLED by 0" -> CANCELLED
		}
	}
	return states, nil
}

// QueueByName returns what squeue says about the tasks of every job named
// name (of any job id): how a submission whose job id was never recorded
// is found again.
func (c *Client) QueueByName(ctx context.Context, name string) ([]Task, error) {
	out, err := c.exec(ctx, or(c.Squeue, "squeue"), []string{"-h", "-r", "--name=" + name, "-o", "%i|%T|%r"}, "")
	if err != nil {
		return nil, err
	}
	return parseQueue("", out)
}

// parseQueue parses squeue -h -r -o '%i|%T|%r' output for job jobID ("":
// every job).
func parseQueue(jobID, out string) ([]Task, error) {
	var tasks []Task
	for n, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 3 {
			return nil, fmt.Errorf("squeue: line %d: unexpected %q (want id|state|reason)", n+1, line)
		}
		t := Task{JobID: f[0], Index: -1, State: f[1], Reason: f[2]}
		if id, idx, ok := strings.Cut(f[0], "_"); ok {
			i, err := strconv.Atoi(idx)
			if err != nil || i < 0 {
				return nil, fmt.Errorf("squeue: line %d: bad array task id %q", n+1, f[0])
			}
			t.JobID, t.Index = id, i
		}
		if jobID != "" && t.JobID != jobID {
			continue // e.g. a heterogeneous job's other components
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// Queuer is what a Poller asks: the queue's tasks of a job and how they
// ended. *Client asks squeue and sacct; another batch back end (processes
// on this machine: sweep/procexec) answers from its own records.
type Queuer interface {
	Queue(ctx context.Context, jobID string) ([]Task, error)
	Accounting(ctx context.Context, jobID string) (map[int]string, error)
}

// Poller rate-limits Queue: at most one squeue call per job per Interval
// (30 s by default); in between it answers from the last result. After a
// failed call the interval for that job doubles, up to 10 minutes, and
// returns to Interval after a success.
type Poller struct {
	Client   Queuer
	Interval time.Duration    // default 30 s
	Now      func() time.Time // default time.Now
	// AcctInterval is the least time between two sacct calls about one
	// task (Accounting); 0: DefaultAcctInterval.
	AcctInterval time.Duration

	mu   sync.Mutex
	jobs map[string]*pollState
	acct map[string]*acctState // by job
}

// DefaultAcctInterval is Poller.AcctInterval's default: sacct is asked
// about a task at most once a minute.
const DefaultAcctInterval = time.Minute

type acctState struct {
	asked  map[int]time.Time // by array index (-1: the job itself): the last call that was about it
	states map[int]string
	err    error
}

// Accounting is Client.Accounting rate-limited per task: it calls sacct
// about jobID only when one of the tasks (array indices; -1 for the job
// itself) was not asked about within AcctInterval, and otherwise answers
// from the last result (or error). A call is about every task it is asked
// for.
func (p *Poller) Accounting(ctx context.Context, jobID string, tasks []int) (map[int]string, error) {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	every := p.AcctInterval
	if every <= 0 {
		every = DefaultAcctInterval
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.acct == nil {
		p.acct = map[string]*acctState{}
	}
	st := p.acct[jobID]
	if st == nil {
		st = &acctState{asked: map[int]time.Time{}}
		p.acct[jobID] = st
	}
	t := now()
	due := false
	for _, i := range tasks {
		if at, ok := st.asked[i]; !ok || t.Sub(at) >= every || t.Before(at) {
			due = true
		}
	}
	if !due {
		return st.states, st.err
	}
	for _, i := range tasks {
		st.asked[i] = t
	}
	st.states, st.err = p.Client.Accounting(ctx, jobID)
	return st.states, st.err
}

type pollState struct {
	at    time.Time // of the last call
	wait  time.Duration
	tasks []Task
	err   error
	ok    bool // a call has succeeded
}

// Queue returns the queue's tasks for jobID and when squeue was asked. It
// calls squeue only when the last call for this job is older than the
// current interval; otherwise it returns the last answer (or error).
func (p *Poller) Queue(ctx context.Context, jobID string) ([]Task, time.Time, error) {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	base := p.Interval
	if base <= 0 {
		base = 30 * time.Second
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.jobs == nil {
		p.jobs = map[string]*pollState{}
	}
	st := p.jobs[jobID]
	if st != nil && now().Sub(st.at) < st.wait {
		return st.tasks, st.at, st.err
	}
	if st == nil {
		st = &pollState{wait: base}
		p.jobs[jobID] = st
	}
	st.at = now()
	tasks, err := p.Client.Queue(ctx, jobID)
	if err != nil {
		st.wait = min(2*max(st.wait, base), 10*time.Minute)
		st.err = err
		return st.tasks, st.at, err
	}
	st.wait, st.tasks, st.err, st.ok = base, tasks, nil, true
	return tasks, st.at, nil
}

// MaxArraySize returns the cluster's MaxArraySize (scontrol show config):
// an array's task indices must be below it.
func (c *Client) MaxArraySize(ctx context.Context) (int, error) {
	out, err := c.exec(ctx, or(c.Scontrol, "scontrol"), []string{"show", "config"}, "")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "MaxArraySize" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return 0, fmt.Errorf("scontrol show config: MaxArraySize %q: want a positive count", strings.TrimSpace(v))
		}
		return n, nil
	}
	return 0, fmt.Errorf("scontrol show config: no MaxArraySize line")
}
