//go:build unix

package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// entryLock is a held flock on a cache entry's lock file.
type entryLock struct {
	f    *os.File
	path string
	excl bool
}

// tryEntryLock takes entryDir's lock without waiting: ok is false when
// another holder's lock conflicts. The lock file is created if needed. A
// lock taken on a file that was removed (or replaced) meanwhile is
// dropped and taken again, so that removing a lock file under its
// exclusive lock (RemoveEntry) is safe.
func tryEntryLock(entryDir string, excl bool) (l *entryLock, ok bool, err error) {
	path := entryLockPath(entryDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, false, fmt.Errorf("lock cache entry: %w", err)
	}
	how := syscall.LOCK_SH
	if excl {
		how = syscall.LOCK_EX
	}
	for range 100 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			return nil, false, fmt.Errorf("lock cache entry: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("lock cache entry %s: %w", path, err)
		}
		if sameFile(f, path) {
			return &entryLock{f: f, path: path, excl: excl}, true, nil
		}
		f.Close() // removed by its last exclusive holder: lock the new one
	}
	return nil, false, fmt.Errorf("lock cache entry %s: its lock file keeps being replaced", path)
}

func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// share turns an exclusive lock into a shared one. flock's conversion
// may let another process take the lock in between: it returns false when
// that happened, and the lock is then released.
func (l *entryLock) share() bool {
	if err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		l.unlock(false)
		return false
	}
	l.excl = false
	return true
}

// unlock releases the lock; with remove (an exclusive lock only), the
// lock file is removed first, when its entry is gone.
func (l *entryLock) unlock(remove bool) {
	if l == nil || l.f == nil {
		return
	}
	if remove && l.excl {
		if _, err := os.Lstat(l.path[:len(l.path)-len(".lock")]); errors.Is(err, os.ErrNotExist) {
			os.Remove(l.path)
		}
	}
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// lockDir takes an exclusive flock on the directory dir (a scratch
// directory), held until unlock or the process's exit.
func lockDir(dir string) (unlock func(), err error) {
	unlock, ok := tryLockDir(dir)
	if !ok {
		return nil, fmt.Errorf("lock %s: held by another process", dir)
	}
	return unlock, nil
}

func tryLockDir(dir string) (unlock func(), ok bool) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, true
}
