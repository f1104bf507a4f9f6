package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"goldstone/internal/atomicfile"
	"goldstone/internal/checkpoint"
	"goldstone/internal/fault"
)

// Options configures Plan and Run.
type Options struct {
	// WorkDir holds the cache (with its entries' locks), state and
	// temporary files; runners may share it. Required.
	WorkDir string
	// Jobs is the number of nodes run at the same time; 0 means
	// runtime.NumCPU().
	Jobs int
	// Workers is the IO.Workers hint given to each stage; 0 means
	// max(1, runtime.NumCPU()/Jobs).
	Workers int
	// Force runs every node even if its cache entry exists, and replaces
	// the entry.
	Force bool
	// FailFast cancels the whole run at the first failing node. Otherwise
	// only the failed node's dependents are skipped.
	FailFast bool
	// Observer receives events; nil discards them.
	Observer Observer
	// Lock, when set, is the caller's exclusive lock on WorkDir (see
	// LockWorkDir), checked to be held on WorkDir. Run takes no workdir
	// lock itself: runners share a workdir (the cache's entry locks).
	Lock *Lock
	// Checkpoint is when long stages save their state (IO.Checkpoint);
	// the zero value: every 10 minutes (checkpoint.DefaultInterval).
	Checkpoint checkpoint.Policy
	// KeepCheckpoints keeps the checkpoints of Resumable stages after
	// their nodes ended, each with one at the end of its budget, for a
	// longer run of the same stage to continue (see Checkpoint).
	KeepCheckpoints bool
	// KeepMark, with KeepCheckpoints, marks each kept checkpoint
	// directory with its owner (a file KeepMarkPrefix+KeepMark in it,
	// written when the node starts), so that the owner's end or a gc can
	// find and remove them (KeptCheckpoints, ReleaseKept). It must be a
	// valid file name.
	KeepMark string
	// Idle, when set, is called each time the scheduler has started every
	// node that is ready and job slots stay free: some nodes run, fewer
	// than Jobs, and the others wait for them (or none are left). The
	// running nodes may then use the cores of the free slots (free is
	// their number). It is called on the scheduler's goroutine, so it must
	// return quickly; it may be called again before anything changed.
	Idle func(free int)
}

// Observer receives a run's events. The runner serialises its calls: Event
// is never called concurrently by one Run, so it needs no locking of its
// own unless it is shared between runs. It should return quickly; stages
// wait for it.
type Observer interface {
	Event(Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Event calls f(e).
func (f ObserverFunc) Event(e Event) { f(e) }

// EventKind says what happened to a node.
type EventKind int

// Event kinds. A node gets Planned, then either Cached, Skipped, or Started
// followed by Done or Failed. Log and Progress come from a running stage.
// Corrupt comes before Started when the node's cache entry failed
// verification and was evicted; Reason says what was wrong.
const (
	Planned EventKind = iota + 1
	Started
	Cached
	Done
	Failed
	Skipped
	Log
	Progress
	Corrupt
)

var kindNames = [...]string{"", "planned", "started", "cached", "done", "failed", "skipped", "log", "progress", "corrupt"}

func (k EventKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event reports one step of a run.
type Event struct {
	Kind  EventKind
	Node  string   // node ID
	Stage string   // stage name
	Key   CacheKey // cache key; "" while unknown (upstream not yet run)
	// Err is the error of a Failed node, or why a node was Skipped.
	Err error
	// Outputs maps output names to paths in the cache (Cached, Done).
	Outputs map[string]string
	// Elapsed is the stage's run time (Done, Failed).
	Elapsed time.Duration
	// Reason explains Planned ("cached", "no cache entry", "params changed:
	// lr", "input ratings changed", "upstream ingest will run", "forced"),
	// Skipped ("upstream X failed", "cancelled") and interrupted Failed
	// nodes.
	Reason string
	// Msg is a Log line.
	Msg string
	// Count of Total units done (Progress).
	Count, Total int64
	// Values are the stage's latest figures (Progress from ProgressValues,
	// e.g. {"loss": 12.5}); nil otherwise. The observer must not keep or
	// change the map.
	Values map[string]float64
}

// PlanItem is one node of a plan, in topological order.
type PlanItem struct {
	Node, Stage string
	Key         CacheKey // "" if an upstream node must run first
	Cached      bool
	// Corrupt: the node's cache entry exists but failed verification (an
	// output's content no longer matches its digest); Run evicts it and
	// runs the node.
	Corrupt bool
	Reason  string
}

// Result holds the outcome of every node of a Run.
type Result struct {
	Nodes map[string]NodeResult
	Order []string // node IDs in topological order
}

// NodeResult is the outcome of one node.
type NodeResult struct {
	Status  EventKind // Cached, Done, Failed or Skipped
	Key     CacheKey
	Cached  bool
	Err     error // nil iff Status is Cached or Done
	Reason  string
	Outputs map[string]string // output name -> path in the cache
	Elapsed time.Duration
}

// ErrSkipped is wrapped by the error of a node that did not run because an
// upstream node failed or the run was cancelled.
var ErrSkipped = errors.New("skipped")

// taskState orders a node's progress; states >= stateOK are final.
type taskState int

const (
	stateWaiting taskState = iota
	stateRunning
	stateOK // done or cached
	stateFailed
	stateSkipped
)

type task struct {
	n      *Node
	index  int // in topological order
	stage  string
	params []byte
	deps   []*task // distinct upstream nodes in topological order
	next   []*task // distinct downstream nodes

	state       taskState
	key         CacheKey
	inDigests   map[string]string
	outDigests  map[string]string
	outPaths    map[string]string
	cached      bool
	reason      string
	err         error
	cause       string // node whose failure skipped this one
	interrupted bool
	elapsed     time.Duration

	failedInputs map[string]string // Tolerant nodes: input name -> upstream error
}

type extInfo struct {
	digest      string
	size, mtime int64
	dir         bool
	err         error
}

type session struct {
	opts          Options
	work          string
	jobs, workers int
	tasks         []*task
	byID          map[string]*task
	dig           *digester
	ext           map[string]*extInfo

	obsMu    sync.Mutex
	promMu   sync.Mutex
	promoted map[string]bool

	checkMu sync.Mutex
	checked map[string]entryCheck // cache entry dir -> verification result

	// Run only (Plan takes no locks): the runner's scratch directory
	// under WorkDir/tmp, and its locks on cache entries (entrylock.go).
	scratch *scratch
	lockMu  sync.Mutex
	locks   map[string]*heldEntry // cache entry dir -> this run's lock on it
}

// entryCheck is the memoised verification of one cache entry.
type entryCheck struct {
	digests map[string]string
	state   entryState
	problem string
}

// check verifies t's cache entry for key once per session: an entry is
// immutable once renamed into the cache, and a Run holds the entries it
// uses locked (shared), so no other runner removes one under it.
func (s *session) check(ctx context.Context, t *task, key CacheKey) (entryCheck, error) {
	dir := s.entryDir(t.stage, key)
	s.checkMu.Lock()
	c, ok := s.checked[dir]
	s.checkMu.Unlock()
	if ok {
		return c, nil
	}
	d, st, problem, err := checkEntry(ctx, dir, key, t.n.Outputs)
	if err != nil {
		return entryCheck{}, err
	}
	c = entryCheck{d, st, problem}
	s.checkMu.Lock()
	s.checked[dir] = c
	s.checkMu.Unlock()
	return c, nil
}

func (s *session) forget(dir string) {
	s.checkMu.Lock()
	delete(s.checked, dir)
	s.checkMu.Unlock()
}

func newSession(g *Graph, opts Options) (*session, error) {
	order, err := g.topo()
	if err != nil {
		return nil, err
	}
	if opts.WorkDir == "" {
		return nil, errors.New("pipeline: Options.WorkDir is empty")
	}
	work, err := filepath.Abs(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	s := &session{opts: opts, work: work, byID: map[string]*task{}, promoted: map[string]bool{}, checked: map[string]entryCheck{}}
	s.jobs = opts.Jobs
	if s.jobs <= 0 {
		s.jobs = runtime.NumCPU()
	}
	s.workers = opts.Workers
	if s.workers <= 0 {
		s.workers = max(1, runtime.NumCPU()/s.jobs)
	}
	for _, n := range order {
		p, err := CanonicalJSON(n.Stage.Params())
		if err != nil {
			return nil, fmt.Errorf("node %s: params: %w", n.ID, err)
		}
		t := &task{n: n, index: len(s.tasks), stage: n.Stage.Name(), params: p}
		seen := map[*task]bool{}
		for _, name := range keys(n.Inputs) {
			if r := n.Inputs[name]; !r.External() {
				if u := s.byID[r.Node]; !seen[u] {
					seen[u] = true
					t.deps = append(t.deps, u)
					u.next = append(u.next, t)
				}
			}
		}
		s.tasks = append(s.tasks, t)
		s.byID[n.ID] = t
	}
	return s, nil
}

// hashExternals digests every external input once, Jobs at a time. Only a
// cancelled ctx is an error; per-path errors are kept in s.ext.
func (s *session) hashExternals(ctx context.Context) error {
	s.ext = map[string]*extInfo{}
	var paths []string
	for _, t := range s.tasks {
		for _, r := range t.n.Inputs {
			if !r.External() {
				continue
			}
			abs, err := filepath.Abs(r.Path)
			if err != nil {
				abs = r.Path
			}
			if _, ok := s.ext[abs]; !ok {
				s.ext[abs] = &extInfo{}
				paths = append(paths, abs)
			}
		}
	}
	sem := make(chan struct{}, s.jobs)
	var wg sync.WaitGroup
	for _, p := range paths {
		sem <- struct{}{}
		wg.Add(1)
		go func(p string, e *extInfo) {
			defer func() { <-sem; wg.Done() }()
			fi, err := os.Stat(p)
			if err != nil {
				e.err = err
				return
			}
			e.size, e.mtime, e.dir = fi.Size(), fi.ModTime().UnixNano(), fi.IsDir()
			e.digest, e.err = s.dig.digest(ctx, p)
		}(p, s.ext[p])
	}
	wg.Wait()
	return ctx.Err()
}

func (s *session) extOf(r Ref) *extInfo {
	abs, err := filepath.Abs(r.Path)
	if err != nil {
		abs = r.Path
	}
	return s.ext[abs]
}

// upstream gives the output digests and paths of a finished node.
type upstream func(u *task) (digests, paths map[string]string, ok bool)

// inputs resolves t's input digests and paths. blocker is the first
// upstream node (in input name order) that has not finished. For a
// Tolerant node, the inputs of upstream nodes that failed (or were skipped
// after a failure) are left out of paths and stand in digests as
// "failed:" and the SHA-256 of the error text; their errors are in failed.
func (s *session) inputs(t *task, up upstream) (digests, paths map[string]string, blocker *task, err error) {
	digests, paths, _, blocker, err = s.inputsTolerant(t, up)
	return digests, paths, blocker, err
}

func (s *session) inputsTolerant(t *task, up upstream) (digests, paths, failed map[string]string, blocker *task, err error) {
	digests = make(map[string]string, len(t.n.Inputs))
	paths = make(map[string]string, len(t.n.Inputs))
	for _, name := range keys(t.n.Inputs) {
		r := t.n.Inputs[name]
		if r.External() {
			e := s.extOf(r)
			if e.err != nil {
				return nil, nil, nil, nil, fmt.Errorf("input %s: digest %s: %w", name, r.Path, e.err)
			}
			digests[name] = e.digest
			paths[name], _ = filepath.Abs(r.Path)
			continue
		}
		u := s.byID[r.Node]
		d, p, ok := up(u)
		if !ok {
			if msg, bad := s.upstreamFailure(u); t.n.Tolerant && bad {
				if failed == nil {
					failed = map[string]string{}
				}
				failed[name] = msg
				sum := sha256.Sum256([]byte(msg))
				digests[name] = "failed:" + hex.EncodeToString(sum[:])
				continue
			}
			return nil, nil, nil, u, nil
		}
		digests[name], paths[name] = d[r.Output], p[r.Output]
	}
	return digests, paths, failed, nil, nil
}

// upstreamFailure says whether u ended without outputs for a reason of its
// own or of its upstream (not an interruption), and gives the error text:
// u's own, or for a node skipped after a failure "NODE: error" of the node
// that failed.
func (s *session) upstreamFailure(u *task) (string, bool) {
	switch {
	case u.state == stateFailed && !u.interrupted:
		return u.err.Error(), true
	case u.state == stateSkipped && u.cause != "":
		if c := s.byID[u.cause]; c != nil && c.err != nil {
			return u.cause + ": " + c.err.Error(), true
		}
		return u.err.Error(), true
	}
	return "", false
}

func (s *session) keyOf(t *task, digests map[string]string) CacheKey {
	return key(t.stage, t.n.Stage.Version(), t.params, digests, t.n.Outputs)
}

func (s *session) outPaths(t *task, key CacheKey) map[string]string {
	dir := s.entryDir(t.stage, key)
	m := make(map[string]string, len(t.n.Outputs))
	for _, o := range t.n.Outputs {
		m[o] = filepath.Join(dir, o)
	}
	return m
}

// missReason explains why t, with a known key and no cache entry, must run.
func (s *session) missReason(t *task, key CacheKey, digests map[string]string) string {
	rec := s.loadRecord(t.n.ID)
	if rec == nil || rec.Key == key {
		return "no cache entry"
	}
	rs := changeReasons(rec, t.stage, t.n.Stage.Version(), t.params, digests)
	if len(rs) == 0 {
		return "no cache entry"
	}
	out := rs[0]
	for _, r := range rs[1:] {
		out += "; " + r
	}
	return out
}

// plan decides, in topological order, which nodes are cached. Per-node
// errors (unreadable external input) are returned joined, with the items.
func (s *session) plan(ctx context.Context) ([]PlanItem, error) {
	type res struct{ d, p map[string]string }
	done := map[*task]res{}
	up := func(u *task) (map[string]string, map[string]string, bool) {
		r, ok := done[u]
		return r.d, r.p, ok
	}
	var errs []error
	items := make([]PlanItem, 0, len(s.tasks))
	for _, t := range s.tasks {
		if err := ctx.Err(); err != nil {
			return nil, err // a plan of many nodes stops at once on Ctrl-C
		}
		it := PlanItem{Node: t.n.ID, Stage: t.stage}
		digests, _, blocker, err := s.inputs(t, up)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("node %s: %w", t.n.ID, err))
			it.Reason = "error: " + err.Error()
		case s.opts.Force:
			if blocker == nil {
				it.Key = s.keyOf(t, digests)
			}
			it.Reason = "forced"
		case blocker != nil:
			it.Reason = "upstream " + blocker.n.ID + " will run"
		case !s.share(t, s.keyOf(t, digests)):
			it.Key, it.Reason = s.keyOf(t, digests), "being written by another runner"
		default:
			it.Key = s.keyOf(t, digests)
			c, err := s.check(ctx, t, it.Key)
			if err != nil {
				return nil, err
			}
			switch c.state {
			case entryOK:
				it.Cached, it.Reason = true, "cached"
				done[t] = res{c.digests, s.outPaths(t, it.Key)}
			case entryCorrupt:
				it.Corrupt, it.Reason = true, "corrupt: "+c.problem
			default:
				it.Reason = s.missReason(t, it.Key, digests)
			}
		}
		items = append(items, it)
	}
	return items, errors.Join(errs...)
}

// Plan validates g and reports, in topological order, which nodes Run would
// take from the cache and why the others would run. It reads the cache and
// state but takes no lock; it may update the digest memo.
func Plan(ctx context.Context, g *Graph, opts Options) ([]PlanItem, error) {
	s, err := newSession(g, opts)
	if err != nil {
		return nil, err
	}
	if s.dig, err = loadDigester(filepath.Join(s.work, "state", "digests.json")); err != nil {
		return nil, err
	}
	if err := s.hashExternals(ctx); err != nil {
		return nil, err
	}
	items, err := s.plan(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if err := s.dig.save(); err != nil {
		return nil, err
	}
	return items, nil
}

func (s *session) emit(e Event) {
	if s.opts.Observer == nil {
		return
	}
	s.obsMu.Lock()
	defer s.obsMu.Unlock()
	s.opts.Observer.Event(e)
}

// outcome is what a task's goroutine reports to the scheduler.
type outcome struct {
	t          *task
	outDigests map[string]string
	err        error
	elapsed    time.Duration
	cached     bool // a sound cache entry: not run
	started    bool // the stage ran (err is its failure); else err is the eviction's
	requeue    bool // cancelled while verifying the cache entry: not started
}

// Run validates g and runs its nodes, each as soon as its inputs are ready
// and at most opts.Jobs at a time; nodes with a trusted cache entry are not
// run. Any number of Runs (in any processes) may share WorkDir: each builds
// in its own scratch directory under WorkDir/tmp, holds the cache entries
// it uses locked shared until it returns, and computes an entry under its
// exclusive lock, so that a node two Runs need is computed once and read
// by the other (see entrylock.go).
//
// A failing node's dependents are skipped and the other nodes go on, unless
// opts.FailFast cancels the run. Once scheduling has begun the Result covers
// every node, even when the error is non-nil; it is nil only for errors
// before that (invalid graph, ctx cancelled while hashing
// external inputs). The error is ctx.Err() if ctx was cancelled, otherwise
// the join of the failed nodes' errors, each naming its node.
func Run(ctx context.Context, g *Graph, opts Options) (*Result, error) {
	s, err := newSession(g, opts)
	if err != nil {
		return nil, err
	}
	if opts.Lock != nil {
		if opts.Lock.dir != s.work {
			return nil, fmt.Errorf("pipeline: Options.Lock holds %s, not the workdir %s", opts.Lock.dir, s.work)
		}
		if opts.Lock.released() {
			return nil, fmt.Errorf("pipeline: Options.Lock on %s was already released", s.work)
		}
	}
	if s.scratch, err = newScratch(s.work); err != nil {
		return nil, fmt.Errorf("pipeline: scratch directory: %w", err)
	}
	defer s.scratch.release()
	s.locks = map[string]*heldEntry{}
	defer s.unlockAll()
	if s.dig, err = loadDigester(filepath.Join(s.work, "state", "digests.json")); err != nil {
		return nil, err
	}
	if err := s.hashExternals(ctx); err != nil {
		return nil, err
	}
	items, perr := s.plan(ctx) // per-node errors resurface below as failures
	if perr != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	for i, it := range items {
		s.emit(Event{Kind: Planned, Node: it.Node, Stage: it.Stage, Key: it.Key, Reason: it.Reason})
		s.tasks[i].reason = it.Reason
	}

	errs := s.loop(ctx)
	if err := s.dig.save(); err != nil {
		errs = append(errs, err)
	}

	res := &Result{Nodes: make(map[string]NodeResult, len(s.tasks))}
	for _, t := range s.tasks {
		nr := NodeResult{Key: t.key, Cached: t.cached, Err: t.err, Reason: t.reason, Outputs: t.outPaths, Elapsed: t.elapsed}
		switch t.state {
		case stateOK:
			nr.Status = Done
			if t.cached {
				nr.Status = Cached
			}
		case stateFailed:
			nr.Status = Failed
		default:
			nr.Status = Skipped
		}
		res.Nodes[t.n.ID] = nr
		res.Order = append(res.Order, t.n.ID)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, errors.Join(errs...)
}

// depsOK reports whether t may start: every upstream node is done, or, for
// a Tolerant node, every upstream node is done or failed for a reason other
// than an interruption.
func (s *session) depsOK(t *task) bool {
	for _, u := range t.deps {
		if u.state == stateOK {
			continue
		}
		if _, bad := s.upstreamFailure(u); t.n.Tolerant && bad {
			continue
		}
		return false
	}
	return true
}

// failedUpstream returns the node whose failure makes t impossible, or "".
// An interrupted upstream does not count: t is then cancelled instead.
func (s *session) failedUpstream(t *task) string {
	for _, u := range t.deps {
		switch {
		case u.state == stateFailed && !u.interrupted:
			return u.n.ID
		case u.state == stateSkipped && u.cause != "":
			return u.cause
		}
	}
	return ""
}

func (s *session) skip(t *task, reason, cause string) {
	t.state, t.reason, t.cause = stateSkipped, reason, cause
	t.err = fmt.Errorf("%w: %s", ErrSkipped, reason)
	s.emit(Event{Kind: Skipped, Node: t.n.ID, Stage: t.stage, Err: t.err, Reason: reason})
}

// record saves t's key as the last one for its ID, unless it already is.
func (s *session) record(t *task) error {
	if last := s.loadRecord(t.n.ID); last != nil && last.Key == t.key {
		return nil
	}
	err := s.saveRecord(&nodeRecord{
		ID: t.n.ID, Stage: t.stage, Version: t.n.Stage.Version(), Key: t.key,
		Params: t.params, Inputs: t.inDigests, Outputs: t.outDigests, Updated: time.Now().UTC(),
	})
	if err != nil {
		return fmt.Errorf("node %s: save state: %w", t.n.ID, err)
	}
	return nil
}

// execute runs t's stage in a fresh temporary directory and promotes the
// result into the cache. Nothing is promoted unless the stage returned nil,
// ctx is not done and every declared output exists.
func (s *session) execute(ctx context.Context, t *task) (o outcome) {
	o.t = t
	start := time.Now()
	defer func() { o.elapsed = time.Since(start) }()
	tmp, err := atomicfile.MkdirTemp(s.scratch.dir, sanitizeID(t.n.ID)+"-*")
	if err != nil {
		o.err = err
		return o
	}
	defer os.RemoveAll(tmp) // no-op once renamed
	io := &IO{
		node: t.n.ID, stage: t.stage, key: t.key,
		inputs: map[string]string{}, outputs: map[string]string{},
		workers: s.workers, emit: s.emit, failed: t.failedInputs,
	}
	if io.ckpt, o.err = s.checkpointOf(t); o.err != nil {
		return o
	}
	if s.opts.Force {
		io.ckpt.Remove() // forced: the node runs from its start
	}
	if o.err = io.ckpt.mark(s.opts.KeepMark); o.err != nil {
		return o
	}
	for name, r := range t.n.Inputs {
		if _, bad := t.failedInputs[name]; bad {
			continue
		}
		if r.External() {
			io.inputs[name], _ = filepath.Abs(r.Path)
		} else {
			io.inputs[name] = s.byID[r.Node].outPaths[r.Output]
		}
	}
	for _, name := range t.n.Outputs {
		io.outputs[name] = filepath.Join(tmp, name)
	}
	fault.Point("start:" + t.stage)
	if o.err = runStage(ctx, t.n.Stage, io); o.err != nil {
		if ctx.Err() == nil {
			io.ckpt.ended(true) // the node ended: failed
		}
		return o
	}
	if o.err = ctx.Err(); o.err != nil {
		return o
	}
	if o.err = s.checkExternals(t); o.err != nil {
		return o
	}
	digests := make(map[string]string, len(t.n.Outputs))
	for _, name := range t.n.Outputs {
		if _, err := os.Lstat(io.outputs[name]); err != nil {
			o.err = fmt.Errorf("stage did not write output %q", name)
			return o
		}
		if digests[name], o.err = Digest(ctx, io.outputs[name]); o.err != nil {
			o.err = fmt.Errorf("digest output %q: %w", name, o.err)
			return o
		}
	}
	m := &manifest{
		Key: t.key, Stage: t.stage, Version: t.n.Stage.Version(), Params: t.params,
		Inputs: t.inDigests, Outputs: digests, Node: t.n.ID, Created: time.Now().UTC(),
	}
	if o.err = writeManifest(tmp, m); o.err != nil {
		o.err = fmt.Errorf("write manifest: %w", o.err)
		return o
	}
	fault.Point("promote:" + t.stage)
	final := s.entryDir(t.stage, t.key)
	s.promMu.Lock()
	replace := s.opts.Force && !s.promoted[final]
	existing, err := promote(ctx, tmp, final, t.key, t.n.Outputs, replace)
	if err == nil {
		s.promoted[final] = true
	}
	s.promMu.Unlock()
	if err != nil {
		o.err = err
		return o
	}
	fault.Point("promoted:" + t.stage)
	io.ckpt.ended(false) // the node ended: its outputs are in the cache
	if existing != nil {
		digests = existing
	}
	o.outDigests = digests
	return o
}

func runStage(ctx context.Context, st Stage, io *IO) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return st.Run(ctx, io)
}

// checkExternals fails if an external input file changed while t ran, since
// its outputs would not match its key.
func (s *session) checkExternals(t *task) error {
	for _, name := range keys(t.n.Inputs) {
		r := t.n.Inputs[name]
		if !r.External() {
			continue
		}
		e := s.extOf(r)
		if e.dir {
			continue
		}
		fi, err := os.Stat(r.Path)
		if err != nil || fi.Size() != e.size || fi.ModTime().UnixNano() != e.mtime {
			return fmt.Errorf("external input %s (%s) changed while the node ran", name, r.Path)
		}
	}
	return nil
}
