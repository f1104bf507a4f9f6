package pipeline

import (
	"container/heap"
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// The scheduler of a Run, as bigslice's evaluator: a plain loop over a
// queue of ready tasks, apart from the state machine of a task. admit
// starts ready tasks while fewer than Jobs run; finish applies what a
// task's goroutine reports and makes its downstream tasks ready (or skips
// them when it failed). A task's goroutine verifies its cache entry and
// either reports it cached or runs the stage: the scheduler's goroutine
// never hashes a file, so verifying a large entry does not hold up the
// others. Task states only change on the scheduler's goroutine.

// sched is the scheduler's state of one Run.
type sched struct {
	s          *session
	cancel     context.CancelFunc // cancels the run's context (FailFast)
	ready      readyQueue         // tasks whose upstream nodes all ended, in topological order
	wait       map[*task]int      // waiting task -> upstream nodes not ended yet
	running    int                // tasks admitted and not finished
	done       chan outcome
	eg         errgroup.Group
	errs       []error
	failFastBy string // the node whose failure cancelled the run (FailFast)
}

// readyQueue is a min-heap of tasks by topological index, so that ready
// tasks start in the order of the graph.
type readyQueue []*task

func (q readyQueue) Len() int           { return len(q) }
func (q readyQueue) Less(i, j int) bool { return q[i].index < q[j].index }
func (q readyQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *readyQueue) Push(x any)        { *q = append(*q, x.(*task)) }
func (q *readyQueue) Pop() any {
	old := *q
	t := old[len(old)-1]
	*q = old[:len(old)-1]
	return t
}

// loop runs the tasks and returns the node failures.
func (s *session) loop(parent context.Context) []error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	q := &sched{s: s, cancel: cancel, wait: map[*task]int{}, done: make(chan outcome)}
	// The fan-out goes through an errgroup limited to Jobs; admit itself
	// also never starts more than Jobs, so Go only waits for a finishing
	// goroutine to return. Stage errors travel on done, not through the
	// group, because a failure must not cancel the siblings (unless
	// FailFast).
	q.eg.SetLimit(s.jobs)
	defer q.eg.Wait()
	for _, t := range s.tasks {
		if len(t.deps) == 0 {
			heap.Push(&q.ready, t)
		} else {
			q.wait[t] = len(t.deps)
		}
	}
	for {
		q.admit(ctx)
		if q.running == 0 {
			break
		}
		if s.opts.Idle != nil && q.running < s.jobs && ctx.Err() == nil {
			s.opts.Idle(s.jobs - q.running)
		}
		q.finish(ctx, <-q.done)
	}
	q.cutOff()
	return q.errs
}

// admit starts ready tasks while fewer than Jobs run and ctx is not done.
func (q *sched) admit(ctx context.Context) {
	s := q.s
	up := func(u *task) (map[string]string, map[string]string, bool) {
		return u.outDigests, u.outPaths, u.state == stateOK
	}
	for q.running < s.jobs && ctx.Err() == nil && q.ready.Len() > 0 {
		t := heap.Pop(&q.ready).(*task)
		digests, _, failed, _, err := s.inputsTolerant(t, up)
		if err != nil {
			t.state, t.err = stateFailed, err
			s.emit(Event{Kind: Failed, Node: t.n.ID, Stage: t.stage, Err: err})
			q.failed(t)
			q.release(t)
			continue
		}
		t.key, t.inDigests, t.failedInputs = s.keyOf(t, digests), digests, failed
		t.state = stateRunning
		q.running++
		q.eg.Go(func() error {
			q.done <- s.attempt(ctx, t, digests)
			return nil
		})
	}
}

// finish applies what t's goroutine reported.
func (q *sched) finish(ctx context.Context, o outcome) {
	s, t := q.s, o.t
	q.running--
	t.elapsed = o.elapsed
	switch {
	case o.requeue:
		t.state = stateWaiting // cancelled: cutOff says so
		return
	case o.cached:
		t.state, t.cached, t.reason = stateOK, true, "cached"
		t.outDigests, t.outPaths = o.outDigests, s.outPaths(t, t.key)
		s.emit(Event{Kind: Cached, Node: t.n.ID, Stage: t.stage, Key: t.key, Outputs: t.outPaths, Reason: t.reason})
		q.recordState(t)
	case o.err == nil:
		t.state, t.outDigests, t.outPaths = stateOK, o.outDigests, s.outPaths(t, t.key)
		s.emit(Event{Kind: Done, Node: t.n.ID, Stage: t.stage, Key: t.key, Outputs: t.outPaths, Elapsed: t.elapsed})
		q.recordState(t)
	case !o.started: // the corrupt entry could not be evicted
		t.state, t.err = stateFailed, o.err
		s.emit(Event{Kind: Failed, Node: t.n.ID, Stage: t.stage, Key: t.key, Err: t.err})
		q.errs = append(q.errs, fmt.Errorf("node %s (stage %s): %w", t.n.ID, t.stage, o.err))
	default:
		t.state, t.err = stateFailed, o.err
		if ctx.Err() != nil && errors.Is(o.err, ctx.Err()) {
			// Stopped by cancellation, not a failure of its own.
			t.interrupted, t.reason = true, "interrupted"
			if q.failFastBy != "" {
				t.reason = "interrupted: fail-fast after " + q.failFastBy + " failed"
			}
		} else {
			q.failed(t)
		}
		s.emit(Event{Kind: Failed, Node: t.n.ID, Stage: t.stage, Key: t.key, Err: t.err, Elapsed: t.elapsed, Reason: t.reason})
	}
	q.release(t)
}

// failed records t's failure as a run error and, with FailFast, cancels
// the run.
func (q *sched) failed(t *task) {
	q.errs = append(q.errs, fmt.Errorf("node %s (stage %s): %w", t.n.ID, t.stage, t.err))
	if q.s.opts.FailFast && q.failFastBy == "" {
		q.failFastBy = t.n.ID
		q.cancel()
	}
}

// recordState saves t's key as the last one of its node.
func (q *sched) recordState(t *task) {
	if err := q.s.record(t); err != nil {
		q.errs = append(q.errs, err)
	}
}

// release tells t's downstream tasks that t ended: those that cannot run
// without it (it failed, not Tolerant) are skipped at once, with the node
// whose failure is the cause; the others become ready once every upstream
// node ended and they may start (depsOK: an interrupted upstream node
// leaves them waiting, and cutOff cancels them).
func (q *sched) release(t *task) {
	s := q.s
	for _, d := range t.next {
		if d.state != stateWaiting {
			continue
		}
		if c := s.failedUpstream(d); c != "" && !d.n.Tolerant {
			s.skip(d, "upstream "+c+" failed", c)
			q.release(d)
			continue
		}
		if q.wait[d]--; q.wait[d] == 0 && s.depsOK(d) {
			heap.Push(&q.ready, d)
		}
	}
}

// cutOff ends every task still waiting: skipped after an upstream
// failure, or cancelled.
func (q *sched) cutOff() {
	s := q.s
	for _, t := range s.tasks {
		if t.state != stateWaiting {
			continue
		}
		if c := s.failedUpstream(t); c != "" && !t.n.Tolerant {
			s.skip(t, "upstream "+c+" failed", c)
			continue
		}
		reason := "cancelled"
		if q.failFastBy != "" {
			reason = "cancelled: fail-fast after " + q.failFastBy + " failed"
		}
		t.state, t.reason = stateSkipped, reason
		t.err = fmt.Errorf("%w: %s: %w", ErrSkipped, reason, context.Canceled)
		s.emit(Event{Kind: Skipped, Node: t.n.ID, Stage: t.stage, Err: t.err, Reason: reason})
	}
}
