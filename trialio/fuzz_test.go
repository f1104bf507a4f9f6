package trialio

import (
	"bytes"
	"testing"
)

// FuzzReadNpyHeader: whatever the bytes, ReadNpyHeader returns a shape and
// an offset or an error, never panics; a shape it accepts has no negative
// dimension and its offset lies within what it read (.ci/fuzz.sh).
func FuzzReadNpyHeader(f *testing.F) {
	f.Add(append(NpyHeader(2, 3), make([]byte, 48)...))
	f.Add(NpyHeader())
	f.Add([]byte("\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"))
	f.Add([]byte("\x93NUMPY\x02\x00\x10\x00\x00\x00{'descr': '<f8', 'fortran_order': False, 'shape': (), }"))
	f.Add([]byte("\x93NUMPY\x01\x00\xff\xff"))
	f.Add([]byte("not npy"))
	f.Fuzz(func(t *testing.T, data []byte) {
		shape, off, err := ReadNpyHeader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, d := range shape {
			if d < 0 {
				t.Fatalf("shape %v accepted", shape)
			}
		}
		if off <= 0 || off > int64(len(data)) {
			t.Fatalf("offset %d of %d bytes", off, len(data))
		}
	})
}
