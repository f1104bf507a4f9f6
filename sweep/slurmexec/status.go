package slurmexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"goldstone/internal/atomicfile"
	"goldstone/internal/slurm"
	"goldstone/runs"
	"goldstone/sweep/batch"
)

// RunStatus is a run's state on the cluster.
type RunStatus struct {
	Run      *runs.RunInfo
	Dir      batch.Dir
	Jobs     []runs.SlurmJob
	Trials   []batch.TrialState
	Counts   map[string]int
	QueueJob string    // the job squeue was asked about ("" when none)
	QueueAt  time.Time // when
	QueueErr error     // squeue failed: the states come from the result files only
	// AcctErr is why sacct could not say how tasks ended (no accounting
	// on this cluster); nil when it did or was not asked.
	AcctErr   error
	Collected int // trials whose latest result is in the database
	// Shared is the shared job of the latest submission (nil when it had
	// none: the shared stages were cached or ran on the submit host).
	Shared *SharedState
	// Search is a search run's latest wave (nil for a grid's run): the
	// trials from Search.First on are its, the others the earlier waves'.
	Search *SearchWave
	// tasks is the latest submission's task of each trial it submitted:
	// "JOB_ARRAYINDEX", by trial index (the trials of a pack share one).
	tasks   map[int]string
	taskMap *taskMap
}

// queue asks the queue about the latest submission's trials jobs and
// returns the state of each trial's task, by trial index, and that
// submission's number. The trials of a running pack (several trials per
// task, run one after another) that have no result of that submission
// yet are running (the first) and pending (the others).
func (s *RunStatus) queue(ctx context.Context, p *slurm.Poller) (map[int]string, int, error) {
	queue := map[int]string{}
	attempt := 0
	s.tasks = map[int]string{}
	var latest map[int]*batch.Result
	for k, j := range latestTrialsJobs(s.Jobs) {
		attempt = j.Attempt
		if k == 0 {
			s.QueueJob = j.JobID
		}
		tasks, at, err := queueOf(ctx, s.Dir, j.JobID, p)
		if k == 0 || err != nil {
			s.QueueAt, s.QueueErr = at, err
		}
		pack, err := s.taskMap.pack(j.Attempt)
		if err != nil {
			return nil, 0, err
		}
		if pack != nil && latest == nil {
			if latest, err = batch.Latest(s.Dir); err != nil {
				return nil, 0, err
			}
		}
		for _, t := range tasks {
			if t.Index < 0 {
				continue
			}
			trials, err := s.taskMap.trials(j, t.Index)
			if err != nil {
				return nil, 0, err
			}
			started := false
			for _, i := range trials {
				queue[i] = t.State
				if pack == nil || !running(t.State) {
					continue
				}
				if r := latest[i]; r != nil && r.Attempt >= j.Attempt {
					continue
				}
				if started {
					queue[i] = "PENDING"
				}
				started = true
			}
		}
		// Every trial of the array, queued or not: its output file.
		byTask, err := s.taskMap.byTask(j)
		if err != nil {
			return nil, 0, err
		}
		for i, trials := range byTask {
			for _, tr := range trials {
				s.tasks[tr] = fmt.Sprintf("%s_%d", j.JobID, i)
			}
		}
	}
	return queue, attempt, nil
}

// Task is the latest submission's Slurm task of trial index
// ("JOB_ARRAYINDEX", the name of its output file), "" when it submitted
// none.
func (s *RunStatus) Task(index int) string { return s.tasks[index] }

// Status reads a run's result files (the truth) and asks the queue, once,
// about its latest array job (a hint). p rate-limits squeue calls: pass the
// same Poller to watch a run.
func Status(ctx context.Context, st *runs.Store, id int64, workdir string, p *slurm.Poller) (*RunStatus, error) {
	ri, err := st.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	d := batch.RunDir(workdir, ri.Experiment, id)
	m, err := batch.ReadManifest(d)
	if err != nil {
		return nil, err
	}
	out := &RunStatus{Run: ri, Dir: d}
	if out.Search, err = searchWave(m); err != nil {
		return nil, err
	}
	if out.Jobs, err = st.SlurmJobs(ctx, id); err != nil {
		return nil, err
	}
	out.taskMap = newTaskMap(d, m)
	queue, attempt, err := out.queue(ctx, p)
	if err != nil {
		return nil, err
	}
	if out.Trials, err = batch.Status(d, m, queue, attempt); err != nil {
		return nil, err
	}
	out.Counts = batch.Count(out.Trials)
	if out.Shared, err = sharedState(ctx, st, d, id, p); err != nil {
		return nil, err
	}
	out.AcctErr = ended(ctx, out, p)
	atts, err := st.Attempts(ctx, id)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, a := range atts {
		seen[a.Trial] = true
	}
	out.Collected = len(seen)
	return out, nil
}

// running reports whether the queue's state of a task says it runs (as
// batch.Status reads it).
func running(state string) bool {
	switch strings.ToUpper(state) {
	case "RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING", "RESIZING":
		return true
	}
	return false
}

// queueCache is the last answer of squeue about a run's array job, kept in
// the run directory so that status commands in other processes (a shell
// loop, several users) ask squeue at most once per Poller interval too.
type queueCache struct {
	Job   string       `json:"job"`
	At    time.Time    `json:"at"`
	Tasks []slurm.Task `json:"tasks"`
}

// queueOf asks p about job unless the run directory holds an answer about
// it younger than p's interval.
func queueOf(ctx context.Context, d batch.Dir, job string, p *slurm.Poller) ([]slurm.Task, time.Time, error) {
	path := filepath.Join(string(d), "queue.json")
	interval := p.Interval
	if interval <= 0 {
		interval = 30 * time.Second
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	var c queueCache
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &c) == nil && c.Job == job {
		if age := now().Sub(c.At); age >= 0 && age < interval {
			return c.Tasks, c.At, nil
		}
	}
	tasks, at, err := p.Queue(ctx, job)
	if err == nil {
		if b, merr := json.Marshal(queueCache{Job: job, At: at, Tasks: tasks}); merr == nil {
			atomicfile.WriteFile(path, b) // a cache: failing to write it only costs a call
		}
	}
	return tasks, at, err
}

// TaskStep returns the last "step N of M" a task ("JOB_ARRAYINDEX", see
// RunStatus.Task) wrote to its output file (logs/<task>.out), or "".
func TaskStep(d batch.Dir, task string) string {
	if task == "" {
		return ""
	}
	f, err := os.Open(filepath.Join(d.Logs(), task+".out"))
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	const tail = 4096
	off := max(0, fi.Size()-tail)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	m := stepLine.FindAllSubmatch(b, -1)
	if len(m) == 0 {
		return ""
	}
	return "step " + string(m[len(m)-1][1]) + "/" + string(m[len(m)-1][2])
}

var stepLine = regexp.MustCompile(`: step (\d+) of (\d+)`)

// ended asks sacct, once per trials job of the run, how the tasks of the
// trials that lack a done or failed result and are not queued ended (the
// reason a task is missing or interrupted: OOM, time limit, node failure,
// preemption), when there are such trials. p asks sacct about a task at
// most once per its AcctInterval (a minute): a waiting submit polling
// every few seconds does not call sacct at every poll.
func ended(ctx context.Context, s *RunStatus, p *slurm.Poller) error {
	lost := map[int]bool{}
	for _, t := range s.Trials {
		if t.State == batch.Missing || t.State == batch.Interrupted {
			lost[t.Index] = true
		}
	}
	if len(lost) == 0 || p == nil || p.Client == nil {
		return nil
	}
	byIndex := map[int]string{}
	for _, j := range s.Jobs { // oldest first: a later job's answer wins
		if j.Role != runs.RoleTrials {
			continue
		}
		byTask, err := s.taskMap.byTask(j)
		if err != nil {
			return err
		}
		var tasks []int
		for i, trials := range byTask {
			if slices.ContainsFunc(trials, func(tr int) bool { return lost[tr] }) {
				tasks = append(tasks, i)
			}
		}
		if len(tasks) == 0 {
			continue
		}
		slices.Sort(tasks)
		states, err := p.Accounting(ctx, j.JobID, tasks)
		if err != nil {
			return err
		}
		for i, st := range states {
			for _, tr := range byTask[i] {
				byIndex[tr] = st
			}
		}
	}
	for i := range s.Trials {
		t := &s.Trials[i]
		if t.State == batch.Missing || t.State == batch.Interrupted {
			t.Ended = byIndex[t.Index]
		}
	}
	return nil
}

// SharedState is the state of a submission's shared job.
type SharedState struct {
	Job     string
	Attempt int
	// State is done, failed, pending or running (Slurm's state when the
	// queue holds it: PENDING, RUNNING, ...), or "ended" without a result
	// (Reason then says how, when sacct can tell).
	State  string
	Reason string // the stage's error, squeue's reason, or sacct's state
	Log    string // its Slurm output file
}

// sharedState is the state of the shared job of run id's latest
// submission: its result file, else the queue, else sacct.
func sharedState(ctx context.Context, st *runs.Store, d batch.Dir, id int64, p *slurm.Poller) (*SharedState, error) {
	j, err := latestShared(ctx, st, id)
	if err != nil || j == nil {
		return nil, err
	}
	s := &SharedState{Job: j.JobID, Attempt: j.Attempt, Log: d.SharedLog(j.JobID)}
	r, err := batch.ReadSharedResult(d, j.Attempt)
	if err != nil {
		return nil, err
	}
	if r != nil {
		s.State, s.Reason = r.Status, r.Error
		return s, nil
	}
	if tasks, _, err := p.Queue(ctx, j.JobID); err == nil && len(tasks) > 0 {
		s.State, s.Reason = tasks[0].State, tasks[0].Reason
		if tasks[0].Active() {
			return s, nil
		}
	}
	s.State = "ended"
	if p.Client == nil {
		return s, nil
	}
	if states, err := p.Accounting(ctx, j.JobID, []int{-1}); err == nil && states[-1] != "" {
		s.Reason = "sacct: " + states[-1]
	} else {
		s.Reason = "without a result (sacct cannot tell how)"
	}
	return s, nil
}
