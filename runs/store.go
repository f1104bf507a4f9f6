package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers driver "sqlite3"
)

const (
	readerConns = 4
	queueLen    = 8192
)

// busyTimeout is how long SQLite's busy handler waits for a lock inside
// one attempt (tests shorten it to exercise the retries across attempts).
var busyTimeout = 10 * time.Second

// Store is a results database. It is safe for concurrent use. All writes go
// through one writer goroutine holding the only write connection; reads use
// a separate pool and see only committed data (call Flush first to see rows
// queued with Metric, Summary or Artifact).
type Store struct {
	path string
	w    *sql.DB // one connection, used only by the writer goroutine
	r    *sql.DB // read-only pool

	stmtMetric, stmtMetrics, stmtSummary, stmtArtifact *sql.Stmt
	args                                               []any // writer goroutine only

	ops  chan op
	done chan struct{} // closed when the writer goroutine has exited

	sendMu   sync.RWMutex // held shared while sending, exclusively to close
	closed   bool
	readOnly bool // OpenReadOnly: no writer goroutine, no write connection

	closeOnce sync.Once
	closeErr  error

	view    viewNames     // columns of the trials view (writer goroutine only)
	viewErr error         // a failed view refresh of the last batch (writer goroutine only)
	waitFor time.Duration // OpenOptions.Wait

	errMu   sync.Mutex
	err     error // first write error (sticky)
	dropped int64 // rows not written
}

// dsn builds a mattn/go-sqlite3 URI DSN for path with the given options.
func dsn(path string, opts url.Values) string {
	u := url.URL{Path: path}
	return "file:" + u.EscapedPath() + "?" + opts.Encode()
}

// ErrNoDatabase is wrapped by the error of OpenExisting when the file does
// not exist.
var ErrNoDatabase = errors.New("no such results database")

// OpenExisting is Open for commands that read results (results, repro): it
// refuses a path where no database file exists instead of creating an
// empty one, with an error wrapping ErrNoDatabase.
func OpenExisting(ctx context.Context, path string) (*Store, error) {
	return OpenExistingWith(ctx, path, OpenOptions{})
}

// OpenExistingWith is OpenExisting with options.
func OpenExistingWith(ctx context.Context, path string, o OpenOptions) (*Store, error) {
	if _, err := existing(path); err != nil {
		return nil, err
	}
	return OpenWith(ctx, path, o)
}

// ErrReadOnly is returned (wrapped) by the writing methods of a Store
// opened with OpenReadOnly.
var ErrReadOnly = errors.New("runs: store opened read-only")

// OpenReadOnly opens an existing database for commands that only read
// (runs, results, diff, export): nothing is written to the file or beside
// it, no lock is taken and no migration runs, so it works on read-only
// media and beside a runner that holds the write lock. It opens the file
// with mode=ro, and where SQLite cannot (a WAL database on a read-only file
// system whose -shm file it cannot create) as immutable, which is right
// only because nothing can write to such a file. A database of an older
// schema is migrated first when it is writable; otherwise it is an error
// that says so. Writing methods return errors wrapping ErrReadOnly.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	abs, err := existing(path)
	if err != nil {
		return nil, err
	}
	s, cur, err := openRO(ctx, abs, false)
	if err != nil {
		if !sqliteCantOpen(err) {
			return nil, fmt.Errorf("open results %s: %w", path, err)
		}
		if s, cur, err = openRO(ctx, abs, true); err != nil {
			return nil, fmt.Errorf("open results %s: %w", path, err)
		}
	}
	switch {
	case cur > len(migrations):
		s.closeDBs()
		return nil, fmt.Errorf("open results %s: database schema version %d is newer than this program's %d", path, cur, len(migrations))
	case cur < len(migrations):
		// An older schema: migrate it if we may write, then read.
		s.closeDBs()
		w, err := Open(ctx, abs)
		if err != nil {
			return nil, fmt.Errorf("open results %s: schema version %d is older than this program's %d and it cannot be migrated here: %w", path, cur, len(migrations), err)
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return OpenReadOnly(ctx, path)
	}
	return s, nil
}

// openRO opens the read pool of a read-only Store and reads the schema
// version (which makes SQLite open the file).
func openRO(ctx context.Context, abs string, immutable bool) (*Store, int, error) {
	v := url.Values{}
	v.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	v.Set("_query_only", "1")
	v.Set("mode", "ro")
	if immutable {
		v.Set("immutable", "1")
	}
	r, err := sql.Open("sqlite3", dsn(abs, v))
	if err != nil {
		return nil, 0, err
	}
	r.SetMaxOpenConns(readerConns)
	r.SetMaxIdleConns(readerConns)
	s := &Store{path: abs, r: r, readOnly: true}
	var cur int
	if err := r.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&cur); err != nil {
		s.closeDBs()
		return nil, 0, err
	}
	return s, cur, nil
}

// existing returns the absolute path of the database file at path, or an
// error wrapping ErrNoDatabase when there is none.
func existing(path string) (string, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("open results %s: %w", path, ErrNoDatabase)
	case err != nil:
		return "", fmt.Errorf("open results %s: %w", path, err)
	case fi.IsDir():
		return "", fmt.Errorf("open results %s: is a directory", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("open results %s: %w", path, err)
	}
	return abs, nil
}

// OpenOptions configures OpenWith.
type OpenOptions struct {
	// Wait is how long a write keeps trying while the database is locked
	// by another process or its disk is full (IsInfrastructure errors),
	// with growing pauses, before it fails; 0 means DefaultWait. It
	// bounds Open's migration too.
	Wait time.Duration
}

// Open opens (creating if needed, along with its parent directory) the
// results database at path and brings its schema up to date, with the
// default OpenOptions. A database it could not write (its file, its
// directory or its file system read-only) is refused at once with a
// *ReadOnlyError (errors.Is ErrReadOnlyDatabase): OpenReadOnly reads it.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, OpenOptions{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, o OpenOptions) (*Store, error) {
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o777); err != nil {
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	// A database that cannot be written fails here, at once, saying why:
	// SQLite would open it read-only and fail every write later (or say
	// "unable to open database file" of a file that exists).
	if err := checkWritable(path, abs); err != nil {
		return nil, err
	}
	// SQLite's busy handler waits up to the busy timeout inside one
	// attempt; retry (Wait) spans attempts.
	busy := min(busyTimeout.Milliseconds(), max(1, o.Wait.Milliseconds()))
	common := func() url.Values {
		v := url.Values{}
		v.Set("_busy_timeout", fmt.Sprint(busy))
		v.Set("_foreign_keys", "on")
		return v
	}
	wopts := common()
	wopts.Set("_journal_mode", "WAL")
	wopts.Set("_synchronous", "NORMAL")
	wopts.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite3", dsn(abs, wopts))
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{path: abs, w: w, waitFor: o.Wait}
	fail := func(err error) (*Store, error) {
		s.closeDBs()
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	if err := retry(ctx, s.waitFor, func() error { return migrate(ctx, w) }); err != nil {
		return fail(err)
	}
	if err := retry(ctx, s.waitFor, func() error { return s.openView(ctx) }); err != nil {
		return fail(err)
	}

	ropts := common()
	ropts.Set("_query_only", "1")
	r, err := sql.Open("sqlite3", dsn(abs, ropts))
	if err != nil {
		return fail(err)
	}
	r.SetMaxOpenConns(readerConns)
	r.SetMaxIdleConns(readerConns)
	s.r = r
	if err := r.PingContext(ctx); err != nil {
		return fail(err)
	}

	for _, p := range []struct {
		dst  **sql.Stmt
		text string
	}{
		{&s.stmtMetric, metricInsert(1)},
		{&s.stmtMetrics, metricInsert(metricChunk)},
		{&s.stmtSummary, `INSERT INTO summaries (run_id, trial, name, value, kind) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (run_id, trial, name) DO UPDATE SET value = excluded.value, kind = excluded.kind`},
		{&s.stmtArtifact, `INSERT INTO artifacts (run_id, trial, path, sha256, kind) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (run_id, trial, path) DO UPDATE SET sha256 = excluded.sha256, kind = excluded.kind`},
	} {
		st, err := w.PrepareContext(ctx, p.text)
		if err != nil {
			return fail(fmt.Errorf("prepare: %w", err))
		}
		*p.dst = st
	}

	s.ops = make(chan op, queueLen)
	s.done = make(chan struct{})
	go s.loop()
	return s, nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// DB returns the read-only connection pool, for ad-hoc SQL over the views
// series, summary, trial_params and trial_status. Do not close it.
func (s *Store) DB() *sql.DB { return s.r }

// Close commits everything queued, stops the writer and closes the
// database. It returns the first write error, if any (see Err). Calls
// after the first return the same result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.readOnly {
			s.closeErr = s.closeDBs()
			return
		}
		s.sendMu.Lock()
		s.closed = true
		s.sendMu.Unlock()
		reply := make(chan error, 1)
		select {
		case s.ops <- op{kind: opClose, reply: reply}:
		case <-s.done:
		}
		<-s.done
		s.closeErr = errors.Join(s.Err(), s.closeDBs())
	})
	return s.closeErr
}

func (s *Store) closeDBs() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.stmtMetric, s.stmtMetrics, s.stmtSummary, s.stmtArtifact} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close results %s: %w", s.path, err)
	}
	return nil
}

// Err returns the sticky write error: the first failure to write a queued
// row, with the number of rows lost so far, or nil. Once set it stays set,
// and Flush and Close return it.
func (s *Store) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.err == nil {
		return nil
	}
	return fmt.Errorf("results %s: %d row(s) not written; first error: %w", s.path, s.dropped, s.err)
}

func (s *Store) fail(rows int, err error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.err == nil {
		s.err = err
	}
	s.dropped += int64(rows)
}
