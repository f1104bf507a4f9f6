//go:build !unix

package pipeline

// Without flock, entries are not locked: one runner per workdir.

type entryLock struct{ excl bool }

func tryEntryLock(entryDir string, excl bool) (*entryLock, bool, error) {
	return &entryLock{excl: excl}, true, nil
}

func (l *entryLock) share() bool       { l.excl = false; return true }
func (l *entryLock) unlock(bool)       {}
func lockDir(string) (func(), error)   { return func() {}, nil }
func tryLockDir(string) (func(), bool) { return func() {}, true }
