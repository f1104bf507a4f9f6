package trialio

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"goldstone/internal/atomicfile"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Series is a trial's step-wise metrics in long form: one point per
// (metric, step). It is written as an Arrow IPC file (metric, step, value),
// so other tools (pyarrow, polars, DuckDB) read it as it is.
type Series struct {
	Metric []string
	Step   []int64
	Value  []float64
	last   map[string]float64 // the latest value of each metric (Latest)
}

// Add appends one point.
func (s *Series) Add(metric string, step int, v float64) {
	s.Metric = append(s.Metric, metric)
	s.Step = append(s.Step, int64(step))
	s.Value = append(s.Value, v)
	if s.last == nil {
		s.last = map[string]float64{}
	}
	s.last[metric] = v
}

// Latest returns the latest value added of each metric (a progress
// display's chosen metric).
func (s *Series) Latest() map[string]float64 { return s.last }

// Len is the number of points.
func (s *Series) Len() int { return len(s.Step) }

// Of returns the steps and values of one metric, in recorded order.
func (s *Series) Of(metric string) (steps []float64, values []float64) {
	for i, m := range s.Metric {
		if m == metric {
			steps = append(steps, float64(s.Step[i]))
			values = append(values, s.Value[i])
		}
	}
	return steps, values
}

var seriesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "metric", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}},
	{Name: "step", Type: arrow.PrimitiveTypes.Int64},
	{Name: "value", Type: arrow.PrimitiveTypes.Float64},
}, nil)

// WriteSeries writes s to path as an Arrow IPC file, atomically.
func WriteSeries(path string, s *Series) error {
	if err := mkParent(path); err != nil {
		return err
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := writeSeries(f, s); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// writeSeries encodes s; the Arrow IPC file writer needs to seek.
func writeSeries(f io.WriteSeeker, s *Series) error {
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, seriesSchema)
	defer b.Release()
	mb := b.Field(0).(*array.BinaryDictionaryBuilder)
	sb := b.Field(1).(*array.Int64Builder)
	vb := b.Field(2).(*array.Float64Builder)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(seriesSchema), ipc.WithAllocator(mem), ipc.WithZstd())
	if err != nil {
		return err
	}
	// The Arrow IPC file format allows one dictionary per file: every
	// metric name goes into it before the first batch, so a series that
	// first appears late in a long run is encoded like any other.
	names := array.NewStringBuilder(mem)
	defer names.Release()
	seen := make(map[string]bool)
	for _, m := range s.Metric {
		if !seen[m] {
			seen[m] = true
			names.Append(m)
		}
	}
	dict := names.NewStringArray()
	defer dict.Release()
	if err := mb.InsertStringDictValues(dict); err != nil {
		return err
	}
	const batch = 1 << 16
	for lo := 0; lo < s.Len() || lo == 0; lo += batch {
		hi := min(lo+batch, s.Len())
		for i := lo; i < hi; i++ {
			if err := mb.AppendString(s.Metric[i]); err != nil {
				return err
			}
		}
		sb.AppendValues(s.Step[lo:hi], nil)
		vb.AppendValues(s.Value[lo:hi], nil)
		rec := b.NewRecord()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			return err
		}
		if hi == s.Len() {
			break
		}
	}
	return w.Close()
}

// ReadSeries reads a file written by WriteSeries.
func ReadSeries(path string) (*Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		return nil, fmt.Errorf("read series %s: %w", path, err)
	}
	defer r.Close()
	if !r.Schema().Equal(seriesSchema) {
		return nil, fmt.Errorf("read series %s: unexpected schema %v", path, r.Schema())
	}
	s := &Series{}
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.Record(i)
		if err != nil {
			return nil, fmt.Errorf("read series %s: %w", path, err)
		}
		dict := rec.Column(0).(*array.Dictionary)
		names := dict.Dictionary().(*array.String)
		steps := rec.Column(1).(*array.Int64)
		vals := rec.Column(2).(*array.Float64)
		for k := 0; k < int(rec.NumRows()); k++ {
			s.Metric = append(s.Metric, names.Value(dict.GetValueIndex(k)))
			s.Step = append(s.Step, steps.Value(k))
			s.Value = append(s.Value, vals.Value(k))
		}
	}
	return s, nil
}

// Summary holds a trial's summary metrics. runs.Never (+Inf) means a
// threshold never reached (a censored metric, see runs.Never for its
// spelling in every output); NaN means "no value" and is stored as NULL in
// the results database.
type Summary map[string]float64

// WriteSummary writes m as a JSON object of numbers, keys sorted, each
// finite value in the shortest text that parses back to the same float64.
// JSON has no NaN or infinity: NaN ("no value") is written as null, and
// +Inf and -Inf as the strings "+Inf" and "-Inf" (the convention of the
// Slurm result files, internal/batch.Num). ReadSummary reads all three back.
func WriteSummary(path string, m Summary) error {
	var b []byte
	b = append(b, '{')
	for i, k := range m.Keys() {
		if i > 0 {
			b = append(b, ',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return err
		}
		b = append(b, "\n  "...)
		b = append(b, key...)
		b = append(b, ": "...)
		b = appendSummaryValue(b, m[k])
	}
	if len(m) > 0 {
		b = append(b, '\n')
	}
	b = append(b, "}\n"...)
	return writeFile(path, b)
}

// appendSummaryValue appends v in WriteSummary's convention.
func appendSummaryValue(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "null"...)
	case math.IsInf(v, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// ReadSummary reads a file written by WriteSummary: each value a JSON
// number, null (NaN), or one of the strings "NaN", "+Inf", "-Inf" (and
// numbers as strings, as older versions wrote them).
func ReadSummary(path string) (Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("read summary %s: %w", path, err)
	}
	m := make(Summary, len(raw))
	for k, r := range raw {
		v, err := parseSummaryValue(r)
		if err != nil {
			return nil, fmt.Errorf("read summary %s: metric %s: %w", path, k, err)
		}
		m[k] = v
	}
	return m, nil
}

// parseSummaryValue parses one value of a summary file.
func parseSummaryValue(r json.RawMessage) (float64, error) {
	s := strings.TrimSpace(string(r))
	switch {
	case s == "null":
		return math.NaN(), nil
	case strings.HasPrefix(s, `"`):
		var str string
		if err := json.Unmarshal(r, &str); err != nil {
			return 0, err
		}
		switch str {
		case "NaN":
			return math.NaN(), nil
		case "+Inf":
			return math.Inf(1), nil
		case "-Inf":
			return math.Inf(-1), nil
		}
		// Files of older versions hold every number as a string.
		if v, err := strconv.ParseFloat(str, 64); err == nil {
			return v, nil
		}
		return 0, fmt.Errorf("value %q: want a number, null, \"NaN\", \"+Inf\" or \"-Inf\"", str)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("value %s: want a number, null, \"NaN\", \"+Inf\" or \"-Inf\"", s)
	}
	return v, nil
}

// Keys returns the metric names in sorted order.
func (m Summary) Keys() []string {
	return slices.Sorted(maps.Keys(m))
}

// IsTiming reports whether a summary metric is a timing (recorded, never
// compared by repro, allowed to differ between runs).
func IsTiming(metric string) bool {
	return len(metric) > len("_seconds") && strings.HasSuffix(metric, "_seconds")
}

// SameValue reports whether two metric values agree within an absolute
// tolerance; NaN equals NaN, infinities must match exactly.
func SameValue(a, b, tol float64) bool {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return math.IsNaN(a) && math.IsNaN(b)
	case math.IsInf(a, 0) || math.IsInf(b, 0):
		return a == b
	default:
		return math.Abs(a-b) <= tol
	}
}

// WriteJSON writes v as indented JSON, atomically.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(b, '\n'))
}

// ReadJSON reads a JSON file into v; errors name the file.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// CopyFile copies src to dst atomically.
func CopyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeFile(dst, b)
}

// writeFile writes data to path atomically, creating path's directory.
func writeFile(path string, data []byte) error {
	if err := mkParent(path); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data)
}

// mkParent creates the directory of path: the files of a stage's output
// directory are written before anything else creates it.
func mkParent(path string) error { return os.MkdirAll(filepath.Dir(path), 0o777) }
