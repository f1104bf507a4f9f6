//go:build cgo

package runs

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

// sqliteInfra reports whether err is an SQLite error of the machine: the
// database busy or locked, full, an I/O error, a file it cannot open or
// write, out of memory, a lock protocol error.
func sqliteInfra(err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrFull, sqlite3.ErrIoErr,
		sqlite3.ErrCantOpen, sqlite3.ErrReadonly, sqlite3.ErrNomem, sqlite3.ErrProtocol:
		return true
	}
	return false
}

// sqliteCantOpen reports whether err says SQLite could not open the file
// as asked, or not for writing (a read-only file system).
func sqliteCantOpen(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrCantOpen || se.Code == sqlite3.ErrReadonly)
}

// sqliteReadOnly reports whether err says the database cannot be written
// or opened for writing at all (a read-only file, directory or file
// system): waiting does not change that.
func sqliteReadOnly(err error) bool { return sqliteCantOpen(err) }
