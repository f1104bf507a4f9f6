package stages

import (
	"encoding/binary"
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
}

// Add appends one point.
func (s *Series) Add(metric string, step int, v float64) {
	s.Metric = append(s.Metric, metric)
	s.Step = append(s.Step, int64(step))
	s.Value = append(s.Value, v)
}

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

// Summary holds a trial's summary metrics. NaN means "no value" (for example
// a threshold never reached) and is stored as NULL in the results database.
type Summary map[string]float64

// WriteSummary writes m as JSON with exact float text ("NaN" and "+Inf" kept).
func WriteSummary(path string, m Summary) error {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(b, '\n'))
}

// ReadSummary reads a file written by WriteSummary.
func ReadSummary(path string) (Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string]string
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("read summary %s: %w", path, err)
	}
	m := make(Summary, len(raw))
	for k, s := range raw {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("read summary %s: metric %s: %w", path, k, err)
		}
		m[k] = v
	}
	return m, nil
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

// WriteFloats writes x as little-endian float64s, atomically.
func WriteFloats(path string, x []float64) error {
	if err := mkParent(path); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		buf := make([]byte, 1<<20)
		for lo := 0; lo < len(x); lo += len(buf) / 8 {
			hi := min(lo+len(buf)/8, len(x))
			for i, v := range x[lo:hi] {
				binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
			}
			if _, err := w.Write(buf[:8*(hi-lo)]); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReadFloats reads n little-endian float64s written by WriteFloats.
func ReadFloats(path string, n int) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x := make([]float64, n)
	buf := make([]byte, 1<<20)
	for lo := 0; lo < n; lo += len(buf) / 8 {
		hi := min(lo+len(buf)/8, n)
		if _, err := io.ReadFull(f, buf[:8*(hi-lo)]); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for i := range x[lo:hi] {
			x[lo+i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
		}
	}
	return x, nil
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
func mkParent(path string) error { return os.MkdirAll(filepath.Dir(path), 0o755) }
