package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"goldstone/internal/atomicfile"
)

// Runners share a workdir (and its content-addressed cache) through locks
// on single cache entries, as Go's build cache is shared: no lock covers
// the whole workdir.
//
// Every cache entry WorkDir/cache/<stage>/<key>/ has a lock file beside it,
// <key>.lock, locked with flock(2), so that the OS releases it when its
// holder exits, however it exits (a crashed holder leaves no stale lock).
// A Run holds the lock shared on every entry it uses, from the moment it
// first looks at the entry until it returns, and exclusive while it
// computes (or evicts) the entry; gc and Verify's eviction remove an entry
// only under the exclusive lock, taken without waiting (RemoveEntry), so
// an entry a live run uses, or one being written, is never removed. A
// runner that needs an entry another runner is computing waits for the
// exclusive lock to go, then reads the finished entry instead of computing
// it again. Locks are taken without blocking and retried (entryPoll), so a
// wait ends when the run's context is cancelled.

// entryPoll is how long a runner waits between two tries of an entry lock
// held by another runner.
var entryPoll = 20 * time.Millisecond

// scratchGrace: a scratch directory (WorkDir/tmp/run-*) younger than this
// is never removed as stale: its runner locks it right after creating it.
const scratchGrace = time.Minute

// ErrEntryInUse is returned (wrapped) by RemoveEntry for an entry a live
// runner uses or is writing.
var ErrEntryInUse = errors.New("cache entry in use by a running runner")

func entryLockPath(entryDir string) string { return entryDir + ".lock" }

// waitEntryLock takes entryDir's lock (shared, or exclusive when excl),
// retrying every entryPoll while another runner holds it; waiting is
// called once, before the first wait. Only a cancelled ctx (or a lock
// file that cannot be created) is an error.
func waitEntryLock(ctx context.Context, entryDir string, excl bool, waiting func()) (*entryLock, error) {
	told := false
	for {
		l, ok, err := tryEntryLock(entryDir, excl)
		if err != nil || ok {
			return l, err
		}
		if !told && waiting != nil {
			waiting()
			told = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(entryPoll):
		}
	}
}

// RemoveEntry removes the cache entry dir of the workdir workDir (a
// directory WorkDir/cache/<stage>/<key>) in one step, and its lock file,
// unless a runner holds its lock: then it removes nothing and returns an
// error wrapping ErrEntryInUse. The entry is renamed into a scratch
// directory of the caller under WorkDir/tmp before it is deleted, so the
// cache never holds half an entry. A missing entry is removed already:
// the error wraps fs.ErrNotExist.
func RemoveEntry(workDir, dir string) error {
	work, err := filepath.Abs(workDir)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(dir); err != nil {
		return err
	}
	l, ok, err := tryEntryLock(dir, true)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("remove %s: %w", dir, ErrEntryInUse)
	}
	defer l.unlock(true)
	sc, err := newScratch(work)
	if err != nil {
		return err
	}
	defer sc.release()
	return evictEntry(dir, sc.dir)
}

// scratch is one process's own directory under WorkDir/tmp, where it builds
// cache entries before their rename into the cache: each runner has its
// own, so runners sharing a workdir never clear each other's files. It is
// locked (flock on the directory) while its process lives.
type scratch struct {
	dir    string
	unlock func()
}

// newScratch clears the scratch directories under work/tmp that no live
// process holds (and other leftovers older than scratchGrace), then makes
// and locks this process's own.
func newScratch(work string) (*scratch, error) {
	tmp := filepath.Join(work, "tmp")
	if err := os.MkdirAll(tmp, 0o777); err != nil {
		return nil, err
	}
	clearStaleScratch(tmp)
	dir, err := atomicfile.MkdirTemp(tmp, "run-")
	if err != nil {
		return nil, err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &scratch{dir: dir, unlock: unlock}, nil
}

// release removes the scratch directory and its lock.
func (s *scratch) release() {
	os.RemoveAll(s.dir)
	s.unlock()
}

// clearStaleScratch removes what crashed processes left under tmp: a
// scratch directory (run-*) whose lock no process holds, once older than
// scratchGrace (its runner locks it right after creating it), and
// anything else (a half-built entry of an older layout, which no process
// locks). Its errors only leave files for a later run to remove.
func clearStaleScratch(tmp string) {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, de := range ents {
		p := filepath.Join(tmp, de.Name())
		if !strings.HasPrefix(de.Name(), "run-") || !de.IsDir() {
			os.RemoveAll(p)
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil || time.Since(fi.ModTime()) < scratchGrace {
			continue
		}
		unlock, ok := tryLockDir(p)
		if !ok {
			continue // a live runner's
		}
		os.RemoveAll(p)
		unlock()
	}
}
