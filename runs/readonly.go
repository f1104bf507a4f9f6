package runs

import (
	"errors"
	"fmt"
)

// ErrReadOnlyDatabase is matched (errors.Is) by the error of Open and
// OpenWith when the results database cannot be written where it is: its
// file, its directory or its file system is read-only. The commands that
// only read use OpenReadOnly, which works there.
var ErrReadOnlyDatabase = errors.New("read-only results database")

// ReadOnlyError says why a results database cannot be written, in one
// line naming the file: "results.db: read-only (the directory . is not
// writable, and SQLite must create results.db-wal there): permission
// denied".
type ReadOnlyError struct {
	Path string // the database, as given
	Why  string // what is read-only
	Err  error  // the system's answer
}

func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("%s: read-only (%s): %v", e.Path, e.Why, e.Err)
}

func (e *ReadOnlyError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrReadOnlyDatabase) hold.
func (e *ReadOnlyError) Is(target error) bool { return target == ErrReadOnlyDatabase }
