//go:build !cgo

package runs

// Without cgo the SQLite driver is a stub whose every call fails: there are
// no SQLite errors to classify.

func sqliteInfra(err error) bool { return false }

func sqliteCantOpen(err error) bool { return false }

func sqliteReadOnly(err error) bool { return false }
