//go:build !unix

package pipeline

import "errors"

// ErrBusy is wrapped by the error of a Run whose WorkDir is locked by
// another runner. Without flock, workdirs are not locked.
var ErrBusy = errors.New("workdir busy")

func lockWorkDir(dir string) (unlock func(), err error) { return func() {}, nil }
