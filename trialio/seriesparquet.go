package trialio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"goldstone/internal/atomicfile"

	"github.com/parquet-go/parquet-go"
)

// Names of a trial's series files in its result directory: the same
// points as Arrow IPC (ZSTD) and as Parquet (ZSTD), which DuckDB reads
// without extensions.
const (
	SeriesArrow   = "series.arrow"
	SeriesParquet = "series.parquet"
)

// seriesRow is one row of series.parquet.
type seriesRow struct {
	Metric string  `parquet:"metric,dict"`
	Step   int64   `parquet:"step,delta"`
	Value  float64 `parquet:"value"`
}

// WriteSeriesParquet writes s to path as Parquet (metric, step, value),
// atomically.
func WriteSeriesParquet(path string, s *Series) error {
	if err := mkParent(path); err != nil {
		return err
	}
	err := atomicfile.Write(path, func(w io.Writer) error {
		pw := parquet.NewGenericWriter[seriesRow](w, parquet.Compression(&parquet.Zstd), parquet.CreatedBy("goldstone stages", "", ""))
		rows := make([]seriesRow, 0, min(s.Len(), 1<<16))
		for lo := 0; lo < s.Len(); lo += 1 << 16 {
			rows = rows[:0]
			for i := lo; i < min(lo+1<<16, s.Len()); i++ {
				rows = append(rows, seriesRow{s.Metric[i], s.Step[i], s.Value[i]})
			}
			if _, err := pw.Write(rows); err != nil {
				return err
			}
		}
		return pw.Close()
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadSeriesParquet reads a file written by WriteSeriesParquet.
func ReadSeriesParquet(path string) (*Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := parquet.NewGenericReader[seriesRow](f)
	defer r.Close()
	s := &Series{}
	buf := make([]seriesRow, 4096)
	for {
		n, err := r.Read(buf)
		for _, row := range buf[:n] {
			s.Metric = append(s.Metric, row.Metric)
			s.Step = append(s.Step, row.Step)
			s.Value = append(s.Value, row.Value)
		}
		if errors.Is(err, io.EOF) {
			return s, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read series %s: %w", path, err)
		}
	}
}

// WriteTrialSeries writes s into a trial's result directory dir as
// series.arrow and series.parquet.
func WriteTrialSeries(dir string, s *Series) error {
	if err := WriteSeries(filepath.Join(dir, SeriesArrow), s); err != nil {
		return err
	}
	return WriteSeriesParquet(filepath.Join(dir, SeriesParquet), s)
}

// CopyTrialSeries copies the series files of result directory src into dst.
func CopyTrialSeries(src, dst string) error {
	for _, name := range []string{SeriesArrow, SeriesParquet} {
		if err := CopyFile(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			return err
		}
	}
	return nil
}
