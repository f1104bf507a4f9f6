package compressed

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func TestNewReader(t *testing.T) {
	text := []byte("userId,movieId,rating,timestamp\n1,2,3.5,4\n")
	var gz bytes.Buffer
	for _, part := range [][]byte{text[:10], text[10:]} { // two gzip members
		w := gzip.NewWriter(&gz)
		w.Write(part)
		w.Close()
	}
	var zs bytes.Buffer
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(text)
	zw.Close()
	for _, tc := range []struct {
		name string
		in   []byte
		want []byte
		kind Kind
	}{
		{"plain", text, text, None},
		{"gzip, two members", gz.Bytes(), text, Gzip},
		{"zstd", zs.Bytes(), text, Zstd},
		{"empty", nil, nil, None},
		{"short", []byte{0x1f}, []byte{0x1f}, None},
	} {
		r, k, err := NewReader(bytes.NewReader(tc.in))
		if err != nil || k != tc.kind {
			t.Fatalf("%s: kind %v, %v; want %v", tc.name, k, err, tc.kind)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: %q, %v", tc.name, got, err)
		}
	}
	// A corrupt stream is an error when read, not garbage.
	bad := append([]byte(nil), gz.Bytes()...)
	bad[len(bad)/2] ^= 0xff
	r, _, err := NewReader(bytes.NewReader(bad))
	if err == nil {
		_, err = io.ReadAll(r)
	}
	if err == nil {
		t.Error("a corrupt gzip stream read without an error")
	}
}

// A gzip or zstd bomb stops with a *LimitError once the reader has passed the limit
// (round 3, item 7); content of exactly the limit reads whole; plain input is not
// limited; the default limit is 100 times the compressed size, at least 64 MiB.
func TestLimit(t *testing.T) {
	const limit = 1 << 20
	bomb := bytes.Repeat([]byte("1,1,5,1000000000\n"), 4<<20/17) // 4 MiB of one row
	var gz, zs bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(bomb)
	w.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(bomb)
	zw.Close()
	for _, tc := range []struct {
		name string
		in   []byte
		kind Kind
	}{{"gzip", gz.Bytes(), Gzip}, {"zstd", zs.Bytes(), Zstd}} {
		r, k, err := NewReaderLimit(bytes.NewReader(tc.in), limit)
		if err != nil || k != tc.kind {
			t.Fatalf("%s: %v, %v", tc.name, k, err)
		}
		n, err := io.Copy(io.Discard, r)
		r.Close()
		var le *LimitError
		if n != limit || !errors.As(err, &le) || le.Limit != limit || le.Kind != tc.kind || !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: read %d bytes, %v; want %d bytes and a *LimitError", tc.name, n, err, limit)
		}
		// Exactly the limit is not over it.
		r, _, _ = NewReaderLimit(bytes.NewReader(tc.in), int64(len(bomb)))
		if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, bomb) {
			t.Errorf("%s at exactly its size: %d bytes, %v", tc.name, len(got), err)
		}
	}
	r, _, _ := NewReaderLimit(bytes.NewReader(bomb), 10)
	if got, err := io.ReadAll(r); err != nil || len(got) != len(bomb) {
		t.Errorf("plain input: %d bytes, %v; want it whole", len(got), err)
	}
	for size, want := range map[int64]int64{0: 64 << 20, 1 << 20: 100 << 20, 3 << 30: 300 << 30, 1 << 62: 1 << 62} {
		if got := DefaultLimit(size); got != want {
			t.Errorf("DefaultLimit(%d) = %d, want %d", size, got, want)
		}
	}
}

// Whatever the content and the limit, a limited reader gives the content's first bytes:
// all of them when they fit in the limit, else exactly limit bytes and a *LimitError.
func FuzzLimit(f *testing.F) {
	f.Add([]byte("1,1,5,1000000000\n"), uint16(5), false)
	f.Add([]byte{}, uint16(1), true)
	f.Fuzz(func(t *testing.T, content []byte, limit uint16, zst bool) {
		if limit == 0 {
			return // 0 is the default limit
		}
		var b bytes.Buffer
		if zst {
			w, _ := zstd.NewWriter(&b)
			w.Write(content)
			w.Close()
		} else {
			w := gzip.NewWriter(&b)
			w.Write(content)
			w.Close()
		}
		r, _, err := NewReaderLimit(bytes.NewReader(b.Bytes()), int64(limit))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if len(content) <= int(limit) {
			if err != nil || !bytes.Equal(got, content) {
				t.Fatalf("%d bytes under a limit of %d: %d bytes, %v", len(content), limit, len(got), err)
			}
			return
		}
		if !errors.Is(err, ErrTooLarge) || !bytes.Equal(got, content[:limit]) {
			t.Fatalf("%d bytes over a limit of %d: %d bytes, %v", len(content), limit, len(got), err)
		}
	})
}
