package ratings

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"goldstone/internal/safetext"
)

// LayoutParquet is Stats.Layout of a Parquet input.
const LayoutParquet = "parquet"

// parquetColumn is a resolved column of a Parquet input and how its values convert.
type parquetColumn struct {
	index int    // leaf column index
	name  string // dotted path, for messages
	kind  parquet.Kind
	// time: seconds per unit as a divisor (TIMESTAMP: 1000, 1e6, 1e9; 0 when not a
	// TIMESTAMP), date (DATE: days), scale (DECIMAL: 10^scale, 0 when not a DECIMAL)
	perSecond int64
	date      bool
	scale     float64
}

// resolveParquet finds the four columns of l in a Parquet schema (nil l: the MovieLens
// names userId, movieId, rating, timestamp) and checks their types.
func resolveParquet(schema *parquet.Schema, l *Layout) ([4]parquetColumn, error) {
	var out [4]parquetColumn
	cols := [4]Column{{Name: FieldUser}, {Name: FieldItem}, {Name: FieldRating}, {Name: FieldTimestamp}}
	if l != nil {
		cols = l.columns()
	}
	paths := schema.Columns()
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strings.Join(p, ".")
	}
	key := func(k int) string {
		if l == nil {
			return columnKeys[k]
		}
		return l.key(k)
	}
	for k, c := range cols {
		var leaf parquet.LeafColumn
		var ok bool
		if c.Name != "" {
			leaf, ok = schema.Lookup(strings.Split(c.Name, ".")...)
		} else if c.Pos <= len(paths) {
			leaf, ok = schema.Lookup(paths[c.Pos-1]...)
		}
		if !ok {
			return out, fmt.Errorf("the table has no column %s (%s); its columns: %s", c, key(k), safetext.Cut(strings.Join(names, ", ")))
		}
		name := strings.Join(leaf.Path, ".")
		if leaf.MaxRepetitionLevel > 0 {
			return out, fmt.Errorf("column %s (%s) is repeated (a list); want one value per row", safetext.Quote(name), key(k))
		}
		typ := leaf.Node.Type()
		pc := parquetColumn{index: leaf.ColumnIndex, name: name, kind: typ.Kind()}
		lt := typ.LogicalType()
		var ct deprecated.ConvertedType = -1
		if p := typ.ConvertedType(); p != nil {
			ct = *p
		}
		want := ""
		switch k {
		case 0, 1: // ids
			switch pc.kind {
			case parquet.Int32, parquet.Int64, parquet.ByteArray, parquet.FixedLenByteArray:
			default:
				want = "integer or string ids"
			}
		case 2: // rating
			if lt != nil {
				if d, ok := lt.Value.(*format.DecimalType); ok {
					pc.scale = math.Pow10(int(d.Scale))
				}
			}
			switch pc.kind {
			case parquet.Int32, parquet.Int64, parquet.Float, parquet.Double, parquet.ByteArray:
			default:
				want = "numbers"
			}
		case 3: // time
			if lt != nil {
				switch v := lt.Value.(type) {
				case *format.TimestampType:
					pc.perSecond = int64(1e9 / v.Unit.Value.Duration())
				case *format.DateType:
					pc.date = true
				}
			}
			switch ct {
			case deprecated.TimestampMillis:
				pc.perSecond = 1000
			case deprecated.TimestampMicros:
				pc.perSecond = 1000000
			case deprecated.Date:
				pc.date = true
			}
			switch pc.kind {
			case parquet.Int32, parquet.Int64, parquet.Int96, parquet.Float, parquet.Double, parquet.ByteArray:
			default:
				want = "times"
			}
			tf := TimeUnix
			if l != nil {
				tf = l.TimeFormat
			}
			numeric := pc.kind != parquet.ByteArray && pc.kind != parquet.Int96 && pc.perSecond == 0 && !pc.date
			if numeric && tf != TimeUnix && tf != TimeUnixMS {
				return out, fmt.Errorf("column %s (%s) holds %s numbers; time_format %q reads text: use unix or unix_ms", safetext.Quote(name), key(k), pc.kind, tf)
			}
		}
		if want != "" {
			return out, fmt.Errorf("column %s (%s) is of type %s; want %s", safetext.Quote(name), key(k), typ, want)
		}
		out[k] = pc
	}
	return out, nil
}

// colCursor reads the values of one column chunk in order.
type colCursor struct {
	pages parquet.Pages
	page  parquet.Page
	vals  parquet.ValueReader
	buf   []parquet.Value
	pos   int
	n     int
}

func (c *colCursor) next() (parquet.Value, error) {
	for c.pos == c.n {
		if c.vals == nil {
			if c.page != nil {
				parquet.Release(c.page)
				c.page = nil
			}
			p, err := c.pages.ReadPage()
			if err != nil {
				if errors.Is(err, io.EOF) {
					return parquet.Value{}, io.ErrUnexpectedEOF
				}
				return parquet.Value{}, err
			}
			c.page, c.vals = p, p.Values()
		}
		n, err := c.vals.ReadValues(c.buf)
		c.pos, c.n = 0, n
		if errors.Is(err, io.EOF) {
			c.vals = nil
		} else if err != nil {
			return parquet.Value{}, err
		}
	}
	v := c.buf[c.pos]
	c.pos++
	return v, nil
}

func (c *colCursor) close() {
	if c.page != nil {
		parquet.Release(c.page)
	}
	c.pages.Close()
}

// ingestParquet reads the four columns of a Parquet table into c, row group by row
// group; limit > 0 stops after that many rows. Errors name the file, the row (1-based)
// and the column.
func ingestParquet(ctx context.Context, f *os.File, name string, l *Layout, c *collector, limit int64) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("ingest %s: %w", name, err)
	}
	pf, err := parquet.OpenFile(f, fi.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return fmt.Errorf("ingest %s: parquet: %w", name, err)
	}
	cols, err := resolveParquet(pf.Schema(), l)
	if err != nil {
		return fmt.Errorf("ingest %s: %w", name, err)
	}
	c.st.Layout, c.st.Compression, c.st.Bytes = LayoutParquet, "none", fi.Size()
	conv := newParquetConverter(l, cols)
	var row int64 // rows read before this one
	rows := make([]Rating, 0, ReadBatch)
	var texts []textID
	var arena []byte
	for _, rg := range pf.RowGroups() {
		if limit > 0 && row >= limit {
			break
		}
		chunks := rg.ColumnChunks()
		var cur [4]*colCursor
		for k := range cols {
			cur[k] = &colCursor{pages: chunks[cols[k].index].Pages(), buf: make([]parquet.Value, 1024)}
		}
		err := func() error {
			defer func() {
				for _, cc := range cur {
					cc.close()
				}
			}()
			for range rg.NumRows() {
				if limit > 0 && row >= limit {
					break
				}
				var vals [4]parquet.Value
				for k := range cur {
					v, err := cur[k].next()
					if err != nil {
						return fmt.Errorf("ingest %s: row %d: column %s: %w", name, row+1, safetext.Quote(cols[k].name), err)
					}
					vals[k] = v
				}
				r, err := conv.row(vals, int32(len(rows)), &texts, &arena)
				if err != nil {
					return fmt.Errorf("ingest %s: row %d: %w", name, row+1, err)
				}
				rows = append(rows, r)
				row++
				if len(rows) == cap(rows) {
					if err := ctx.Err(); err != nil {
						return err
					}
					if err := c.add(rows, texts, arena); err != nil {
						return fmt.Errorf("ingest %s: %w", name, err)
					}
					rows, texts, arena = rows[:0], texts[:0], arena[:0]
				}
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	if err := c.add(rows, texts, arena); err != nil {
		return fmt.Errorf("ingest %s: %w", name, err)
	}
	return nil
}

// parquetConverter turns the four values of a row into a Rating.
type parquetConverter struct {
	cols   [4]parquetColumn
	names  [4]string
	intIDs bool
	time   timeParser
	format string
}

func newParquetConverter(l *Layout, cols [4]parquetColumn) *parquetConverter {
	pc := &parquetConverter{cols: cols, format: TimeUnix}
	if l != nil {
		pc.intIDs, pc.format = l.IntIDs, l.TimeFormat
	}
	pc.time.format = pc.format
	for k := range cols {
		pc.names[k] = cols[k].name
	}
	return pc
}

func (pc *parquetConverter) row(v [4]parquet.Value, row int32, texts *[]textID, arena *[]byte) (Rating, error) {
	var r Rating
	for k := range v {
		if v[k].IsNull() {
			return r, &FieldError{Field: pc.names[k], Err: errors.New("null")}
		}
	}
	for k, item := range []bool{false, true} {
		code, text, err := pc.id(v[k])
		if err != nil {
			return r, &FieldError{Field: pc.names[k], Err: err}
		}
		if text != nil {
			off := int32(len(*arena))
			*arena = append(*arena, text...)
			*texts = append(*texts, textID{row: row, item: item, off: off, end: int32(len(*arena))})
		}
		if item {
			r.Item = code
		} else {
			r.User = code
		}
	}
	var err error
	if r.Rating, err = pc.rating(v[2]); err != nil {
		return r, &FieldError{Field: pc.names[2], Err: err}
	}
	if r.Timestamp, err = pc.timestamp(v[3]); err != nil {
		return r, &FieldError{Field: pc.names[3], Err: err}
	}
	if r.Timestamp > maxUnixSeconds || r.Timestamp < -maxUnixSeconds {
		return r, &FieldError{Field: pc.names[3], Err: fmt.Errorf("%d is out of range: unix seconds within ±%d", r.Timestamp, int64(maxUnixSeconds))}
	}
	return r, nil
}

// id converts an id value: integers in int32 range (non-negative unless IntIDs) are their
// own code, other integers and strings are text for the dictionary.
func (pc *parquetConverter) id(v parquet.Value) (int32, []byte, error) {
	var n int64
	switch v.Kind() {
	case parquet.Int32:
		n = int64(v.Int32())
	case parquet.Int64:
		n = v.Int64()
	default: // byte arrays
		return parseID(v.ByteArray(), pc.intIDs)
	}
	if pc.intIDs {
		if n < math.MinInt32 || n > math.MaxInt32 {
			return 0, nil, errOutOfRange
		}
		return int32(n), nil, nil
	}
	if n >= 0 && n <= math.MaxInt32 {
		return int32(n), nil, nil
	}
	return 0, strconv.AppendInt(nil, n, 10), nil
}

func (pc *parquetConverter) rating(v parquet.Value) (float32, error) {
	var x float64
	switch v.Kind() {
	case parquet.Int32:
		x = float64(v.Int32())
	case parquet.Int64:
		x = float64(v.Int64())
	case parquet.Float:
		x = float64(v.Float())
	case parquet.Double:
		x = v.Double()
	default:
		return parseRating(v.ByteArray())
	}
	if s := pc.cols[2].scale; s != 0 {
		x /= s
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errNotFinite
	}
	return float32(x), nil
}

// julianUnixEpoch is the Julian day number of 1970-01-01 (INT96 timestamps).
const julianUnixEpoch = 2440588

func (pc *parquetConverter) timestamp(v parquet.Value) (int64, error) {
	col := pc.cols[3]
	floorDiv := func(a, b int64) int64 {
		q := a / b
		if a%b < 0 {
			q--
		}
		return q
	}
	var n int64
	switch v.Kind() {
	case parquet.Int96:
		i := v.Int96()
		nanos := int64(uint64(i[1])<<32 | uint64(i[0]))
		return (int64(i[2])-julianUnixEpoch)*86400 + floorDiv(nanos, 1e9), nil
	case parquet.Int32:
		n = int64(v.Int32())
	case parquet.Int64:
		n = v.Int64()
	case parquet.Float, parquet.Double:
		x := v.Double()
		if v.Kind() == parquet.Float {
			x = float64(v.Float())
		}
		if pc.format == TimeUnixMS {
			x /= 1000
		}
		if math.IsNaN(x) || math.Abs(x) > maxUnixSeconds {
			return 0, fmt.Errorf("%v is not a time in range", x)
		}
		return int64(math.Floor(x)), nil
	default:
		return pc.time.parse(v.ByteArray())
	}
	switch {
	case col.date:
		return n * 86400, nil
	case col.perSecond > 0:
		return floorDiv(n, col.perSecond), nil
	case pc.format == TimeUnixMS:
		return floorDiv(n, 1000), nil
	}
	return n, nil
}
