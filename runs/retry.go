package runs

import (
	"context"
	"errors"
	"syscall"
	"time"
)

// DefaultWait is how long a write keeps retrying while the database is
// locked by another process, or its disk is full, before it gives up
// (OpenOptions.Wait).
const DefaultWait = 5 * time.Minute

// IsInfrastructure reports whether err comes from the machine rather than
// from the data or the code: the database busy or locked by another
// process, a full disk or quota, an I/O error, a file system that became
// read-only or a database file that cannot be opened. Such an error says
// nothing about a trial: a runner ends the trial "interrupted", so that
// the same command resumes it once the machine is fine again, and records
// it from the cache without retraining.
func IsInfrastructure(err error) bool {
	if err == nil {
		return false
	}
	if sqliteInfra(err) || errors.Is(err, ErrReadOnlyDatabase) {
		return true
	}
	for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EROFS, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Retryable reports whether a write that failed with err may succeed if
// tried again: an IsInfrastructure error that time can cure (a lock, a
// full disk, an I/O error), not one of a database that cannot be written
// at all (SQLITE_READONLY, SQLITE_CANTOPEN, EROFS: a read-only file,
// directory or file system, which no wait changes). Such an error is still
// IsInfrastructure: it ends a trial interrupted, never failed.
func Retryable(err error) bool {
	return IsInfrastructure(err) && !sqliteReadOnly(err) && !errors.Is(err, syscall.EROFS) && !errors.Is(err, ErrReadOnlyDatabase)
}

// retry calls attempt until it succeeds, fails with an error that is not
// Retryable, ctx is done, or wait has passed since the first call; it
// sleeps between attempts, from 50 ms doubling to 5 s. It returns the last
// error. A database lock shorter than wait therefore delays a write but
// never fails it; a read-only database fails it at once.
func retry(ctx context.Context, wait time.Duration, attempt func() error) error {
	start := time.Now()
	pause := 50 * time.Millisecond
	for {
		err := attempt()
		if err == nil || !Retryable(err) || ctx.Err() != nil || time.Since(start)+pause > wait {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, 5*time.Second)
	}
}
