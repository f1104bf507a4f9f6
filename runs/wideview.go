package runs

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// The wide `trials` view has one row per trial: the fixed columns below,
// then one column per parameter key ever recorded (its JSON value turned
// into an SQLite value: numbers are INTEGER or REAL, strings TEXT, booleans
// 0/1, arrays and objects JSON text), then one column per summary metric
// name ever recorded (REAL; NULL for NaN or when the trial has none).
// Parameter and metric columns are sorted by name. A parameter key equal
// to a fixed column is named param_<key>; a metric name equal to a fixed
// column or a parameter column is named metric_<name>.
//
// SQLite views have a fixed column list, so the Store regenerates the view
// whenever a trial parameter key or summary name it has not seen is
// written (and on Open, for names written by other processes).
var trialsFixedColumns = []string{"experiment", "run_id", "trial", "seq", "status", "error", "seed",
	"params_json", "started_at", "ended_at", "wall_seconds", "log_path"}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteString quotes an SQL string literal.
func quoteString(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// TrialsViewColumns returns the column names of the wide trials view for
// the given parameter keys and metric names, in view order, and the column
// name of each key and metric.
func trialsViewColumns(params, metrics []string) (paramCol, metricCol map[string]string) {
	taken := map[string]bool{}
	for _, c := range trialsFixedColumns {
		taken[c] = true
	}
	paramCol = map[string]string{}
	for _, k := range params {
		c := k
		if taken[c] {
			c = "param_" + k
		}
		paramCol[k] = c
	}
	for _, c := range paramCol {
		taken[c] = true
	}
	metricCol = map[string]string{}
	for _, m := range metrics {
		c := m
		if taken[c] {
			c = "metric_" + m
		}
		metricCol[m] = c
	}
	return paramCol, metricCol
}

// createTrialsView returns the CREATE VIEW statement of the wide trials
// view for the given (sorted) parameter keys and metric names.
func createTrialsView(params, metrics []string) string {
	paramCol, metricCol := trialsViewColumns(params, metrics)
	var b strings.Builder
	b.WriteString(`CREATE VIEW trials AS SELECT r.experiment AS experiment, t.run_id AS run_id, t.trial AS trial,
	t.seq AS seq, t.status AS status, t.error AS error, t.seed AS seed,
	t.params_json AS params_json, t.started_at AS started_at, t.ended_at AS ended_at, t.wall_seconds AS wall_seconds,
	t.log_path AS log_path`)
	for _, k := range params {
		fmt.Fprintf(&b, ",\n\t(SELECT json_extract(p.value, '$') FROM trial_param_rows AS p WHERE p.run_id = t.run_id AND p.trial = t.trial AND p.key = %s) AS %s",
			quoteString(k), quoteIdent(paramCol[k]))
	}
	for _, m := range metrics {
		fmt.Fprintf(&b, ",\n\t(SELECT s.value FROM summaries AS s WHERE s.run_id = t.run_id AND s.trial = t.trial AND s.name = %s) AS %s",
			quoteString(m), quoteIdent(metricCol[m]))
	}
	b.WriteString("\n\tFROM trial_rows AS t JOIN runs AS r ON r.id = t.run_id")
	return b.String()
}

// viewNames is the set of parameter keys and metric names the trials view
// has columns for. It is used by the writer goroutine only.
type viewNames struct {
	params, metrics map[string]bool
}

func distinct(ctx context.Context, tx *sql.Tx, query string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// refreshTrialsView regenerates the trials view inside tx if the parameter
// keys or metric names in the database differ from its columns, and records
// the names in v. It does nothing on a database older than schema v3.
func refreshTrialsView(ctx context.Context, tx *sql.Tx, v *viewNames) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'trial_rows'`).Scan(&n); err != nil {
		return fmt.Errorf("trials view: %w", err)
	}
	if n == 0 {
		return nil
	}
	params, err := distinct(ctx, tx, `SELECT DISTINCT key FROM trial_param_rows ORDER BY key`)
	if err != nil {
		return fmt.Errorf("trials view: parameter keys: %w", err)
	}
	metrics, err := distinct(ctx, tx, `SELECT DISTINCT name FROM summaries ORDER BY name`)
	if err != nil {
		return fmt.Errorf("trials view: metric names: %w", err)
	}
	want := createTrialsView(params, metrics)
	var have sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'trials'`).Scan(&have); err != nil && err != sql.ErrNoRows {
		return fmt.Errorf("trials view: %w", err)
	}
	if have.String != want {
		if _, err := tx.ExecContext(ctx, `DROP VIEW IF EXISTS trials`); err != nil {
			return fmt.Errorf("trials view: drop: %w", err)
		}
		if _, err := tx.ExecContext(ctx, want); err != nil {
			return fmt.Errorf("trials view: create: %w", err)
		}
	}
	v.params = map[string]bool{}
	for _, k := range params {
		v.params[k] = true
	}
	v.metrics = map[string]bool{}
	for _, m := range metrics {
		v.metrics[m] = true
	}
	return nil
}

// newParams reports whether keys holds a key the view has no column for.
func (v *viewNames) newParams(keys []string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return !v.params[k] })
}

// TrialsViewColumns returns the column names of the wide trials view as it
// is now, in order.
func (s *Store) TrialsViewColumns(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name FROM pragma_table_info('trials') ORDER BY cid`)
	if err != nil {
		return nil, fmt.Errorf("trials view columns: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("trials view columns: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// openView brings the trials view up to date with the names recorded so
// far (also by other processes) and loads them into s.view.
func (s *Store) openView(ctx context.Context) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("trials view: begin: %w", err)
	}
	defer tx.Rollback()
	if err := refreshTrialsView(ctx, tx, &s.view); err != nil {
		return err
	}
	return tx.Commit()
}
