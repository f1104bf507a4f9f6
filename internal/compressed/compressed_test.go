package compressed

import (
	"bytes"
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
