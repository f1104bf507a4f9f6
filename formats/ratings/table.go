package ratings

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/parquet-go/parquet-go"

	"goldstone/internal/atomicfile"
)

// DefaultRowGroupSize is the number of rows per Parquet row group when none is given.
const DefaultRowGroupSize = 1 << 20

// ReadBatch is the number of rows Read hands to its callback at a time.
const ReadBatch = 1 << 14

// Rating is one row of an ingested ratings table (Ingest's output).
//
// Timestamp is unix seconds in memory; the Parquet column timestamp is a
// TIMESTAMP(MILLIS, UTC) written from it (TimeMS, set by the table writer and
// read back into Timestamp by Read), so DuckDB and pandas see a time.
type Rating struct {
	User      int32   `parquet:"user"`
	Item      int32   `parquet:"item"`
	Rating    float32 `parquet:"rating"`
	Timestamp int64   `parquet:"-"` // unix seconds
	TimeMS    int64   `parquet:"timestamp,timestamp(millisecond)"`
}

// Binary is one row of a labelled table (Binarize's output): X is +1 above the median, -1
// below, and Rating the rating itself. Bin also reads an ingested Rating table as Binary rows
// with X = 0 (explicit ratings, not binarized; see ReadLabeled).
type Binary struct {
	User      int32   `parquet:"user"`
	Item      int32   `parquet:"item"`
	X         int8    `parquet:"x"`
	Rating    float32 `parquet:"rating"`
	Timestamp int64   `parquet:"-"` // unix seconds; on disk TimeMS, as in Rating
	TimeMS    int64   `parquet:"timestamp,timestamp(millisecond)"`
}

// Binned is one row of a binned table (Bin's and Split's output). User and Item are dense
// indices 0..U-1 and 0..I-1 (see IDMap), UserID and ItemID the original MovieLens ids; X the
// binary label (0 for explicit ratings) and Rating the rating; Bin (column t, the time-step
// index of every Parquet output) is in 0..T-1.
type Binned struct {
	User      int32   `parquet:"user"`
	UserID    int32   `parquet:"user_id"`
	Item      int32   `parquet:"item"`
	ItemID    int32   `parquet:"item_id"`
	X         int8    `parquet:"x"`
	Rating    float32 `parquet:"rating"`
	Timestamp int64   `parquet:"-"` // unix seconds; on disk TimeMS, as in Rating
	TimeMS    int64   `parquet:"timestamp,timestamp(millisecond)"`
	Bin       int32   `parquet:"t"`
}

// IDMap is one row of an id-map table: dense index Index stands for original id ID.
type IDMap struct {
	Index int32 `parquet:"index"`
	ID    int32 `parquet:"id"`
}

// Embedding is one row of embeddings.parquet: the trained vector of a user or an item in
// time bin T, under its id as written in the source table.
type Embedding struct {
	T      int32     `parquet:"t"`           // time bin 0..T-1
	Entity string    `parquet:"entity,dict"` // "user" or "item"
	Index  int32     `parquet:"index"`       // dense index (params.npy column; items after the users)
	ID     string    `parquet:"id"`          // the id in the source table
	Vector []float64 `parquet:"vector,list"` // d values
}

// Row is the set of row types this package reads and writes.
type Row interface {
	Rating | Binary | Binned | IDMap | IDName | Embedding
}

// Read streams the rows of a Parquet table in file order, calling fn with batches of at most
// 16384 rows. The batch slice is reused between calls: fn must copy what it keeps. A table
// lacking a column of T is an error.
func Read[T Row](ctx context.Context, path string, fn func(rows []T) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	r, n, err := openReader[T](f)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer r.Close()
	buf := make([]T, min(int64(ReadBatch), max(n, 1)))
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, err := r.Read(buf)
		if k > 0 {
			fromDisk(buf[:k])
			if err := fn(buf[:k]); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// ReadLabeled streams a labelled table as Binary rows: a Binary table (Binarize's output)
// as it is, a Rating table (Ingest's output: explicit ratings, not binarized) with X = 0.
func ReadLabeled(ctx context.Context, path string, fn func(rows []Binary) error) error {
	cols, err := columnNames(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if slices.Contains(cols, "x") {
		return Read(ctx, path, fn)
	}
	var out []Binary
	return Read(ctx, path, func(rows []Rating) error {
		out = out[:0]
		for _, r := range rows {
			out = append(out, Binary{User: r.User, Item: r.Item, Rating: r.Rating, Timestamp: r.Timestamp})
		}
		return fn(out)
	})
}

// columnNames returns the top-level column names of a Parquet file.
func columnNames(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, fld := range pf.Schema().Fields() {
		names = append(names, fld.Name())
	}
	return names, nil
}

// ReadAll loads a whole Parquet table into memory.
func ReadAll[T Row](ctx context.Context, path string) ([]T, error) {
	var out []T
	err := Read(ctx, path, func(rows []T) error {
		if out == nil {
			out = make([]T, 0, len(rows))
		}
		out = append(out, rows...)
		return nil
	})
	return out, err
}

// ReadRatings streams an ingested ratings table; see Read.
func ReadRatings(ctx context.Context, path string, fn func(rows []Rating) error) error {
	return Read(ctx, path, fn)
}

// NumRows returns the number of rows of a Parquet file from its footer.
func NumRows(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	return pf.NumRows(), nil
}

func openReader[T Row](f *os.File) (*parquet.GenericReader[T], int64, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, 0, err
	}
	want := parquet.SchemaOf(new(T))
	have := pf.Schema()
	for _, fld := range want.Fields() {
		if !slices.ContainsFunc(have.Fields(), func(f parquet.Field) bool { return f.Name() == fld.Name() }) {
			return nil, 0, fmt.Errorf("table has no column %q (columns: %v)", fld.Name(), have.Columns())
		}
	}
	return parquet.NewGenericReader[T](pf), pf.NumRows(), nil
}

// Columns holds a binned table column by column, the layout the models train on.
type Columns struct {
	User, Item []int32
	X          []int8
	Rating     []float32
	Timestamp  []int64
	Bin        []int32
}

// Len returns the number of rows.
func (c *Columns) Len() int { return len(c.X) }

// LoadColumns loads a Binned table (Bin's or Split's output) into columns.
func LoadColumns(ctx context.Context, path string) (*Columns, error) {
	n, err := NumRows(path)
	if err != nil {
		return nil, err
	}
	c := &Columns{
		User: make([]int32, 0, n), Item: make([]int32, 0, n), X: make([]int8, 0, n),
		Rating: make([]float32, 0, n), Timestamp: make([]int64, 0, n), Bin: make([]int32, 0, n),
	}
	err = Read(ctx, path, func(rows []Binned) error {
		for _, r := range rows {
			c.User = append(c.User, r.User)
			c.Item = append(c.Item, r.Item)
			c.X = append(c.X, r.X)
			c.Rating = append(c.Rating, r.Rating)
			c.Timestamp = append(c.Timestamp, r.Timestamp)
			c.Bin = append(c.Bin, r.Bin)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// fromDisk sets the in-memory unix seconds of rows read from Parquet.
func fromDisk[T Row](rows []T) {
	switch rs := any(rows).(type) {
	case []Rating:
		for i := range rs {
			rs[i].Timestamp = rs[i].TimeMS / 1000
		}
	case []Binary:
		for i := range rs {
			rs[i].Timestamp = rs[i].TimeMS / 1000
		}
	case []Binned:
		for i := range rs {
			rs[i].Timestamp = rs[i].TimeMS / 1000
		}
	}
}

// toDisk sets the Parquet milliseconds of rows from their unix seconds.
func toDisk[T Row](rows []T) {
	switch rs := any(rows).(type) {
	case []Rating:
		for i := range rs {
			rs[i].TimeMS = rs[i].Timestamp * 1000
		}
	case []Binary:
		for i := range rs {
			rs[i].TimeMS = rs[i].Timestamp * 1000
		}
	case []Binned:
		for i := range rs {
			rs[i].TimeMS = rs[i].Timestamp * 1000
		}
	}
}

// TableWriter writes rows of T to a Parquet table, converting the
// timestamps to the on-disk unit first.
type TableWriter[T Row] struct{ w *parquet.GenericWriter[T] }

// Write writes rows (setting their TimeMS).
func (t *TableWriter[T]) Write(rows []T) (int, error) {
	toDisk(rows)
	return t.w.Write(rows)
}

// WriteTable writes a Parquet table of T atomically; fill writes the rows.
func WriteTable[T Row](dst string, rowGroup int, fill func(w *TableWriter[T]) error) error {
	return atomicfile.Write(dst, func(out io.Writer) error { return WriteParquet(out, dst, rowGroup, fill) })
}

// WriteParquet writes a Parquet table of T (named dst in errors) to out; fill writes the rows.
func WriteParquet[T Row](out io.Writer, dst string, rowGroup int, fill func(w *TableWriter[T]) error) error {
	if rowGroup <= 0 {
		rowGroup = DefaultRowGroupSize
	}
	w := parquet.NewGenericWriter[T](out,
		parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(int64(rowGroup)),
		parquet.CreatedBy("goldstone", "", ""),
	)
	if err := fill(&TableWriter[T]{w}); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

// WriteIDMap writes ids (dense index i stands for original id ids[i]) as an IDMap table.
func WriteIDMap(ctx context.Context, dst string, ids []int32) error {
	return WriteTable(dst, 0, func(w *TableWriter[IDMap]) error {
		buf := make([]IDMap, 0, ReadBatch)
		for i, id := range ids {
			buf = append(buf, IDMap{Index: int32(i), ID: id})
			if len(buf) == cap(buf) || i == len(ids)-1 {
				if err := ctx.Err(); err != nil {
					return err
				}
				if _, err := w.Write(buf); err != nil {
					return fmt.Errorf("write %s: %w", dst, err)
				}
				buf = buf[:0]
			}
		}
		return nil
	})
}

// ReadIDMap reads an IDMap table back into ids[index] = original id.
func ReadIDMap(ctx context.Context, path string) ([]int32, error) {
	rows, err := ReadAll[IDMap](ctx, path)
	if err != nil {
		return nil, err
	}
	ids := make([]int32, len(rows))
	for i, r := range rows {
		if int(r.Index) != i {
			return nil, fmt.Errorf("read %s: row %d has index %d", path, i, r.Index)
		}
		ids[i] = r.ID
	}
	return ids, nil
}
