//go:build !unix

package runs

import "os"

// pidAlive reports whether a process pid exists, where os.FindProcess
// can tell (Windows opens the process).
func pidAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
