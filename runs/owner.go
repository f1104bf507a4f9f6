package runs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"
)

// Owner is the process that owns a run: the runner that created it or last
// resumed it (ClaimRun). Host and PID are the runs columns host and pid;
// Started (owner_started) tells that process from a later one given the
// same pid; Token (owner_token), new at every claim, lets the owner check,
// when it ends the run, that no other runner took it over meanwhile
// (FinishOwnedRun).
type Owner struct {
	Host string
	PID  int
	// Started is when the process started, as the OS says it: on Linux
	// "<boot id>:<start time>", the start time in clock ticks since boot
	// (field 22 of /proc/PID/stat); "" where it is not known (other OSes,
	// runs recorded before schema version 9), and then the pid alone says
	// whether the owner lives.
	Started string
	Token   string
}

// Self returns this process as an owner, with a new token.
func Self() Owner {
	host, _ := os.Hostname()
	pid := os.Getpid()
	started, _, _ := procStart(pid) // "" where the OS cannot tell
	return Owner{Host: host, PID: pid, Started: started, Token: rand.Text()}
}

// Owner returns the run's owner as recorded.
func (r *RunInfo) Owner() Owner {
	return Owner{Host: r.Host, PID: r.PID, Started: r.OwnerStarted, Token: r.OwnerToken}
}

// SetOwner records o as the owner of the run that CreateRun creates from r.
func (r *RunInfo) SetOwner(o Owner) {
	r.Host, r.PID, r.OwnerStarted, r.OwnerToken = o.Host, o.PID, o.Started, o.Token
}

// Liveness is what can be told of an owner's process from this host.
type Liveness int

const (
	// OwnerGone: on this host, and its process has exited, or its pid now
	// names a process started at another time (a recycled pid), or none
	// was recorded.
	OwnerGone Liveness = iota
	// OwnerAlive: its process runs on this host (where the OS does not say
	// when a process started, only that the pid is alive).
	OwnerAlive
	// OwnerElsewhere: on another host (or no host recorded), whose
	// processes cannot be checked from here.
	OwnerElsewhere
)

// Liveness tells whether o's process is still running.
func (o Owner) Liveness() Liveness {
	host, _ := os.Hostname()
	switch {
	case o.Host == "" || o.Host != host:
		return OwnerElsewhere
	case o.PID <= 0:
		return OwnerGone
	}
	started, found, err := procStart(o.PID)
	switch {
	case err != nil: // the OS (or a hidden /proc) cannot tell: the pid alone
		if pidAlive(o.PID) {
			return OwnerAlive
		}
		return OwnerGone
	case !found:
		return OwnerGone
	case o.Started != "" && started != o.Started:
		return OwnerGone // the pid names a later process
	}
	return OwnerAlive
}

// OwnedError is ClaimRun's refusal: a live runner owns the run.
type OwnedError struct {
	RunID      int64
	Experiment string
	Owner      Owner
}

func (e *OwnedError) Error() string {
	return fmt.Sprintf("run %d of %s is in progress (pid %d on %s): another runner is working on it", e.RunID, e.Experiment, e.Owner.PID, e.Owner.Host)
}

// ErrTakenOver is returned (wrapped) by FinishOwnedRun when another runner
// claimed the run since its caller did.
var ErrTakenOver = errors.New("taken over by another runner")

// ClaimRun makes o the owner of run id and sets it running (its end time
// cleared), in one transaction: what a runner does when it resumes a run.
// It refuses, with an *OwnedError and writing nothing, a run that is
// running under another owner whose process is alive (Owner.Liveness).
// Two kinds of run are claimed whatever their owner: one whose owner is on
// another host, which cannot be checked from here (it is taken over; its
// runner, if it still lives, finds so when it ends the run), and one of
// the Slurm executor, whose trials the scheduler runs without the process
// that submitted them: a resubmission adopts it.
func (s *Store) ClaimRun(ctx context.Context, id int64, o Owner) error {
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var (
			cur              Owner
			experiment, stat string
			executor         string
		)
		err := tx.QueryRowContext(ctx, `SELECT experiment, status, executor, host, pid, owner_started, owner_token
			FROM runs WHERE id = ?`, id).Scan(&experiment, &stat, &executor, &cur.Host, &cur.PID, &cur.Started, &cur.Token)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if stat == StatusRunning && executor == ExecutorLocal && cur.Token != o.Token && cur.Liveness() == OwnerAlive {
			return &OwnedError{RunID: id, Experiment: experiment, Owner: cur}
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = 'running', ended_at = NULL,
			host = ?, pid = ?, owner_started = ?, owner_token = ? WHERE id = ?`, o.Host, o.PID, o.Started, o.Token, id)
		return err
	})
	var oe *OwnedError
	if errors.As(err, &oe) {
		return oe // it names the run
	}
	if err != nil {
		return fmt.Errorf("claim run %d: %w", id, err)
	}
	return nil
}

// CreateOwnedRun is CreateRun for a runner that starts a run of kind
// "run" owned by info's owner (RunInfo.SetOwner): in the same transaction,
// it refuses, with an *OwnedError naming that run and writing nothing, when
// a run of the same experiment, kind and configuration (config hash) is
// running under another owner whose process is alive, on the local
// executor. It is the one-owner-per-run check of runners that share a
// workdir and a database: of two runners that start the same experiment
// at the same moment, one creates the run and the other is refused (it
// would have resumed that run).
func (s *Store) CreateOwnedRun(ctx context.Context, info RunInfo) (int64, error) {
	if info.Kind == "" {
		info.Kind = KindRun
	}
	return s.createRun(ctx, info, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, host, pid, owner_started, owner_token FROM runs
			WHERE experiment = ? AND kind = ? AND config_hash = ? AND status = 'running' AND executor = ?
			ORDER BY id DESC`, info.Experiment, info.Kind, info.ConfigHash, ExecutorLocal)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id  int64
				cur Owner
			)
			if err := rows.Scan(&id, &cur.Host, &cur.PID, &cur.Started, &cur.Token); err != nil {
				return err
			}
			if cur.Token != info.OwnerToken && cur.Liveness() == OwnerAlive {
				return &OwnedError{RunID: id, Experiment: info.Experiment, Owner: cur}
			}
		}
		return rows.Err()
	})
}

// FinishOwnedRun is FinishRun for the run's owner: it ends the run only
// while o still owns it (its token), and otherwise changes nothing and
// returns an error wrapping ErrTakenOver that names the runner that owns
// it now.
func (s *Store) FinishOwnedRun(ctx context.Context, id int64, o Owner, status, note string) error {
	if !validRunStatus(status) {
		return fmt.Errorf("finish run %d: invalid status %q", id, status)
	}
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var cur Owner
		err := tx.QueryRowContext(ctx, `SELECT host, pid, owner_token FROM runs WHERE id = ?`, id).Scan(&cur.Host, &cur.PID, &cur.Token)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if cur.Token != o.Token {
			return fmt.Errorf("%w (pid %d on %s)", ErrTakenOver, cur.PID, cur.Host)
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, ended_at = ?,
			note = CASE WHEN ? = '' THEN note ELSE ? END WHERE id = ?`,
			status, encodeTime(time.Now()), note, note, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("finish run %d: %w", id, err)
	}
	return nil
}

// OwnerOf returns process pid of this host as an owner, without a token:
// how a back end that starts worker processes records them, so that
// Liveness tells a live one from an exited one or a recycled pid.
func OwnerOf(pid int) Owner {
	host, _ := os.Hostname()
	started, _, _ := procStart(pid)
	return Owner{Host: host, PID: pid, Started: started}
}
