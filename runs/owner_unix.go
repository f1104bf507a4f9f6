//go:build unix

package runs

import (
	"errors"
	"syscall"
)

// pidAlive reports whether a process pid exists (EPERM: it does, as
// another user's).
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
