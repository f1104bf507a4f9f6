package pipeline

import "sync"

// Lock is a held workdir lock (see LockWorkDir).
type Lock struct {
	dir    string
	mu     sync.Mutex
	unlock func()
}

// Dir returns the absolute path of the locked workdir.
func (l *Lock) Dir() string { return l.dir }

// Unlock releases the lock; later calls do nothing.
func (l *Lock) Unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unlock != nil {
		l.unlock()
		l.unlock = nil
	}
}

func (l *Lock) released() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.unlock == nil
}
