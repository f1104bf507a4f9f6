package runs

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Pin marks a run as pinned (gc never deletes it; OldRuns leaves it out),
// or with pinned false unpins it. A run that does not exist is an error
// wrapping ErrNotFound.
func (s *Store) Pin(ctx context.Context, runID int64, pinned bool) error {
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ?`, runID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		if !pinned {
			_, err := tx.ExecContext(ctx, `DELETE FROM run_pins WHERE run_id = ?`, runID)
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO run_pins (run_id, pinned_at) VALUES (?, ?)`,
			runID, time.Now().UTC().Format(time.RFC3339Nano))
		return err
	})
	if err != nil {
		return fmt.Errorf("pin run %d: %w", runID, err)
	}
	return nil
}

// Pinned returns the pinned runs.
func (s *Store) Pinned(ctx context.Context) (map[int64]bool, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT run_id FROM run_pins`)
	if err != nil {
		return nil, fmt.Errorf("pinned runs: %w", err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("pinned runs: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}
