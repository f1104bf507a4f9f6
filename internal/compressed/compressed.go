// Package compressed opens input files that may be gzip or zstd compressed, recognised
// from their first bytes (not their names), through klauspost/compress.
//
// Invariant: what a compressed input decompresses to is bounded (a gzip or zstd bomb
// stops with a *LimitError, not with the machine's memory or disk): by the caller's
// limit, else by DefaultLimit of the compressed size. The decoders stream: memory holds
// a buffer and the decoder's window (zstd: at most 512 MiB, klauspost's default), never
// the whole content.
package compressed

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Kind is how an input is compressed.
type Kind int

const (
	None Kind = iota
	Gzip
	Zstd
)

func (k Kind) String() string { return [...]string{"none", "gzip", "zstd"}[k] }

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// Detect says how data starting with head is compressed.
func Detect(head []byte) Kind {
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		return Gzip
	case bytes.HasPrefix(head, zstdMagic):
		return Zstd
	}
	return None
}

// The default cap on what a compressed input may decompress to (DefaultLimit): real
// text compresses 3 to 10 times (MovieLens ratings.csv about 5 times with gzip, Google
// n-gram files 5 to 8), a gzip bomb about 1000 times, a zstd one far more.
const (
	DefaultMaxRatio = 100
	DefaultMinBytes = 64 << 20
)

// DefaultLimit is the default cap for a compressed input of size bytes: DefaultMaxRatio
// times its size, at least DefaultMinBytes.
func DefaultLimit(size int64) int64 {
	if size > (1<<62)/DefaultMaxRatio {
		return 1 << 62
	}
	return max(DefaultMinBytes, DefaultMaxRatio*size)
}

// LimitError is a compressed input that decompresses to more than Limit bytes.
type LimitError struct {
	Kind  Kind
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v content larger than %d bytes (a decompression bomb, or a larger file than the limit allows)", e.Kind, e.Limit)
}

// ErrTooLarge is matched by every *LimitError (errors.Is).
var ErrTooLarge = errors.New("decompressed content over the limit")

func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// NewReader is NewReaderLimit with the default limit.
func NewReader(r io.Reader) (io.ReadCloser, Kind, error) { return NewReaderLimit(r, 0) }

// NewReaderLimit returns the decompressed content of r: gzip (every member of a
// multi-member file) or zstd when r starts with their magic bytes, r itself (buffered)
// otherwise. Compressed content longer than limit bytes ends in a *LimitError once the
// reader has passed limit bytes; limit <= 0 means DefaultLimit of r's size where r is a
// file (Stat), else DefaultMinBytes. Plain input is not limited (its size is on disk).
// Close releases the decoder; it does not close r.
func NewReaderLimit(r io.Reader, limit int64) (io.ReadCloser, Kind, error) {
	if limit <= 0 {
		limit = DefaultMinBytes
		if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				limit = DefaultLimit(fi.Size())
			}
		}
	}
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(len(zstdMagic))
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, None, err
	}
	switch k := Detect(head); k {
	case Gzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, k, fmt.Errorf("gzip: %w", err)
		}
		return &limited{rc: zr, kind: k, left: limit, limit: limit}, k, nil
	case Zstd:
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, k, fmt.Errorf("zstd: %w", err)
		}
		return &limited{rc: zr.IOReadCloser(), kind: k, left: limit, limit: limit}, k, nil
	}
	return io.NopCloser(br), None, nil
}

// limited reads at most limit bytes of rc, then a *LimitError if more follow.
type limited struct {
	rc          io.ReadCloser
	kind        Kind
	left, limit int64
	err         error
}

func (l *limited) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if l.left == 0 {
		// At the limit: the content may end exactly here.
		var one [1]byte
		n, err := l.rc.Read(one[:])
		for n == 0 && err == nil {
			n, err = l.rc.Read(one[:])
		}
		if n > 0 {
			l.err = &LimitError{Kind: l.kind, Limit: l.limit}
			return 0, l.err
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *limited) Close() error { return l.rc.Close() }
