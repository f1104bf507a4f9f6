package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"sync"
)

// heldEntry is a Run's lock on one cache entry. mu orders the Run's own
// tasks of one key (nodes with the same key share the entry); lk is the
// flock this Run holds on the entry, if any.
type heldEntry struct {
	mu sync.Mutex
	lk *entryLock
}

func (s *session) held(dir string) *heldEntry {
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	h := s.locks[dir]
	if h == nil {
		h = &heldEntry{}
		s.locks[dir] = h
	}
	return h
}

// share takes, for a Run's plan, the shared lock on t's entry for key
// without waiting: false when another runner holds it exclusively (it is
// writing or removing the entry; the node's task waits for it). Plan takes
// no locks: true.
func (s *session) share(t *task, key CacheKey) bool {
	if s.locks == nil {
		return true
	}
	dir := s.entryDir(t.stage, key)
	h := s.held(dir)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lk != nil {
		return true
	}
	l, ok, err := tryEntryLock(dir, false)
	if err != nil || !ok {
		return false // an error resurfaces when the task locks the entry
	}
	h.lk = l
	return true
}

// unlockAll releases the Run's entry locks once its tasks have ended.
func (s *session) unlockAll() {
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	for _, h := range s.locks {
		h.lk.unlock(false)
		h.lk = nil
	}
}

// recheck is check for a task about to use its entry: an entry found sound
// before is trusted while its manifest is still there (entries are
// immutable); any other is checked again, since another runner may have
// written it meanwhile.
func (s *session) recheck(ctx context.Context, t *task) (entryCheck, error) {
	dir := s.entryDir(t.stage, t.key)
	s.checkMu.Lock()
	c, ok := s.checked[dir]
	s.checkMu.Unlock()
	if ok && c.state == entryOK {
		if _, err := os.Lstat(filepath.Join(dir, manifestName)); err == nil {
			return c, nil
		}
	}
	s.forget(dir)
	return s.check(ctx, t, t.key)
}

// attempt runs on t's goroutine: it takes t's sound cache entry (written
// by this Run, an earlier one, or another runner it waited for), or evicts
// a corrupt one and runs the stage under the entry's exclusive lock.
func (s *session) attempt(ctx context.Context, t *task, digests map[string]string) outcome {
	h := s.held(s.entryDir(t.stage, t.key))
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		if o, done := s.attemptOnce(ctx, t, h, digests); done {
			return o
		}
	}
}

// attemptOnce is one try of attempt; done is false when the entry's lock
// was lost to another runner between writing the entry and reading it
// (flock's conversion is not atomic), and attempt tries again.
func (s *session) attemptOnce(ctx context.Context, t *task, h *heldEntry, digests map[string]string) (o outcome, done bool) {
	dir := s.entryDir(t.stage, t.key)
	waiting := func() {
		s.emit(Event{Kind: Log, Node: t.n.ID, Stage: t.stage, Key: t.key, Msg: "waiting for another runner writing this node's cache entry"})
	}
	lockErr := func(err error) (outcome, bool) {
		if ctx.Err() != nil {
			return outcome{t: t, requeue: true}, true // cancelled while waiting
		}
		return outcome{t: t, err: err}, true
	}
	if !s.opts.Force {
		if h.lk == nil {
			l, err := waitEntryLock(ctx, dir, false, waiting)
			if err != nil {
				return lockErr(err)
			}
			h.lk = l
		}
		c, err := s.recheck(ctx, t)
		if err != nil { // cancelled while verifying
			return outcome{t: t, requeue: true}, true
		}
		if c.state == entryOK {
			return outcome{t: t, cached: true, outDigests: c.digests}, true
		}
	}
	h.lk.unlock(false) // a shared lock is not turned exclusive: released, then taken anew
	h.lk = nil
	l, err := waitEntryLock(ctx, dir, true, waiting)
	if err != nil {
		return lockErr(err)
	}
	h.lk = l
	corrupt := ""
	if !s.opts.Force {
		s.forget(dir)
		c, err := s.check(ctx, t, t.key)
		switch {
		case err != nil:
			return outcome{t: t, requeue: true}, true
		case c.state == entryOK: // another runner wrote it while this one waited
			if !h.lk.share() {
				h.lk = nil
				return outcome{}, false
			}
			return outcome{t: t, cached: true, outDigests: c.digests}, true
		case c.state == entryCorrupt:
			corrupt = c.problem
			s.emit(Event{Kind: Corrupt, Node: t.n.ID, Stage: t.stage, Key: t.key, Reason: c.problem})
			err := evictEntry(dir, s.scratch.dir)
			s.forget(dir)
			if err != nil {
				return outcome{t: t, err: err}, true
			}
		}
	}
	switch {
	case s.opts.Force:
		t.reason = "forced"
	case corrupt != "":
		t.reason = "corrupt cache entry evicted: " + corrupt
	default:
		t.reason = s.missReason(t, t.key, digests)
	}
	s.emit(Event{Kind: Started, Node: t.n.ID, Stage: t.stage, Key: t.key, Reason: t.reason})
	o = s.execute(ctx, t)
	o.started = true
	if o.err != nil {
		h.lk.unlock(true)
		h.lk = nil
		return o, true
	}
	if !h.lk.share() { // lost: keep the outputs only if the entry is still there
		h.lk = nil
		l, err := waitEntryLock(ctx, dir, false, nil)
		if err != nil {
			return lockErr(err)
		}
		h.lk = l
		if _, err := os.Lstat(filepath.Join(dir, manifestName)); err != nil {
			return outcome{}, false
		}
	}
	return o, true
}
