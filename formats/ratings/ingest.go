package ratings

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"goldstone/internal/atomicfile"
	"goldstone/internal/compressed"
	"goldstone/internal/safetext"
)

// IngestOptions tunes Ingest. The zero value means defaults.
type IngestOptions struct {
	Workers      int // parser goroutines; default runtime.GOMAXPROCS(0)
	RowGroupSize int // rows per Parquet row group; default DefaultRowGroupSize
	BlockBytes   int // bytes of text per parse block; default 1 MiB (lines longer are an error)
	// Layout of the table; nil recognises a MovieLens layout from the first line (a
	// Parquet table: columns userId, movieId, rating, timestamp).
	Layout *Layout
	// MaxBytes bounds what a gzip or zstd table may decompress to (the setting
	// max_input_bytes); 0: compressed.DefaultLimit of its size.
	MaxBytes int64
	// MaxRows bounds the rows read (max_input_rows); 0: DefaultMaxRows.
	MaxRows int64
}

// DefaultMaxRows is the default of IngestOptions.MaxRows: 2^31 rows, 16 GiB of row
// hashes for the duplicate check (ml-32m has 32 million).
const DefaultMaxRows = 1 << 31

// Stats describes an ingested ratings table (the ingest stage's ingest.json).
type Stats struct {
	Format      Format `json:"-"`           // the MovieLens layout; FormatUnknown for others
	Layout      string `json:"layout"`      // u.data, ratings.dat, ratings.csv, custom or parquet
	Compression string `json:"compression"` // none, gzip or zstd
	Ratings     int64  `json:"ratings"`     // rows written
	Bytes       int64  `json:"bytes"`       // bytes of (decompressed) text read; a Parquet file's size
	Users       int    `json:"users"`       // distinct ids
	Items       int    `json:"items"`
	TextUsers   int    `json:"text_user_ids"` // of them, ids coded through the dictionary (IDName)
	TextItems   int    `json:"text_item_ids"`
	MinTime     int64  `json:"min_time"` // unix seconds; 0, 0 when there are no ratings
	MaxTime     int64  `json:"max_time"`
	// Duplicates counts the rows dropped because a later row has the same user, item and
	// time (the last one is kept).
	Duplicates int64 `json:"duplicates_dropped"`
	// Before1970 and After2100 count the kept rows with a time before 1970-01-01 (a
	// negative unix time) and from 2100-01-01 on: not errors, but often a sign of a wrong
	// time_format (milliseconds read as seconds) or of missing values written as 0 or -1.
	Before1970 int64 `json:"times_before_1970"`
	After2100  int64 `json:"times_after_2100"`
}

// FirstLast returns MinTime and MaxTime as RFC 3339 UTC text.
func (s Stats) FirstLast() (string, string) {
	f := func(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }
	return f(s.MinTime), f(s.MaxTime)
}

const defaultBlockBytes = 1 << 20

// IDNamesPath returns where Ingest writes the id dictionary of dst: dst without
// ".parquet", plus ".ids.parquet".
func IDNamesPath(dst string) string { return strings.TrimSuffix(dst, ".parquet") + ".ids.parquet" }

// parquetMagic starts (and ends) every Parquet file.
var parquetMagic = []byte("PAR1")

// parallelism returns the parse workers and block size of opts, their
// defaults where they are zero.
func (opts IngestOptions) parallelism() (workers, blockBytes int) {
	workers, blockBytes = opts.Workers, opts.BlockBytes
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if blockBytes <= 0 {
		blockBytes = defaultBlockBytes
	}
	return workers, blockBytes
}

// Ingest reads the ratings table src into the Parquet table dst of Rating rows, in input
// order, and its id dictionary into IDNamesPath(dst) (IDName rows; empty when every id is
// a number). src is text (opts.Layout; nil recognises u.data, ratings.dat or ratings.csv
// from the first line), plain, gzip or zstd (recognised from the first bytes), or a
// Parquet file. Blank lines are skipped; a malformed line stops the ingest with an error
// naming src, the line number (1-based) and the field.
//
// Duplicates: of rows with the same user, item and time only the last is kept
// (Stats.Duplicates counts the others). Memory is bounded by a few blocks per worker, one
// row group and 8 bytes per row for that check (plus a second pass over the rows that
// have a duplicate). dst is written through a temporary file and renamed when complete.
func Ingest(ctx context.Context, src, dst string, opts IngestOptions) (Stats, error) {
	workers, blockBytes := opts.parallelism()
	f, err := os.Open(src)
	if err != nil {
		return Stats{}, fmt.Errorf("ingest: %w", err)
	}
	defer f.Close()
	var magic [4]byte
	n, _ := io.ReadFull(f, magic[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Stats{}, fmt.Errorf("ingest %s: %w", src, err)
	}
	isParquet := n == 4 && bytes.Equal(magic[:], parquetMagic)

	raw, err := atomicfile.Create(dst)
	if err != nil {
		return Stats{}, fmt.Errorf("ingest %s: %w", src, err)
	}
	defer raw.Abort()
	var st Stats
	c := newCollector(&st)
	if c.maxRows = opts.MaxRows; c.maxRows <= 0 {
		c.maxRows = DefaultMaxRows
	}
	bw := bufio.NewWriterSize(raw, 1<<20)
	err = WriteParquet(bw, dst, opts.RowGroupSize, func(w *TableWriter[Rating]) error {
		c.w = w
		if isParquet {
			return ingestParquet(ctx, f, src, opts.Layout, c, 0)
		}
		text, kind, err := compressed.NewReaderLimit(f, opts.MaxBytes)
		if err != nil {
			return fmt.Errorf("ingest %s: %w", src, err)
		}
		defer text.Close()
		st.Compression = kind.String()
		body, bom := skipBOM(text)
		err = ingestText(ctx, src, body, opts.Layout, c, workers, blockBytes)
		st.Bytes += bom
		return err
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return Stats{}, err
	}
	c.finish()
	if st.Ratings == 0 {
		// Say it here, naming the user's file: the stages after
		// ingest only see an empty table in the cache.
		return Stats{}, fmt.Errorf("ingest %s: no ratings (only a header or blank lines)", src)
	}
	if err := WriteTable(IDNamesPath(dst), 0, func(w *TableWriter[IDName]) error {
		_, err := w.Write(c.names())
		return err
	}); err != nil {
		return Stats{}, fmt.Errorf("ingest %s: %w", src, err)
	}
	if err := finishIngest(ctx, raw, dst, opts.RowGroupSize, workers, c); err != nil {
		os.Remove(IDNamesPath(dst)) // no dictionary without its table
		return Stats{}, fmt.Errorf("ingest %s: %w", src, err)
	}
	return st, nil
}

// finishIngest puts the first pass's table raw in place at dst, without the rows that a
// later row repeats.
func finishIngest(ctx context.Context, raw *atomicfile.File, dst string, rowGroup, workers int, c *collector) error {
	rep, err := c.repeatedHashes(ctx, workers)
	if err != nil {
		return err
	}
	if len(rep) == 0 {
		return raw.Commit()
	}
	if err := raw.Sync(); err != nil {
		return err
	}
	return dropDuplicates(ctx, raw.Name(), dst, rowGroup, rep, c)
}

// skipBOM drops a UTF-8 byte-order mark at the start of r, whatever the format, and
// says how many bytes it dropped (Stats.Bytes counts them).
func skipBOM(r io.Reader) (io.Reader, int64) {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(UTF8BOM)); err == nil && bytes.Equal(b, UTF8BOM) {
		br.Discard(len(UTF8BOM))
		return br, int64(len(UTF8BOM))
	}
	return br, 0
}

type block struct {
	data  []byte
	line  int64 // number of the first line, 1-based
	rows  []Rating
	texts []textID
	arena []byte
	err   error
	done  chan struct{}
}

// textTable is a text layout resolved against a file's first line.
type textTable struct {
	layout *Layout
	header int64 // line number of the header; 0: none
	idx    [4]int
	fields int
	names  [4]string
}

// resolveText resolves layout l (nil: recognise a MovieLens layout) against the first
// non-blank line of head, a block of whole lines from the start of the file.
func resolveText(l *Layout, head []byte) (*textTable, error) {
	if l == nil {
		f, _, err := detectFormat(head)
		if err != nil {
			return nil, err
		}
		pl := f.Layout()
		l = &pl
	}
	line, n, ok := firstLine(head)
	if !ok {
		return nil, errors.New("no ratings (the file is empty or blank)")
	}
	if l.OnlyTimeFormat {
		// time_format alone: still recognise a ratings.dat or u.data file (a
		// ratings.csv reads as the custom table it is).
		if f, err := formatOfLine(line); err == nil && f != FormatCSV {
			pl := f.Layout()
			pl.TimeFormat = l.TimeFormat
			l = &pl
		}
	}
	t := &textTable{layout: l}
	p := newLineParser(l, [4]int{}, 0, [4]string{})
	fld, err := p.splitLine(line)
	if err != nil {
		return nil, fmt.Errorf("%d: %w", n, err)
	}
	head0 := make([]string, len(fld))
	for i, f := range fld {
		head0[i] = string(f)
	}
	custom := l.Name == LayoutCustom
	switch {
	case l.Header:
		if l.Fields != 0 && len(head0) != l.Fields {
			return nil, fmt.Errorf("%d: header %s has %d columns separated by %q, layout %s has %d", n, safetext.Quote(line), len(head0), l.Delimiter, l.Name, l.Fields)
		}
		if t.idx, err = l.resolveHeader(head0); err != nil {
			return nil, fmt.Errorf("%d: %w%s", n, err, l.headerHint(line))
		}
		t.header, t.fields = n, len(head0)
		for k := range t.idx {
			t.names[k] = strings.TrimSpace(head0[t.idx[k]])
		}
	default:
		t.fields = l.Fields
		if t.fields == 0 {
			t.fields = len(head0)
		}
		for k, c := range l.columns() {
			if c.Pos > t.fields {
				return nil, fmt.Errorf("%d: %s = %d but the line has %d fields separated by %q%s", n, l.key(k), c.Pos, t.fields, l.Delimiter, l.headerHint(line))
			}
			t.idx[k] = c.Pos - 1
			t.names[k] = fmt.Sprintf("%d (%s)", c.Pos, columnKeys[k])
		}
	}
	if !custom {
		t.names = [4]string{FieldUser, FieldItem, FieldRating, FieldTimestamp}
	}
	return t, nil
}

// firstLine returns the first non-blank line of head (without its '\n' and '\r's) and its number.
func firstLine(head []byte) ([]byte, int64, bool) {
	n := int64(1)
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if !blankLine(line) {
			return trimCR(line), n, true
		}
		n++
	}
	return nil, 0, false
}

func (t *textTable) parser() *lineParser {
	return newLineParser(t.layout, t.idx, t.fields, t.names)
}

func ingestText(ctx context.Context, name string, text io.Reader, layout *Layout, c *collector, workers, blockBytes int) error {
	g, ctx := errgroup.WithContext(ctx)
	inflight := 2 * workers
	work := make(chan *block, inflight)
	order := make(chan *block, inflight)
	free := make(chan *block, inflight+2)
	for range inflight + 2 {
		free <- &block{data: make([]byte, 0, blockBytes+1024)}
	}

	// Reader: cut the text into blocks of whole lines, in order.
	tableKnown := make(chan *textTable, 1)
	g.Go(func() error {
		return readBlocks(ctx, name, text, layout, c, blockBytes, free, work, order, tableKnown)
	})

	// Parsers.
	var table *textTable
	select {
	case table = <-tableKnown:
	case <-ctx.Done():
		return g.Wait()
	}
	for range workers {
		g.Go(func() error {
			p := table.parser()
			for b := range work {
				b.err = parseBlock(b, p, table.header)
				close(b.done)
			}
			return nil
		})
	}

	// Writer, in input order.
	g.Go(func() error {
		for b := range order {
			select {
			case <-b.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if b.err != nil {
				return fmt.Errorf("ingest %s:%w", name, b.err)
			}
			if err := c.add(b.rows, b.texts, b.arena); err != nil {
				return fmt.Errorf("ingest %s: %w", name, err)
			}
			free <- b
		}
		return nil
	})
	return g.Wait()
}

// readBlocks is ingestText's reader: it cuts the text into blocks of whole
// lines, in order, sends each to order (the writer's queue) and work (the
// parsers'), and the table's layout, once the first block resolved it, to
// tableKnown.
func readBlocks(ctx context.Context, name string, text io.Reader, layout *Layout, c *collector, blockBytes int,
	free <-chan *block, work, order chan<- *block, tableKnown chan<- *textTable) error {
	defer close(work)
	defer close(order)
	var carry []byte
	line := int64(1)
	var table *textTable
	eof := false
	for !eof {
		var b *block
		select {
		case b = <-free:
		case <-ctx.Done():
			return ctx.Err()
		}
		buf := append(b.data[:0], carry...)
		for len(buf) < blockBytes && !eof {
			n, err := text.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if errors.Is(err, io.EOF) {
				eof = true
			} else if errors.Is(err, compressed.ErrTooLarge) {
				return fmt.Errorf("ingest %s: %w: raise max_input_bytes if the file is real data", name, err)
			} else if err != nil {
				return fmt.Errorf("ingest %s: read: %w", name, err)
			}
		}
		cut := len(buf)
		if !eof {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				return fmt.Errorf("ingest %s:%d: line longer than %d bytes", name, line, blockBytes)
			}
			cut = i + 1
		}
		carry = append(carry[:0], buf[cut:]...)
		b.data, b.line, b.rows, b.texts, b.arena, b.err = buf[:cut], line, b.rows[:0], b.texts[:0], b.arena[:0], nil
		c.st.Bytes += int64(len(b.data))
		if table == nil {
			var err error
			if table, err = resolveText(layout, b.data); err != nil {
				return fmt.Errorf("ingest %s:%w", name, lineSep(err))
			}
			c.st.Format, c.st.Layout = FormatUnknown, table.layout.Name
			if f, ok := presetFormat(table.layout.Name); ok {
				c.st.Format = f
			}
			tableKnown <- table
		}
		line += int64(bytes.Count(b.data, []byte{'\n'}))
		b.done = make(chan struct{})
		select {
		case order <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case work <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// lineSep formats an error of resolveText after "file:": a line number follows directly,
// anything else after a space.
func lineSep(err error) error {
	if s := err.Error(); s != "" && s[0] >= '0' && s[0] <= '9' {
		return err
	}
	return fmt.Errorf(" %w", err)
}

// parseBlock parses the lines of b (skipping blank lines and line number header, 0: none)
// into b.rows and b.texts. Errors read "<line>: field <name>: <cause>".
func parseBlock(b *block, p *lineParser, header int64) error {
	data, line := b.data, b.line
	for len(data) > 0 {
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		if line == header || blankLine(l) {
			line++
			continue
		}
		r, user, item, err := p.parse(l)
		if err != nil {
			return fmt.Errorf("%d: %w", line, err)
		}
		row := int32(len(b.rows))
		if user != nil {
			off := int32(len(b.arena))
			b.arena = append(b.arena, user...)
			b.texts = append(b.texts, textID{row: row, off: off, end: int32(len(b.arena))})
		}
		if item != nil {
			off := int32(len(b.arena))
			b.arena = append(b.arena, item...)
			b.texts = append(b.texts, textID{row: row, item: true, off: off, end: int32(len(b.arena))})
		}
		b.rows = append(b.rows, r)
		line++
	}
	return nil
}
