//go:build !unix

package pipeline

import (
	"errors"
	"os"
	"path/filepath"
)

// ErrBusy is wrapped by the error of LockWorkDir when another process
// holds the workdir's lock. Without flock, workdirs are not locked.
var ErrBusy = errors.New("workdir busy")

func lockWorkDir(dir string) (unlock func(), err error) { return func() {}, nil }

// LockWorkDir creates dir if needed; without flock it locks nothing.
func LockWorkDir(dir string) (*Lock, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o777); err != nil {
		return nil, err
	}
	return &Lock{dir: abs, unlock: func() {}}, nil
}
