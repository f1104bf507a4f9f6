package movielens

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"golang.org/x/sync/errgroup"
)

// IngestOptions tunes Ingest. The zero value means defaults.
type IngestOptions struct {
	Workers      int // parser goroutines; default runtime.GOMAXPROCS(0)
	RowGroupSize int // rows per Parquet row group; default DefaultRowGroupSize
	BlockBytes   int // bytes of text per parse block; default 1 MiB (lines longer are an error)
}

// Stats describes an ingested ratings table.
type Stats struct {
	Format           Format
	Ratings          int64 // rows written
	Bytes            int64 // bytes of (decompressed) text read
	Users, Items     int   // distinct ids
	MinTime, MaxTime int64 // unix seconds; 0, 0 when there are no ratings
}

const defaultBlockBytes = 1 << 20

// Ingest streams the ratings text file src (u.data, ratings.dat or ratings.csv, detected from
// the content; gzip detected from the magic bytes) into the Parquet table dst of Rating rows,
// in input order. Memory is bounded by a few blocks per worker plus one row group. Blank lines
// are skipped; a malformed line stops the ingest with an error naming src, the line number
// (1-based) and the field. dst is written through dst.tmp-* and renamed when complete.
func Ingest(ctx context.Context, src, dst string, opts IngestOptions) (Stats, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	blockBytes := opts.BlockBytes
	if blockBytes <= 0 {
		blockBytes = defaultBlockBytes
	}
	f, err := os.Open(src)
	if err != nil {
		return Stats{}, fmt.Errorf("ingest: %w", err)
	}
	defer f.Close()
	text, err := textReader(f)
	if err != nil {
		return Stats{}, fmt.Errorf("ingest %s: %w", src, err)
	}
	defer text.Close()
	body, bom := skipBOM(text)

	var st Stats
	err = writeTable(dst, opts.RowGroupSize, func(w *tableWriter[Rating]) error {
		var err error
		st, err = ingest(ctx, src, body, w, workers, blockBytes)
		st.Bytes += bom
		if err == nil && st.Ratings == 0 {
			// Say it here, naming the user's file: the stages after
			// ingest only see an empty table in the cache.
			err = fmt.Errorf("ingest %s: no ratings (only a header or blank lines)", src)
		}
		return err
	})
	if err != nil {
		return Stats{}, err
	}
	return st, nil
}

// skipBOM drops a UTF-8 byte-order mark at the start of r, whatever the format, and
// says how many bytes it dropped (Stats.Bytes counts them).
func skipBOM(r io.Reader) (io.Reader, int64) {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
		return br, int64(len(utf8BOM))
	}
	return br, 0
}

// textReader returns the decompressed text of f.
func textReader(f io.Reader) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(f, 1<<16)
	magic, err := br.Peek(2)
	if err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	}
	return io.NopCloser(br), nil
}

type block struct {
	data []byte
	line int64 // number of the first line, 1-based
	rows []Rating
	err  error
	done chan struct{}
}

func ingest(ctx context.Context, name string, text io.Reader, w *tableWriter[Rating], workers, blockBytes int) (Stats, error) {
	st := Stats{}
	g, ctx := errgroup.WithContext(ctx)
	inflight := 2 * workers
	work := make(chan *block, inflight)
	order := make(chan *block, inflight)
	free := make(chan *block, inflight+2)
	for range inflight + 2 {
		free <- &block{data: make([]byte, 0, blockBytes+1024)}
	}

	// Reader: cut the text into blocks of whole lines, in order.
	first := make([]byte, 0, 4096)
	formatKnown := make(chan Format, 1)
	header := int64(0) // the header line of a ratings.csv; 0: none. Set before formatKnown.
	g.Go(func() error {
		defer close(work)
		defer close(order)
		var carry []byte
		line := int64(1)
		var format Format
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
			b.data, b.line, b.rows, b.err = buf[:cut], line, b.rows[:0], nil
			if format == FormatUnknown {
				first = append(first, b.data[:min(len(b.data), cap(first))]...)
				var err error
				var n int64
				if format, n, err = detectFormat(first); err != nil {
					return fmt.Errorf("ingest %s: %w", name, err)
				}
				if format.hasHeader() {
					header = n
				}
				formatKnown <- format
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
	})

	// Parsers.
	var format Format
	select {
	case format = <-formatKnown:
	case <-ctx.Done():
		return st, g.Wait()
	}
	for range workers {
		g.Go(func() error {
			for b := range work {
				b.rows, b.err = parseBlock(b.rows[:0], b.data, b.line, format, header)
				close(b.done)
			}
			return nil
		})
	}

	// Writer, in input order.
	g.Go(func() error {
		users, items := newIDSet(), newIDSet()
		for b := range order {
			select {
			case <-b.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if b.err != nil {
				return fmt.Errorf("ingest %s:%w", name, b.err)
			}
			st.Bytes += int64(len(b.data))
			for i := range b.rows {
				r := &b.rows[i]
				users.add(r.User)
				items.add(r.Item)
				if st.Ratings == 0 && i == 0 {
					st.MinTime, st.MaxTime = r.Timestamp, r.Timestamp
				}
				st.MinTime = min(st.MinTime, r.Timestamp)
				st.MaxTime = max(st.MaxTime, r.Timestamp)
			}
			if len(b.rows) > 0 {
				if _, err := w.Write(b.rows); err != nil {
					return fmt.Errorf("ingest %s: write: %w", name, err)
				}
			}
			st.Ratings += int64(len(b.rows))
			free <- b
		}
		st.Users, st.Items = users.len(), items.len()
		return nil
	})
	err := g.Wait()
	st.Format = format
	return st, err
}

// parseBlock appends the ratings of the lines in data (first line number line) to dst,
// skipping blank lines and line number header (0: none). Errors read "<line>: field
// <name>: <cause>".
func parseBlock(dst []Rating, data []byte, line int64, f Format, header int64) ([]Rating, error) {
	sep := f.sep()
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
		r, err := parseFields(l, sep)
		if err != nil {
			return dst, fmt.Errorf("%d: %w", line, err)
		}
		dst = append(dst, r)
		line++
	}
	return dst, nil
}

// idSet counts distinct int32 ids: a bitmap for ids in [0, 1<<26), a map beyond.
type idSet struct {
	bits  []uint64
	other map[int32]struct{}
	n     int
}

const idSetDense = 1 << 26

func newIDSet() *idSet { return &idSet{other: map[int32]struct{}{}} }

func (s *idSet) add(id int32) {
	if id < 0 || id >= idSetDense {
		if _, ok := s.other[id]; !ok {
			s.other[id] = struct{}{}
			s.n++
		}
		return
	}
	w := int(id) >> 6
	if w >= len(s.bits) {
		n := max(2*len(s.bits), w+1, 1024)
		s.bits = append(s.bits, make([]uint64, n-len(s.bits))...)
	}
	m := uint64(1) << (uint(id) & 63)
	if s.bits[w]&m == 0 {
		s.bits[w] |= m
		s.n++
	}
}

func (s *idSet) len() int { return s.n }
