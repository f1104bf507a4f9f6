//go:build unix

package runs

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// checkWritable returns a *ReadOnlyError when the database at abs (path as
// given) cannot be written or created: a write to it could only fail, and
// retrying it for --db-wait would change nothing. It asks access(2), which
// answers for this process (root included: an immutable file or a
// read-only file system is refused to root too). SQLite in WAL mode writes
// the file and creates <db>-wal and <db>-shm beside it; their directory
// must be writable unless both exist and are writable.
func checkWritable(path, abs string) error {
	why := func(err error, what string) string {
		switch {
		case errors.Is(err, unix.EROFS):
			return "a read-only file system"
		case errors.Is(err, unix.EPERM):
			return what + " is immutable"
		}
		return what + " is not writable (file mode)"
	}
	dir := filepath.Dir(abs)
	if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
		if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil && !errors.Is(err, unix.ENOENT) {
			return &ReadOnlyError{Path: path, Why: why(err, "the directory "+dir) + ", and the database must be created there", Err: err}
		}
		return nil
	}
	if err := unix.Access(abs, unix.W_OK); err != nil {
		return &ReadOnlyError{Path: path, Why: why(err, "the file"), Err: err}
	}
	for _, side := range []string{abs + "-wal", abs + "-shm"} {
		if _, err := os.Stat(side); err != nil {
			if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
				return &ReadOnlyError{Path: path, Why: why(err, "the directory "+dir) + ", and SQLite must create " + filepath.Base(side) + " there", Err: err}
			}
			return nil
		}
		if err := unix.Access(side, unix.W_OK); err != nil {
			return &ReadOnlyError{Path: path, Why: why(err, filepath.Base(side)), Err: err}
		}
	}
	return nil
}
