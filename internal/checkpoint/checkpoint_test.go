package checkpoint

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample(step int) (*State, []float64) {
	x := []float64{1.5, math.Copysign(0, -1), math.Inf(1), math.Float64frombits(0x7ff8000000000123), 1e-310, math.MaxFloat64}
	st := NewState(step)
	st.Floats("x", x)
	st.Ints("step", int64(step), -7)
	st.Bytes("rng", []byte{0, 1, 2, 255})
	st.Strings("metric", []string{"loss", "", "gauge_gap_rel"})
	st.Floats("empty", nil)
	return st, x
}

func TestSaveLoadExact(t *testing.T) {
	d := Dir{Path: filepath.Join(t.TempDir(), "ck"), Key: "train/abc"}
	st, x := sample(40)
	size, err := d.Save(st)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(d.Path, fileName(40)))
	if err != nil || fi.Size() != size {
		t.Fatalf("file size %v, Save says %d (%v)", fi, size, err)
	}
	got, skipped, err := d.Load()
	if err != nil || got == nil || len(skipped) > 0 {
		t.Fatalf("Load: %v, skipped %v, err %v", got, skipped, err)
	}
	if got.Step != 40 || !reflect.DeepEqual(got.Names(), []string{"x", "step", "rng", "metric", "empty"}) {
		t.Fatalf("step %d, names %v", got.Step, got.Names())
	}
	y := make([]float64, len(x))
	if err := got.ReadFloats("x", y); err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			t.Errorf("x[%d]: bits %x, saved %x", i, math.Float64bits(y[i]), math.Float64bits(x[i]))
		}
	}
	if is, err := got.ReadInts("step", 2); err != nil || is[0] != 40 || is[1] != -7 {
		t.Errorf("ints %v %v", is, err)
	}
	if b, err := got.ReadBytes("rng"); err != nil || string(b) != "\x00\x01\x02\xff" {
		t.Errorf("bytes %q %v", b, err)
	}
	if s, err := got.ReadStrings("metric"); err != nil || !reflect.DeepEqual(s, []string{"loss", "", "gauge_gap_rel"}) {
		t.Errorf("strings %q %v", s, err)
	}
	if e, err := got.ReadAllFloats("empty"); err != nil || len(e) != 0 {
		t.Errorf("empty %v %v", e, err)
	}
	// Reading with other expectations is a mismatch, never a silent success.
	for name, err := range map[string]error{
		"wrong length": got.ReadFloats("x", make([]float64, 3)),
		"wrong kind":   got.ReadFloats("rng", make([]float64, 4)),
		"missing":      got.ReadFloats("nope", nil),
	} {
		if !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: %v, want ErrMismatch", name, err)
		}
	}
}

func TestLargeSection(t *testing.T) {
	// Larger than the 1 MiB read buffer and the 64 KiB write buffer.
	d := Dir{Path: t.TempDir(), Key: "k"}
	x := make([]float64, 300_001)
	for i := range x {
		x[i] = float64(i) / 7
	}
	st := NewState(1)
	st.Floats("x", x)
	st.Bytes("b", []byte("tail"))
	if _, err := d.Save(st); err != nil {
		t.Fatal(err)
	}
	got, _, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, len(x))
	if err := got.ReadFloats("x", y); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(x, y) {
		t.Error("values differ")
	}
	if b, _ := got.ReadBytes("b"); string(b) != "tail" {
		t.Errorf("bytes after a large section: %q", b)
	}
}

func TestKeepsNewestTwo(t *testing.T) {
	d := Dir{Path: t.TempDir(), Key: "k"}
	for _, s := range []int{10, 20, 30, 40} {
		st, _ := sample(s)
		if _, err := d.Save(st); err != nil {
			t.Fatal(err)
		}
	}
	if got := d.steps(); !reflect.DeepEqual(got, []int{40, 30}) {
		t.Errorf("kept %v, want [40 30]", got)
	}
	// A temporary file of a killed writer is no checkpoint and is removed
	// at the next save.
	stale := filepath.Join(d.Path, ".000000000050.ckpt.tmp-999999999-1")
	os.WriteFile(stale, []byte("half"), 0o644)
	if st, _, _ := d.Load(); st == nil || st.Step != 40 {
		t.Errorf("Load with a temporary file present: %+v", st)
	}
	st, _ := sample(50)
	d.Save(st)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file left: %v", err)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if st, _, err := d.Load(); st != nil || err != nil {
		t.Errorf("after Remove: %v %v", st, err)
	}
}

func TestLoadSkipsForeignAndDamaged(t *testing.T) {
	dir := t.TempDir()
	d := Dir{Path: dir, Key: "train/v2"}
	st, _ := sample(10)
	if _, err := d.Save(st); err != nil {
		t.Fatal(err)
	}
	st, _ = sample(20)
	if _, err := d.Save(st); err != nil {
		t.Fatal(err)
	}
	// Damage the newest: Load falls back to the one before it.
	p := filepath.Join(dir, fileName(20))
	b, _ := os.ReadFile(p)
	b[len(b)/2] ^= 1
	os.WriteFile(p, b, 0o644)
	got, skipped, err := d.Load()
	if err != nil || got == nil || got.Step != 10 {
		t.Fatalf("Load after damage: %+v %v", got, err)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "checksum") {
		t.Errorf("skipped %v", skipped)
	}
	// Another key (other code or settings) is never used.
	other := Dir{Path: dir, Key: "train/v3"}
	got, skipped, err = other.Load()
	if err != nil || got != nil {
		t.Fatalf("foreign checkpoint used: %+v %v", got, err)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[1].Reason, `key "train/v2"`) {
		t.Errorf("skipped %v", skipped)
	}
	// A truncated file and another format are skipped, saying why.
	os.WriteFile(filepath.Join(dir, fileName(30)), []byte("GSCKPT"), 0o644)
	if got, skipped, _ := d.Load(); got == nil || got.Step != 10 || !strings.Contains(skipped[0].Reason, "truncated") {
		t.Errorf("truncated: %+v %v", got, skipped)
	}
}

func TestPolicyDue(t *testing.T) {
	for _, c := range []struct {
		p     Policy
		steps int
		el    time.Duration
		want  bool
	}{
		{Policy{}, 1000000, 9 * time.Minute, false},
		{Policy{}, 1, 10 * time.Minute, true},
		{Policy{}, 0, time.Hour, false},
		{Policy{Every: 5}, 4, time.Hour, false},
		{Policy{Every: 5}, 5, 0, true},
		{Policy{Every: 5, Interval: time.Second}, 1, time.Second, true},
		{Policy{Interval: time.Second}, 1, 999 * time.Millisecond, false},
		{Policy{Off: true, Every: 1}, 10, time.Hour, false},
	} {
		if got := c.p.Due(c.steps, c.el); got != c.want {
			t.Errorf("%+v.Due(%d, %v) = %v, want %v", c.p, c.steps, c.el, got, c.want)
		}
	}
}

// FuzzOpen: no file content makes open panic or accept a file whose
// checksum does not cover it.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	d := Dir{Path: dir, Key: "k"}
	st, _ := sample(1)
	d.Save(st)
	good, _ := os.ReadFile(filepath.Join(dir, fileName(1)))
	f.Add(good)
	f.Add([]byte(magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "x.ckpt")
		os.WriteFile(p, b, 0o644)
		o, err := open(p)
		if err != nil {
			return
		}
		for _, n := range o.Names() {
			switch o.sections[o.byName[n]].Kind {
			case kindF64:
				o.ReadAllFloats(n)
			case kindI64:
				o.ReadInts(n, -1)
			default:
				o.ReadStrings(n)
			}
		}
	})
}

// BenchmarkSaveLoad saves and loads the state of a training loop of 8M
// parameters (x and AdaGrad's squares: 128 MiB), the unit in which a
// paper-scale trial's checkpoint cost is stated: MB/s of writing (to the
// test's temporary directory, with fsync) and of reading back.
func BenchmarkSaveLoad(b *testing.B) {
	const n = 8 << 20
	x, h := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], h[i] = float64(i)*1e-3, float64(i%97)
	}
	d := Dir{Path: b.TempDir(), Key: "bench"}
	var bytes int64
	var saveSec, loadSec float64
	b.ResetTimer()
	for i := range b.N {
		st := NewState(i + 1)
		st.Floats("x", x)
		st.Floats("method.0", h)
		t0 := time.Now()
		size, err := d.Save(st)
		if err != nil {
			b.Fatal(err)
		}
		saveSec += time.Since(t0).Seconds()
		t0 = time.Now()
		got, _, err := d.Load()
		if err != nil || got == nil {
			b.Fatal(err)
		}
		if err := got.ReadFloats("x", x); err != nil {
			b.Fatal(err)
		}
		loadSec += time.Since(t0).Seconds()
		bytes = size
	}
	b.ReportMetric(float64(bytes)/(1<<20), "MiB/checkpoint")
	b.ReportMetric(float64(bytes)*float64(b.N)/saveSec/1e6, "MB/s-save")
	b.ReportMetric(float64(bytes)*float64(b.N)/loadSec/1e6, "MB/s-load")
}

// TestFloat32Sections: float32 arrays (a float32 trial's parameters and
// optimizer state) come back bit for bit, an odd count included (the
// next section's data follows at 4 bytes) and one past the read buffer
// (1 MiB); reading one as float64, or a float64 one as float32, is a
// mismatch.
func TestFloat32Sections(t *testing.T) {
	d := Dir{Path: filepath.Join(t.TempDir(), "ck"), Key: "train/f32"}
	small := []float32{1.5, float32(math.Copysign(0, -1)), float32(math.Inf(-1)), math.Float32frombits(0x7fc00123), 1e-40}
	big := make([]float32, 300_001)
	for i := range big {
		big[i] = float32(i) * 0.25
	}
	st := NewState(7)
	st.Float32s("x", small)
	st.Ints("n", 3)
	st.Float32s("big", big)
	st.Floats("f64", []float64{2})
	if _, err := d.Save(st); err != nil {
		t.Fatal(err)
	}
	got, _, err := d.Load()
	if err != nil || got == nil {
		t.Fatalf("Load: %v %v", got, err)
	}
	if got.Kind("x") != "f32" || got.Kind("f64") != "f64" || got.Kind("nope") != "" {
		t.Errorf("kinds %q %q %q", got.Kind("x"), got.Kind("f64"), got.Kind("nope"))
	}
	y := make([]float32, len(small))
	if err := got.ReadFloat32s("x", y); err != nil {
		t.Fatal(err)
	}
	for i := range small {
		if math.Float32bits(small[i]) != math.Float32bits(y[i]) {
			t.Errorf("x[%d]: bits %x, saved %x", i, math.Float32bits(y[i]), math.Float32bits(small[i]))
		}
	}
	if n, err := got.ReadInts("n", 1); err != nil || n[0] != 3 {
		t.Errorf("the section after an odd float32 one: %v %v", n, err)
	}
	yb := make([]float32, len(big))
	if err := got.ReadFloat32s("big", yb); err != nil || !reflect.DeepEqual(yb, big) {
		t.Errorf("the large float32 section did not come back (%v)", err)
	}
	for name, err := range map[string]error{
		"float32 read as float64": got.ReadFloats("x", make([]float64, len(small))),
		"float64 read as float32": got.ReadFloat32s("f64", make([]float32, 1)),
		"wrong length":            got.ReadFloat32s("x", make([]float32, 2)),
	} {
		if !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: %v, want ErrMismatch", name, err)
		}
	}
}
