package runs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"goldstone/internal/atomicfile"
	"goldstone/internal/fault"
)

// Export file names (ExportParquet).
const (
	ExportTrials    = "trials.parquet"
	ExportParams    = "params.parquet"
	ExportSummaries = "summaries.parquet"
	ExportSeries    = "series.parquet"
	ExportOutputs   = "outputs.parquet"
)

type paramRow struct {
	RunID int64  `parquet:"run_id"`
	Trial string `parquet:"trial,dict"`
	Key   string `parquet:"key,dict"`
	// Value is the JSON text; ValueNum the number and ValueText the string
	// when the value is one.
	Value     string   `parquet:"value_json"`
	ValueNum  *float64 `parquet:"value_num,optional"`
	ValueText *string  `parquet:"value_text,optional"`
}

type summaryRow struct {
	RunID  int64   `parquet:"run_id"`
	Trial  string  `parquet:"trial,dict"`
	Metric string  `parquet:"metric,dict"`
	Value  float64 `parquet:"value"`
}

type seriesRow struct {
	RunID  int64   `parquet:"run_id"`
	Trial  string  `parquet:"trial,dict"`
	Metric string  `parquet:"metric,dict"`
	Step   int64   `parquet:"step,delta"`
	Value  float64 `parquet:"value"`
}

type outputRow struct {
	RunID    int64  `parquet:"run_id"`
	Trial    string `parquet:"trial,dict"`
	Stage    string `parquet:"stage,dict"`
	CacheDir string `parquet:"cache_dir,dict"`
	File     string `parquet:"file"`
	Path     string `parquet:"path"`
	SHA256   string `parquet:"sha256"`
	Bytes    int64  `parquet:"bytes"`
}

func writerOptions() []parquet.WriterOption {
	return []parquet.WriterOption{parquet.Compression(&parquet.Zstd), parquet.CreatedBy("goldstone runs", "", "")}
}

func writeGeneric[T any](path string, rows []T) error {
	return atomicfile.Write(path, func(f io.Writer) error {
		w := parquet.NewGenericWriter[T](f, writerOptions()...)
		if _, err := w.Write(rows); err != nil {
			return err
		}
		return w.Close()
	})
}

// exportNames are the files of an export, in the order they are written.
var exportNames = []string{ExportTrials, ExportParams, ExportSummaries, ExportSeries, ExportOutputs}

// ExportParquet writes a run's trials (one wide row per trial, typed
// parameter columns and summary metrics, like the trials view), its
// parameters and summaries in long form, its step-wise series and its
// recorded output files as ZSTD Parquet files in dir, and returns their
// paths. Times are TIMESTAMP (UTC, microseconds); NaN and infinities are
// kept as such in DOUBLE columns.
//
// An export is complete or absent: the files are written into a hidden
// temporary directory beside dir, which then takes dir's place in two
// renames (atomicfile.ReplaceDir). dir must therefore be new or hold an
// earlier export only (nothing else of the user's is replaced); what an
// export killed midway left behind is removed by the next one.
func (s *Store) ExportParquet(ctx context.Context, runID int64, dir string) ([]string, error) {
	fail := func(err error) ([]string, error) {
		return nil, fmt.Errorf("export run %d: %w", runID, err)
	}
	ri, err := s.Run(ctx, runID)
	if err != nil {
		return fail(err)
	}
	if err := exportDirFree(dir); err != nil {
		return fail(err)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return fail(err)
	}
	if _, err := atomicfile.RemoveStale(parent); err != nil {
		return fail(err)
	}
	trials, err := s.TrialTable(ctx, runID)
	if err != nil {
		return fail(err)
	}
	tmp, err := atomicfile.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(dir))+".tmp-*")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	add := func(name string, write func(path string) error) error {
		p := filepath.Join(tmp, name)
		if err := write(p); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		fault.Point("export:file")
		return nil
	}

	if err := add(ExportTrials, func(p string) error { return writeWideTrials(p, ri.Experiment, trials) }); err != nil {
		return fail(err)
	}

	var params []paramRow
	var sums []summaryRow
	for _, t := range trials {
		for _, k := range slices.Sorted(maps.Keys(t.Params)) {
			r := paramRow{RunID: runID, Trial: t.ID, Key: k, Value: t.Params[k]}
			v, _ := decodeJSON(t.Params[k])
			switch x := v.(type) {
			case json.Number:
				if f, err := x.Float64(); err == nil {
					r.ValueNum = &f
				}
			case string:
				r.ValueText = &x
			}
			params = append(params, r)
		}
		for _, m := range slices.Sorted(maps.Keys(t.Summary)) {
			sums = append(sums, summaryRow{RunID: runID, Trial: t.ID, Metric: m, Value: t.Summary[m]})
		}
	}
	if err := add(ExportParams, func(p string) error { return writeGeneric(p, params) }); err != nil {
		return fail(err)
	}
	if err := add(ExportSummaries, func(p string) error { return writeGeneric(p, sums) }); err != nil {
		return fail(err)
	}
	if err := add(ExportSeries, func(p string) error { return s.writeSeries(ctx, p, runID, trials) }); err != nil {
		return fail(err)
	}
	outs, err := s.Outputs(ctx, runID)
	if err != nil {
		return fail(err)
	}
	orows := make([]outputRow, len(outs))
	for i, o := range outs {
		orows[i] = outputRow{RunID: runID, Trial: o.Trial, Stage: o.Stage, CacheDir: o.CacheDir, File: o.File, Path: o.Path(), SHA256: o.SHA256, Bytes: o.Bytes}
	}
	if err := add(ExportOutputs, func(p string) error { return writeGeneric(p, orows) }); err != nil {
		return fail(err)
	}
	if err := atomicfile.ReplaceDir(tmp, dir); err != nil {
		return fail(err)
	}
	paths := make([]string, len(exportNames))
	for i, n := range exportNames {
		paths[i] = filepath.Join(dir, n)
	}
	return paths, nil
}

// exportDirFree checks that dir may be replaced by an export: it does not
// exist, or it is a directory that holds nothing but export files.
func exportDirFree(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !slices.Contains(exportNames, e.Name()) {
			return fmt.Errorf("%s holds %s, which is not an export file: export into a new directory (an export replaces its directory whole)", dir, e.Name())
		}
	}
	return nil
}

// writeSeries streams a run's metric series, trials in enumeration order,
// metrics by name, steps ascending.
func (s *Store) writeSeries(ctx context.Context, path string, runID int64, trials []TrialRow) error {
	return atomicfile.Write(path, func(f io.Writer) error {
		w := parquet.NewGenericWriter[seriesRow](f, writerOptions()...)
		buf := make([]seriesRow, 0, 4096)
		flush := func() error {
			if len(buf) == 0 {
				return nil
			}
			_, err := w.Write(buf)
			buf = buf[:0]
			return err
		}
		for _, t := range trials {
			rows, err := s.r.QueryContext(ctx, `SELECT name, step, value, kind FROM metrics
				WHERE run_id = ? AND trial = ? ORDER BY name, step`, runID, t.ID)
			if err != nil {
				return err
			}
			for rows.Next() {
				var (
					r    = seriesRow{RunID: runID, Trial: t.ID}
					v    sql.NullFloat64
					kind string
				)
				if err := rows.Scan(&r.Metric, &r.Step, &v, &kind); err != nil {
					rows.Close()
					return err
				}
				if r.Value, err = decodeValue(v, kind); err != nil {
					rows.Close()
					return err
				}
				buf = append(buf, r)
				if len(buf) == cap(buf) {
					if err := flush(); err != nil {
						rows.Close()
						return err
					}
				}
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
		return w.Close()
	})
}

// paramKind is the Parquet type of a parameter column: the common type of
// its values over the run's trials.
type paramKind int

const (
	pkNone paramKind = iota
	pkInt
	pkFloat
	pkString
	pkBool
	pkJSON // mixed, arrays, objects: JSON text
)

func kindOfJSON(v any) paramKind {
	switch x := v.(type) {
	case json.Number:
		if _, err := x.Int64(); err == nil && !strings.ContainsAny(x.String(), ".eE") {
			return pkInt
		}
		return pkFloat
	case string:
		return pkString
	case bool:
		return pkBool
	}
	return pkJSON
}

func unify(a, b paramKind) paramKind {
	switch {
	case a == pkNone:
		return b
	case a == b:
		return a
	case (a == pkInt && b == pkFloat) || (a == pkFloat && b == pkInt):
		return pkFloat
	}
	return pkJSON
}

// writeWideTrials writes one row per trial with typed parameter and metric
// columns named as in the trials view. The schema is built at run time as
// a Go struct type, so the columns keep their order.
func writeWideTrials(path, experiment string, trials []TrialRow) error {
	l, err := newWideLayout(trials)
	if err != nil {
		return err
	}
	schema := parquet.SchemaOf(reflect.New(l.rowType).Interface())
	return atomicfile.Write(path, func(f io.Writer) error {
		w := parquet.NewWriter(f, append(writerOptions(), schema)...)
		for _, t := range trials {
			if err := w.Write(l.row(experiment, t).Addr().Interface()); err != nil {
				return err
			}
		}
		return w.Close()
	})
}

// wideLayout is the row type of the wide trials file: the fixed columns,
// then one per parameter (typed by what every trial's value fits) and one
// per summary metric.
type wideLayout struct {
	kinds   map[string]paramKind
	pkeys   []string // parameter columns, sorted
	mnames  []string // metric columns, sorted
	nFixed  int
	rowType reflect.Type
}

func newWideLayout(trials []TrialRow) (*wideLayout, error) {
	l := &wideLayout{kinds: map[string]paramKind{}}
	metrics := map[string]bool{}
	for _, t := range trials {
		for k, text := range t.Params {
			v, err := decodeJSON(text)
			if err != nil {
				return nil, fmt.Errorf("trial %q param %q: %w", t.ID, k, err)
			}
			l.kinds[k] = unify(l.kinds[k], kindOfJSON(v))
		}
		for m := range t.Summary {
			metrics[m] = true
		}
	}
	l.pkeys = slices.Sorted(maps.Keys(l.kinds))
	l.mnames = slices.Sorted(maps.Keys(metrics))
	paramCol, metricCol := trialsViewColumns(l.pkeys, l.mnames)

	type col struct {
		name string
		typ  reflect.Type
		tag  string
	}
	tsType := reflect.TypeFor[*time.Time]()
	cols := []col{
		{"experiment", reflect.TypeFor[string](), "dict"},
		{"run_id", reflect.TypeFor[int64](), ""},
		{"trial", reflect.TypeFor[string](), ""},
		{"seq", reflect.TypeFor[int64](), ""},
		{"status", reflect.TypeFor[string](), "dict"},
		{"error", reflect.TypeFor[string](), ""},
		{"seed", reflect.TypeFor[int64](), ""},
		{"params_json", reflect.TypeFor[string](), ""},
		{"started_at", tsType, "optional,timestamp(microsecond)"},
		{"ended_at", tsType, "optional,timestamp(microsecond)"},
		{"wall_seconds", reflect.TypeFor[float64](), ""},
		{"log_path", reflect.TypeFor[string](), ""},
	}
	l.nFixed = len(cols)
	for _, k := range l.pkeys {
		var t reflect.Type
		switch l.kinds[k] {
		case pkInt:
			t = reflect.TypeFor[*int64]()
		case pkFloat:
			t = reflect.TypeFor[*float64]()
		case pkBool:
			t = reflect.TypeFor[*bool]()
		default:
			t = reflect.TypeFor[*string]()
		}
		cols = append(cols, col{paramCol[k], t, "optional"})
	}
	for _, m := range l.mnames {
		cols = append(cols, col{metricCol[m], reflect.TypeFor[*float64](), "optional"})
	}
	fields := make([]reflect.StructField, len(cols))
	for i, c := range cols {
		name := strings.ReplaceAll(c.name, ",", "_")
		tag := name
		if c.tag != "" {
			tag += "," + c.tag
		}
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: c.typ, Tag: reflect.StructTag(`parquet:"` + strings.ReplaceAll(tag, `"`, `_`) + `"`)}
	}
	l.rowType = reflect.StructOf(fields)
	return l, nil
}

// row is trial t's row.
func (l *wideLayout) row(experiment string, t TrialRow) reflect.Value {
	row := reflect.New(l.rowType).Elem()
	pj, _ := json.Marshal(rawParams(t.Params))
	fixed := []any{experiment, t.RunID, t.ID, t.Seq, t.Status, t.Error, t.Seed, string(pj),
		timePtr(t.Started), timePtr(t.Ended), t.WallSeconds, t.LogPath}
	for i, v := range fixed {
		row.Field(i).Set(reflect.ValueOf(v))
	}
	for j, k := range l.pkeys {
		text, ok := t.Params[k]
		if !ok {
			continue
		}
		fv := row.Field(l.nFixed + j)
		v, _ := decodeJSON(text)
		switch l.kinds[k] {
		case pkInt:
			n, _ := v.(json.Number).Int64()
			fv.Set(reflect.ValueOf(&n))
		case pkFloat:
			x, _ := v.(json.Number).Float64()
			fv.Set(reflect.ValueOf(&x))
		case pkBool:
			b := v.(bool)
			fv.Set(reflect.ValueOf(&b))
		case pkString:
			s := v.(string)
			fv.Set(reflect.ValueOf(&s))
		default:
			s := text
			fv.Set(reflect.ValueOf(&s))
		}
	}
	for j, m := range l.mnames {
		if x, ok := t.Summary[m]; ok {
			row.Field(l.nFixed + len(l.pkeys) + j).Set(reflect.ValueOf(&x))
		}
	}
	return row
}

func rawParams(p map[string]string) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(p))
	for k, v := range p {
		out[k] = json.RawMessage(v)
	}
	return out
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
