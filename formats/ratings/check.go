package ratings

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"goldstone/internal/compressed"
)

// Bounds of CheckTable: the text it reads, the Parquet rows it converts.
const (
	checkBytes = 64 << 10
	checkRows  = 1000
)

// CheckTable reads the header and the first rows of the ratings table path (the first
// 64 KiB of its text, or its first 1000 Parquet rows) with layout l (nil: a MovieLens
// layout recognised from the first line), as Ingest would, so that a table that does not
// match its settings stops before anything runs. The error names the file, the line and
// the column or setting.
func CheckTable(ctx context.Context, path string, l *Layout) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var magic [4]byte
	n, _ := io.ReadFull(f, magic[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	c := newCollector(&Stats{})
	if n == 4 && bytes.Equal(magic[:], parquetMagic) {
		return ingestParquet(ctx, f, path, l, c, checkRows)
	}
	text, _, err := compressed.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer text.Close()
	body, _ := skipBOM(text)
	head := make([]byte, checkBytes)
	k, err := io.ReadFull(body, head)
	head = head[:k]
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	default: // whole lines only
		if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
			head = head[:i+1]
		}
	}
	t, err := resolveText(l, head)
	if err != nil {
		return fmt.Errorf("%s:%w", path, lineSep(err))
	}
	b := &block{data: head, line: 1}
	if err := parseBlock(b, t.parser(), t.header); err != nil {
		return fmt.Errorf("%s:%w", path, err)
	}
	if len(b.rows) == 0 && k < checkBytes {
		return fmt.Errorf("%s: no ratings (only a header or blank lines)", path)
	}
	return nil
}

// RatingCounts reads the whole ratings table path with layout l (nil: a MovieLens layout
// recognised from the first line) as Ingest would, within opts' limits, and returns its
// ratings counted by value (duplicate rows included: the ingest drops them later). It
// keeps one count per distinct rating and stores nothing else; opts.Workers parse.
func RatingCounts(ctx context.Context, path string, l *Layout, opts IngestOptions) (map[float32]int64, error) {
	workers, blockBytes := opts.parallelism()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var magic [4]byte
	n, _ := io.ReadFull(f, magic[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	c := newCollector(&Stats{})
	c.hist = map[float32]int64{}
	if c.maxRows = opts.MaxRows; c.maxRows <= 0 {
		c.maxRows = DefaultMaxRows
	}
	if n == 4 && bytes.Equal(magic[:], parquetMagic) {
		err = ingestParquet(ctx, f, path, l, c, 0)
	} else {
		var text io.ReadCloser
		if text, _, err = compressed.NewReaderLimit(f, opts.MaxBytes); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer text.Close()
		body, _ := skipBOM(text)
		err = ingestText(ctx, path, body, l, c, workers, blockBytes)
	}
	if err != nil {
		return nil, err
	}
	return c.hist, nil
}
