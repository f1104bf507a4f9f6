//go:build unix

package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrBusy is wrapped by the error of LockWorkDir when another process
// holds the workdir's lock (a repro's scratch workdir).
var ErrBusy = errors.New("workdir busy")

// LockWorkDir creates dir if needed and takes its exclusive lock: an error
// wrapping ErrBusy means another process holds it. Run takes no such lock
// (runners share a workdir through the cache's entry locks); a caller that
// wants a workdir to itself (a repro's scratch) takes it, and may pass it
// in Options.Lock. The lock is released by Unlock
// or when the process exits, however it exits.
func LockWorkDir(dir string) (*Lock, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o777); err != nil {
		return nil, fmt.Errorf("create workdir: %w", err)
	}
	unlock, err := lockWorkDir(abs)
	if err != nil {
		return nil, err
	}
	return &Lock{dir: abs, unlock: unlock}, nil
}

// lockWorkDir takes a non-blocking exclusive flock on dir/lock and writes the
// pid into it. The lock is released by the returned func or at exit.
func lockWorkDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("lock workdir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, fmt.Errorf("workdir %s is in use by another runner (pid %d): %w", dir, pid, ErrBusy)
		}
		return nil, fmt.Errorf("lock workdir %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
