package runs

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"goldstone/internal/fault"
)

const (
	maxBatch = 5000                   // rows per transaction at most
	maxDelay = 200 * time.Millisecond // a queued row waits at most this long
)

type opKind uint8

const (
	opMetric opKind = iota
	opSummary
	opArtifact
	opFlush
	opSync
	opClose
)

// op is one request to the writer goroutine. Rows (metric, summary,
// artifact) are batched; the other kinds first commit the pending batch.
type op struct {
	kind  opKind
	run   int64
	step  int
	value float64
	trial string
	name  string // metric/summary name, artifact path
	sha   string
	akind string

	sync  func() error // opSync: runs the caller's transaction (see do)
	reply chan error
}

// Metric queues the value of metric name at step for a trial of a run.
// Re-recording the same (run, trial, name, step) replaces the value. Write
// errors surface from Flush, Close and Err.
func (s *Store) Metric(run int64, trial, name string, step int, v float64) {
	s.enqueue(op{kind: opMetric, run: run, trial: trial, name: name, step: step, value: v})
}

// Summary queues the final value of name for a trial of a run, replacing
// any earlier value for the same key.
func (s *Store) Summary(run int64, trial, name string, v float64) {
	s.enqueue(op{kind: opSummary, run: run, trial: trial, name: name, value: v})
}

// Artifact queues a record of a file written by a run (trial "" for
// run-level files), replacing any earlier record for the same path.
func (s *Store) Artifact(run int64, trial, path, sha256, kind string) {
	s.enqueue(op{kind: opArtifact, run: run, trial: trial, name: path, sha: sha256, akind: kind})
}

// Flush waits until every row queued before the call is committed and
// returns the sticky write error (see Err). A ctx that is already done
// returns its error and flushes nothing, as every write does (see do):
// select alone would pick at random between a free queue slot and ctx.
func (s *Store) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	reply := make(chan error, 1)
	if err := s.send(ctx, op{kind: opFlush, reply: reply}); err != nil {
		return err
	}
	return s.wait(ctx, reply)
}

func (s *Store) enqueue(o op) {
	if err := s.send(context.Background(), o); err != nil {
		s.fail(1, err)
	}
}

// send hands o to the writer. It never blocks past ctx or the writer's exit.
func (s *Store) send(ctx context.Context, o op) error {
	if s.readOnly {
		return ErrReadOnly
	}
	s.sendMu.RLock()
	defer s.sendMu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	select {
	case s.ops <- o:
		return nil
	case <-s.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) wait(ctx context.Context, reply <-chan error) error {
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		select {
		case err := <-reply:
			return err
		default:
			return ErrClosed
		}
	}
}

// do runs fn in its own transaction on the writer goroutine, after the rows
// queued before it are committed, and returns its error.
func (s *Store) do(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	reply := make(chan error, 1)
	// The writer goroutine runs the closure: ctx stays with the call that
	// owns it instead of travelling in the op.
	sync := func() error { return s.runSync(ctx, fn) }
	if err := s.send(ctx, op{kind: opSync, sync: sync, reply: reply}); err != nil {
		return err
	}
	return s.wait(ctx, reply)
}

// loop is the writer goroutine.
func (s *Store) loop() {
	defer close(s.done)
	defer func() {
		if r := recover(); r != nil {
			s.fail(0, fmt.Errorf("writer stopped: %v", r))
		}
	}()
	batch := make([]op, 0, maxBatch)
	timer := time.NewTimer(maxDelay)
	timer.Stop()
	armed := false
	commit := func() {
		if armed {
			timer.Stop()
			armed = false
		}
		if len(batch) > 0 {
			s.writeBatch(batch)
			clear(batch)
			batch = batch[:0]
		}
	}
	for {
		select {
		case o := <-s.ops:
			switch o.kind {
			case opMetric, opSummary, opArtifact:
				batch = append(batch, o)
				if len(batch) >= maxBatch {
					commit()
				} else if !armed {
					timer.Reset(maxDelay)
					armed = true
				}
			case opFlush:
				commit()
				o.reply <- s.Err()
			case opSync:
				commit()
				o.reply <- o.sync()
			case opClose:
				commit()
				o.reply <- nil
				return
			}
		case <-timer.C:
			armed = false
			commit()
		}
	}
}

// runSync runs fn in a transaction on the writer goroutine; a transaction
// that fails for a reason of the machine (IsInfrastructure: the database
// locked by another process, a full disk) is rolled back and run again, for
// up to s.wait.
func (s *Store) runSync(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return retry(ctx, s.waitFor, func() error {
		saved := s.view
		err := s.syncOnce(ctx, fn)
		if err != nil {
			s.view = saved // the view refresh, if any, was rolled back
		}
		return err
	})
}

func (s *Store) syncOnce(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(ctx, tx); err != nil {
		return err
	}
	fault.Point("runs:sync")
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// metricChunk is the number of metric rows per multi-row INSERT; one
// statement per chunk instead of per row roughly halves the per-row cost.
const metricChunk = 64

// metricInsert returns the metric upsert for n rows.
func metricInsert(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO metrics (run_id, trial, name, step, value, kind) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?)")
	}
	b.WriteString(" ON CONFLICT (run_id, trial, name, step) DO UPDATE SET value = excluded.value, kind = excluded.kind")
	return b.String()
}

// writeBatch writes rows in one transaction. A row that fails (e.g. an
// unknown run id) is dropped and recorded; the others are still committed.
// A batch that fails for a reason of the machine (IsInfrastructure: the
// database locked by another process, a full disk) is rolled back and
// written again, for up to s.wait; only then are its rows lost. Metric rows
// keep their relative order, so the last of several rows with the same key
// wins; the tables are independent, so they are written one after the
// other.
func (s *Store) writeBatch(batch []op) {
	var rowErrs []error
	err := retry(context.Background(), s.waitFor, func() error {
		saved := s.view
		var err error
		s.viewErr = nil
		rowErrs, err = s.batchOnce(batch)
		if err != nil {
			s.view = saved
		}
		return err
	})
	if err != nil {
		s.fail(len(batch), err)
		return
	}
	for _, e := range rowErrs {
		s.fail(1, e)
	}
	if s.viewErr != nil {
		s.fail(0, s.viewErr)
	}
}

// batchOnce tries to write batch in one transaction. It returns the
// errors of the rows it dropped, and an error when the transaction failed
// (nothing of it is committed then): its begin or commit, a row failing
// for a reason of the machine, or the trials view.
func (s *Store) batchOnce(batch []op) (rowErrs []error, err error) {
	ctx := context.Background()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin batch of %d rows: %w", len(batch), err)
	}
	defer tx.Rollback()
	b := &batchTx{s: s, tx: tx, stmts: map[*sql.Stmt]*sql.Stmt{}}
	b.metrics(ctx, batch)
	newMetric := false
	for i := range batch {
		if batch[i].kind != opMetric {
			if b.one(ctx, &batch[i]) && batch[i].kind == opSummary && !s.view.metrics[batch[i].name] {
				newMetric = true
			}
		}
	}
	if b.infra != nil {
		return nil, fmt.Errorf("batch of %d rows: %w", len(batch), b.infra)
	}
	if newMetric {
		if err := refreshTrialsView(ctx, tx, &s.view); IsInfrastructure(err) {
			return nil, err
		} else if err != nil {
			s.viewErr = err // the rows are committed; the view lags
		}
	}
	fault.Point("runs:batch")
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit batch of %d rows: %w", len(batch), err)
	}
	return b.rowErrs, nil
}

// batchTx is one attempt at writing a batch: its transaction, its prepared
// statements, the rows it dropped and the error of the machine that
// aborts it.
type batchTx struct {
	s       *Store
	tx      *sql.Tx
	stmts   map[*sql.Stmt]*sql.Stmt
	infra   error // a row's error that aborts the transaction
	rowErrs []error
}

// stmt returns st in the transaction.
func (b *batchTx) stmt(ctx context.Context, st *sql.Stmt) *sql.Stmt {
	if t, ok := b.stmts[st]; ok {
		return t
	}
	t := b.tx.StmtContext(ctx, st)
	b.stmts[st] = t
	return t
}

// one writes a single row; it reports whether the row was written.
func (b *batchTx) one(ctx context.Context, o *op) bool {
	if b.infra != nil {
		return false
	}
	s := b.s
	var err error
	switch o.kind {
	case opMetric:
		v, k := encodeValue(o.value)
		if _, err = b.stmt(ctx, s.stmtMetric).ExecContext(ctx, o.run, o.trial, o.name, o.step, v, k); err != nil {
			err = fmt.Errorf("metric run %d trial %q name %q step %d: %w", o.run, o.trial, o.name, o.step, err)
		}
	case opSummary:
		v, k := encodeValue(o.value)
		if _, err = b.stmt(ctx, s.stmtSummary).ExecContext(ctx, o.run, o.trial, o.name, v, k); err != nil {
			err = fmt.Errorf("summary run %d trial %q name %q: %w", o.run, o.trial, o.name, err)
		}
	case opArtifact:
		if _, err = b.stmt(ctx, s.stmtArtifact).ExecContext(ctx, o.run, o.trial, o.name, o.sha, o.akind); err != nil {
			err = fmt.Errorf("artifact run %d trial %q path %q: %w", o.run, o.trial, o.name, err)
		}
	}
	switch {
	case err == nil:
		return true
	case IsInfrastructure(err):
		b.infra = err
	default:
		b.rowErrs = append(b.rowErrs, err)
	}
	return false
}

// metrics writes the metric rows of batch: full chunks through the
// multi-row statement. A chunk that fails is rolled back by SQLite as one
// statement and retried row by row, so only the bad rows are lost.
func (b *batchTx) metrics(ctx context.Context, batch []op) {
	s := b.s
	chunk := make([]*op, 0, metricChunk)
	flush := func() {
		if len(chunk) < metricChunk {
			for _, o := range chunk {
				b.one(ctx, o)
			}
		} else if b.infra == nil {
			args := s.args[:0]
			for _, o := range chunk {
				v, k := encodeValue(o.value)
				args = append(args, o.run, o.trial, o.name, o.step, v, k)
			}
			_, err := b.stmt(ctx, s.stmtMetrics).ExecContext(ctx, args...)
			clear(args)
			s.args = args[:0]
			if IsInfrastructure(err) {
				b.infra = err
			} else if err != nil {
				for _, o := range chunk {
					b.one(ctx, o)
				}
			}
		}
		chunk = chunk[:0]
	}
	for i := range batch {
		if batch[i].kind == opMetric {
			if chunk = append(chunk, &batch[i]); len(chunk) == metricChunk {
				flush()
			}
		}
	}
	flush()
}
