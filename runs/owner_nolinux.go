//go:build !linux

package runs

import "errors"

// procStart cannot tell when a process started on this OS: owners are
// told apart by their pid alone (pidAlive), so a recycled pid passes for
// the owner.
func procStart(int) (string, bool, error) {
	return "", false, errors.ErrUnsupported
}
