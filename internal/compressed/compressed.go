// Package compressed opens input files that may be gzip or zstd compressed, recognised
// from their first bytes (not their names), through klauspost/compress.
package compressed

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

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

// NewReader returns the decompressed content of r: gzip (every member of a multi-member
// file) or zstd when r starts with their magic bytes, r itself (buffered) otherwise.
// Close releases the decoder; it does not close r.
func NewReader(r io.Reader) (io.ReadCloser, Kind, error) {
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
		return zr, k, nil
	case Zstd:
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, k, fmt.Errorf("zstd: %w", err)
		}
		return zr.IOReadCloser(), k, nil
	}
	return io.NopCloser(br), None, nil
}
