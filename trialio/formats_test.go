package trialio

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNpyHeader checks the bytes of a .npy file against the format
// (numpy/lib/format.py, version 1.0): magic, version, header length, a
// Python dict literal padded to a 64-byte boundary, then the data.
func TestNpyHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.npy")
	x := []float64{1, 2, 3, 4, 5, math.Inf(-1)}
	if err := WriteNpy(path, x, 2, 3); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x93NUMPY\x01\x00")) {
		t.Fatalf("magic/version: % x", b[:8])
	}
	hlen := int(binary.LittleEndian.Uint16(b[8:10]))
	if (10+hlen)%64 != 0 {
		t.Errorf("data offset %d is not a multiple of 64", 10+hlen)
	}
	h := string(b[10 : 10+hlen])
	if want := "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"; strings.TrimRight(h, " \n") != want || !strings.HasSuffix(h, "\n") {
		t.Errorf("header %q, want %q padded with spaces and a newline", h, want)
	}
	if shape, off, err := ReadNpyHeader(bytes.NewReader(b)); err != nil || off != int64(10+hlen) || len(shape) != 2 || shape[0] != 2 || shape[1] != 3 {
		t.Errorf("ReadNpyHeader: shape %v, offset %d, %v; want [2 3], %d", shape, off, err, 10+hlen)
	}
	if len(b) != 10+hlen+8*len(x) {
		t.Fatalf("file has %d bytes, want %d", len(b), 10+hlen+8*len(x))
	}
	if v := math.Float64frombits(binary.LittleEndian.Uint64(b[10+hlen+8:])); v != 2 {
		t.Errorf("second value %v, want 2", v)
	}
	for _, c := range []struct {
		shape []int
		want  string
	}{{[]int{7}, "(7,)"}, {nil, "()"}, {[]int{2, 0, 4}, "(2, 0, 4)"}} {
		if h := string(npyHeader(c.shape)); !strings.Contains(h, "'shape': "+c.want+",") {
			t.Errorf("shape %v: header %q, want %s", c.shape, h, c.want)
		}
	}
}

func TestNpyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	x := make([]float64, 3*5*200000) // spans several write buffers
	for i := range x {
		x[i] = float64(i)*0.1 - 7
	}
	x[3] = math.NaN()
	path := filepath.Join(dir, "p.npy")
	if err := WriteNpy(path, x, 3, 5, 200000); err != nil {
		t.Fatal(err)
	}
	got, shape, err := ReadNpy(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(shape) != 3 || shape[0] != 3 || shape[1] != 5 || shape[2] != 200000 {
		t.Fatalf("shape %v", shape)
	}
	for i := range x {
		if math.Float64bits(got[i]) != math.Float64bits(x[i]) {
			t.Fatalf("value %d: %v, want %v", i, got[i], x[i])
		}
	}
	if err := WriteNpy(path, x, 2, 2); err == nil || !strings.Contains(err.Error(), "shape [2 2] holds 4 values") {
		t.Errorf("wrong shape: err %v", err)
	}
}

func TestNpyBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "g.npy")
	if err := WriteNpy(good, []float64{1, 2}, 2); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(good)
	cases := map[string]struct {
		data []byte
		want string
	}{
		"magic":     {append([]byte("XNUMPY"), b[6:]...), "bad magic"},
		"truncated": {b[:len(b)-3], "data truncated"},
		"trailing":  {append(append([]byte{}, b...), 0), "trailing data"},
		"descr":     {bytes.Replace(b, []byte("'<f8'"), []byte("'<f4'"), 1), "'<f8'"},
		"fortran":   {bytes.Replace(b, []byte("False"), []byte("True "), 1), "fortran_order"},
	}
	for name, c := range cases {
		p := filepath.Join(dir, name+".npy")
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := ReadNpy(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err %v, want one naming %s and %q", name, err, p, c.want)
		}
	}
}

// TestSummaryJSON: numbers as JSON numbers, NaN as null, infinities as
// "+Inf"/"-Inf", every float64 read back bit for bit.
func TestSummaryJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.json")
	tenth := 0.1
	m := Summary{"a": 73.05, "b": tenth + 0.2, "first_below": math.NaN(), "gap": math.Inf(1), "neg": math.Inf(-1), "tiny": 5e-324, "big": 1e300, "zero": 0}
	if err := WriteSummary(path, m); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{`"a": 73.05,`, `"first_below": null,`, `"gap": "+Inf",`, `"neg": "-Inf",`, `"tiny": 5e-324`, `"b": 0.30000000000000004,`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary.json lacks %s:\n%s", want, b)
		}
	}
	got, err := ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(m) {
		t.Fatalf("read %d metrics, want %d", len(got), len(m))
	}
	for k, v := range m {
		if g := got[k]; math.Float64bits(g) != math.Float64bits(v) && !(math.IsNaN(g) && math.IsNaN(v)) {
			t.Errorf("%s: read %v, want %v", k, g, v)
		}
	}
	// Numbers written as strings (the form of older versions) still read.
	if err := os.WriteFile(path, []byte(`{"a": "73.05", "n": "NaN"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadSummary(path); err != nil || got["a"] != 73.05 || !math.IsNaN(got["n"]) {
		t.Errorf("old string form: %v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte(`{"a": "fast"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSummary(path); err == nil || !strings.Contains(err.Error(), "metric a") || !strings.Contains(err.Error(), path) {
		t.Errorf("bad value: err %v", err)
	}
}

func TestSeriesParquetRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := &Series{}
	for i := range 70000 {
		s.Add("loss", i, 1/float64(i+1))
		if i%50 == 0 {
			s.Add("gap", i, math.NaN())
		}
	}
	if err := WriteTrialSeries(dir, s); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSeriesParquet(filepath.Join(dir, SeriesParquet))
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != s.Len() {
		t.Fatalf("%d points, want %d", got.Len(), s.Len())
	}
	for i := range s.Step {
		if got.Metric[i] != s.Metric[i] || got.Step[i] != s.Step[i] || math.Float64bits(got.Value[i]) != math.Float64bits(s.Value[i]) {
			t.Fatalf("point %d: %s %d %v, want %s %d %v", i, got.Metric[i], got.Step[i], got.Value[i], s.Metric[i], s.Step[i], s.Value[i])
		}
	}
	arrow, err := ReadSeries(filepath.Join(dir, SeriesArrow))
	if err != nil || arrow.Len() != s.Len() {
		t.Fatalf("series.arrow: %v, %d points", err, arrow.Len())
	}
}

// TestSeriesFileWithLateSparseMetrics: a long run whose gauge flips start
// late (after the first batch of the series file; the training loop
// records them only for rounds that flip) still writes its series
// file: the file's one dictionary holds every metric name.
func TestSeriesFileWithLateSparseMetrics(t *testing.T) {
	s := &Series{}
	for k := range 200000 {
		s.Add("loss", k, float64(k))
	}
	s.Add("gauge_rejected", 150000, 1)
	s.Add("gauge_flips", 150000, 2)
	path := t.TempDir() + "/series.arrow"
	if err := WriteSeries(path, s); err != nil {
		t.Fatal(err)
	}
	r, err := ReadSeries(path)
	if err != nil {
		t.Fatal(err)
	}
	if st, v := r.Of("gauge_flips"); len(st) != 1 || st[0] != 150000 || v[0] != 2 {
		t.Fatalf("gauge_flips read back %v %v", st, v)
	}
}
