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
	"params_json", "started_at", "ended_at", "wall_seconds", "log_path", "rung", "pruned_at_step"}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteString quotes an SQL string literal.
func quoteString(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// trialsViewColumns returns the column of each parameter key and metric
// name in the wide trials view: a name that needs no quoting in SQLite,
// DuckDB, pandas or polars (safeColumn: lambda is lambda_,
// steps_to_gap_0.1pct is steps_to_gap_0_1pct); one taken by a fixed column
// is param_<name> or metric_<name>, and a clash gets a trailing _.
func trialsViewColumns(params, metrics []string) (paramCol, metricCol map[string]string) {
	taken := map[string]bool{}
	for _, c := range trialsFixedColumns {
		taken[c] = true
	}
	pick := func(name, prefix string) string {
		c := safeColumn(name)
		if taken[c] {
			c = prefix + c
		}
		for taken[c] {
			c += "_"
		}
		taken[c] = true
		return c
	}
	paramCol = map[string]string{}
	for _, k := range params {
		paramCol[k] = pick(k, "param_")
	}
	metricCol = map[string]string{}
	for _, m := range metrics {
		metricCol[m] = pick(m, "metric_")
	}
	return paramCol, metricCol
}

// reservedColumns are the words a column name cannot be without quotes in
// Python (a keyword: df.lambda is a syntax error) or SQL (DuckDB's reserved
// words, and those of SQLite's that it does not take as a bare column).
var reservedColumns = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`and as assert async await break class continue def del elif else except finally for
		from global if import in is lambda nonlocal not or pass raise return try while with yield none true false
		all analyse analyze any array asc asymmetric both case cast check collate column constraint create default
		deferrable desc describe distinct do end fetch foreign grant group having initially intersect into lateral
		leading limit null offset on only order pivot placing primary qualify references returning select show some
		summarize symmetric table then to trailing union unique unpivot using variadic when where window
		alter between by commit cross delete drop escape exists glob index inner insert isnull join left like
		natural notnull outer right rollback set transaction update values`) {
		reservedColumns[w] = true
	}
}

// safeColumn is name as a column name that needs no quoting: characters
// other than ASCII letters, digits and _ become _, a leading digit gets a
// leading _, and a reserved word a trailing _.
func safeColumn(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	s := string(b)
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	if reservedColumns[strings.ToLower(s)] {
		s += "_"
	}
	return s
}

// createColumnsView returns the CREATE VIEW statement of trials_columns:
// each column of the wide trials view, where it comes from (fixed, param or
// metric) and the setting or metric name it holds.
func createColumnsView(params, metrics []string) string {
	paramCol, metricCol := trialsViewColumns(params, metrics)
	var b strings.Builder
	b.WriteString("CREATE VIEW trials_columns (column_name, source, name) AS VALUES ")
	var rows []string
	for _, c := range trialsFixedColumns {
		rows = append(rows, fmt.Sprintf("(%s, 'fixed', %s)", quoteString(c), quoteString(c)))
	}
	for _, k := range params {
		rows = append(rows, fmt.Sprintf("(%s, 'param', %s)", quoteString(paramCol[k]), quoteString(k)))
	}
	for _, m := range metrics {
		rows = append(rows, fmt.Sprintf("(%s, 'metric', %s)", quoteString(metricCol[m]), quoteString(m)))
	}
	b.WriteString(strings.Join(rows, ", "))
	return b.String()
}

// createTrialsView returns the CREATE VIEW statement of the wide trials
// view for the given (sorted) parameter keys and metric names.
func createTrialsView(params, metrics []string) string {
	paramCol, metricCol := trialsViewColumns(params, metrics)
	var b strings.Builder
	b.WriteString(`CREATE VIEW trials AS SELECT r.experiment AS experiment, t.run_id AS run_id, t.trial AS trial,
	t.seq AS seq, t.status AS status, t.error AS error, t.seed AS seed,
	t.params_json AS params_json, t.started_at AS started_at, t.ended_at AS ended_at, t.wall_seconds AS wall_seconds,
	t.log_path AS log_path, t.rung AS rung, t.pruned_at_step AS pruned_at_step`)
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
	wantCols := createColumnsView(params, metrics)
	have = sql.NullString{}
	if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'trials_columns'`).Scan(&have); err != nil && err != sql.ErrNoRows {
		return fmt.Errorf("trials_columns view: %w", err)
	}
	if have.String != wantCols {
		if _, err := tx.ExecContext(ctx, `DROP VIEW IF EXISTS trials_columns`); err != nil {
			return fmt.Errorf("trials_columns view: drop: %w", err)
		}
		if _, err := tx.ExecContext(ctx, wantCols); err != nil {
			return fmt.Errorf("trials_columns view: create: %w", err)
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
