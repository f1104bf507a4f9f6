package compressed

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// FuzzDetect: Detect names the kind of any head, a longer head of the same
// data says the same, and NewReaderLimit opens the data as that kind and
// reads it to its end or an error, never past its limit, never panicking
// (.ci/fuzz.sh).
func FuzzDetect(f *testing.F) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte("userId,movieId,rating,timestamp\n1,1,4.0,1\n"))
	w.Close()
	for _, b := range [][]byte{nil, {0x1f}, gz.Bytes(), {0x28, 0xb5, 0x2f, 0xfd, 0}, []byte("userId,movieId")} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k := Detect(data)
		if k.String() == "" {
			t.Fatalf("Detect(% x) = %d: no name", data, k)
		}
		for n := 4; n < len(data); n++ {
			if Detect(data[:n]) != k {
				t.Fatalf("Detect of the first %d bytes %v, of all %v", n, Detect(data[:n]), k)
			}
		}
		const limit = 1 << 20
		rc, kind, err := NewReaderLimit(bytes.NewReader(data), limit)
		if err != nil {
			return
		}
		defer rc.Close()
		if kind != k {
			t.Fatalf("NewReaderLimit opened %v, Detect says %v", kind, k)
		}
		n, _ := io.Copy(io.Discard, rc)
		if n > limit {
			t.Fatalf("read %d bytes past the limit %d", n, limit)
		}
	})
}
