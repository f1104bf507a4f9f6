package trialio

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"goldstone/internal/atomicfile"
)

// Trained parameters are written as NumPy .npy files (format version 1.0):
// little-endian float64 ('<f8'), C order, the shape in the header, so that
// numpy.load, and any reader of the documented format, gets the array with
// its shape without a side file.

// npyMagic starts every .npy file; then the version bytes 1, 0.
const npyMagic = "\x93NUMPY"

// WriteNpy writes x, an array of the given shape in C (row-major) order, to
// path as a .npy file, atomically. The product of shape must be len(x).
func WriteNpy(path string, x []float64, shape ...int) error {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("write %s: negative dimension in shape %v", path, shape)
		}
		n *= d
	}
	if n != len(x) {
		return fmt.Errorf("write %s: shape %v holds %d values, have %d", path, shape, n, len(x))
	}
	if err := mkParent(path); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		if _, err := w.Write(npyHeader(shape)); err != nil {
			return err
		}
		buf := make([]byte, 1<<20)
		for lo := 0; lo < len(x); lo += len(buf) / 8 {
			hi := min(lo+len(buf)/8, len(x))
			for i, v := range x[lo:hi] {
				binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
			}
			if _, err := w.Write(buf[:8*(hi-lo)]); err != nil {
				return err
			}
		}
		return nil
	})
}

// NpyHeader returns the bytes before the data of a .npy file of float64
// with the given shape, for writers that stream the values themselves.
func NpyHeader(shape ...int) []byte { return npyHeader(shape) }

// npyHeader returns the magic, version, header length and header dict,
// padded with spaces and a newline so the data start at a multiple of 64.
func npyHeader(shape []int) []byte {
	var dims strings.Builder
	for _, d := range shape {
		dims.WriteString(strconv.Itoa(d))
		dims.WriteString(", ")
	}
	s := dims.String()
	if len(shape) > 1 {
		s = strings.TrimSuffix(s, " ")
		s = strings.TrimSuffix(s, ",")
	} else {
		s = strings.TrimSuffix(s, " ")
	}
	dict := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }", s)
	total := len(npyMagic) + 2 + 2 + len(dict) + 1
	pad := (64 - total%64) % 64
	h := make([]byte, 0, total+pad)
	h = append(h, npyMagic...)
	h = append(h, 1, 0)
	h = binary.LittleEndian.AppendUint16(h, uint16(len(dict)+pad+1))
	h = append(h, dict...)
	h = append(h, strings.Repeat(" ", pad)...)
	return append(h, '\n')
}

var (
	npyDescr = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyOrder = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// ReadNpy reads a .npy file of little-endian float64 in C order (as
// WriteNpy writes) and returns its values and shape. Errors name the file.
func ReadNpy(path string) ([]float64, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	x, shape, err := readNpy(r)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	return x, shape, nil
}

func readNpy(r io.Reader) ([]float64, []int, error) {
	shape, _, err := ReadNpyHeader(r)
	if err != nil {
		return nil, nil, err
	}
	n := 1
	for _, v := range shape {
		n *= v
	}
	x := make([]float64, n)
	buf := make([]byte, 1<<20)
	for lo := 0; lo < n; lo += len(buf) / 8 {
		hi := min(lo+len(buf)/8, n)
		if _, err := io.ReadFull(r, buf[:8*(hi-lo)]); err != nil {
			return nil, nil, fmt.Errorf("shape %v: data truncated: %w", shape, err)
		}
		for i := range x[lo:hi] {
			x[lo+i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
		}
	}
	if k, _ := r.Read(buf[:1]); k > 0 {
		return nil, nil, fmt.Errorf("shape %v: trailing data after %d values", shape, n)
	}
	return x, shape, nil
}

// ReadNpyHeader reads the header of a .npy file of little-endian float64 in
// C order from r and returns the shape and the offset of the data (r is
// left there).
func ReadNpyHeader(r io.Reader) (shape []int, offset int64, err error) {
	pre := make([]byte, len(npyMagic)+2)
	if _, err := io.ReadFull(r, pre); err != nil {
		return nil, 0, fmt.Errorf("not a .npy file: %w", err)
	}
	if string(pre[:len(npyMagic)]) != npyMagic {
		return nil, 0, fmt.Errorf("not a .npy file (bad magic)")
	}
	var hlen, lenBytes int
	switch major := pre[len(npyMagic)]; major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, 0, err
		}
		hlen, lenBytes = int(binary.LittleEndian.Uint16(b[:])), 2
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, 0, err
		}
		hlen, lenBytes = int(binary.LittleEndian.Uint32(b[:])), 4
	default:
		return nil, 0, fmt.Errorf(".npy format version %d not supported", major)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, 0, fmt.Errorf("truncated header: %w", err)
	}
	h := string(hb)
	d := npyDescr.FindStringSubmatch(h)
	if d == nil || d[1] != "<f8" {
		return nil, 0, fmt.Errorf("header %q: want 'descr': '<f8' (little-endian float64)", strings.TrimSpace(h))
	}
	if o := npyOrder.FindStringSubmatch(h); o == nil || o[1] != "False" {
		return nil, 0, fmt.Errorf("header %q: want 'fortran_order': False", strings.TrimSpace(h))
	}
	sm := npyShape.FindStringSubmatch(h)
	if sm == nil {
		return nil, 0, fmt.Errorf("header %q: no shape", strings.TrimSpace(h))
	}
	for _, f := range strings.Split(sm[1], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 {
			return nil, 0, fmt.Errorf("header %q: bad dimension %q", strings.TrimSpace(h), f)
		}
		shape = append(shape, v)
	}
	return shape, int64(len(pre) + lenBytes + hlen), nil
}
