//go:build !unix

package runs

// checkWritable cannot ask the system here: SQLite's own errors say it
// (and are not retried: Retryable).
func checkWritable(path, abs string) error { return nil }
