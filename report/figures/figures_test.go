package figures

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var render = flag.Bool("render", false, "also write the example figures to /tmp/figs_*.png for inspection")

// outPath returns where a test writes figure name: a temp dir, or /tmp with -render.
func outPath(t *testing.T, name string) string {
	t.Helper()
	if *render {
		return filepath.Join(os.TempDir(), "figs_"+name+".png")
	}
	return filepath.Join(t.TempDir(), name+".png")
}

// checkPNG decodes the PNG at path and fails unless it is non-empty and not
// blank (its luminance varies).
func checkPNG(t *testing.T, path string) image.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	r := img.Bounds()
	if r.Dx() < 100 || r.Dy() < 100 {
		t.Fatalf("%s: image %v too small", path, r)
	}
	var sum, sum2, n float64
	colored := 0
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			l := float64(cr+cg+cb) / 3
			sum += l
			sum2 += l * l
			n++
			if max(cr, cg, cb)-min(cr, cg, cb) > 0x4000 {
				colored++
			}
		}
	}
	mean := sum / n
	if v := sum2/n - mean*mean; !(v > 1e4) {
		t.Fatalf("%s: blank image (luminance variance %g)", path, v)
	}
	if colored == 0 {
		t.Fatalf("%s: no coloured pixel: no data drawn", path)
	}
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") && strings.HasPrefix(e.Name(), "."+filepath.Base(path)) {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	return img
}

// powerCurve returns steps 0..n-1 and a noisy a·(s+1)^-b + floor curve.
func powerCurve(n int, a, b, floor float64, rng *rand.Rand) (x, y []float64) {
	x = make([]float64, n)
	y = make([]float64, n)
	for i := range n {
		x[i] = float64(i)
		y[i] = a*math.Pow(float64(i+1), -b)*(1+0.3*rng.NormFloat64()*0.3) + floor
	}
	return x, y
}

func TestCurves(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const steps = 20000
	var gapP, psiP Panel
	gapP = Panel{Title: "loss gap", XLabel: "step", YLabel: "L - L*", LogX: true, LogY: true}
	psiP = Panel{Title: "psi", XLabel: "step", YLabel: "psi", LogX: true, LogY: true}
	for k, opt := range []string{"GD", "AdaGrad", "Adam"} {
		for _, gold := range []bool{false, true} {
			name, b := opt, 0.5+0.1*float64(k)
			if gold {
				name += " + Goldstone"
				b += 0.3
			}
			x, y := powerCurve(steps, 10, b, 0, rng)
			y[5] = math.NaN()
			y[7] = 0
			y[9] = math.Inf(1)
			gapP.Series = append(gapP.Series, Series{Name: name, Group: opt, Dashed: gold, X: x, Y: y})
			x, y = powerCurve(steps, 100, b-0.4, 0, rng)
			psiP.Series = append(psiP.Series, Series{Name: name, Group: opt, Dashed: gold, X: x, Y: y})
		}
	}
	fx, fy := powerCurve(3000, 2, 0.3, 1.5, rng)
	gx, gy := powerCurve(3000, 2, 0.6, 1.5, rng)
	fig3 := CurveSpec{Title: "Training curves", Panels: []Panel{
		{Title: "loss", XLabel: "step", YLabel: "L", LogX: true, Series: []Series{
			{Name: "AdaGrad", X: fx, Y: fy}, {Name: "Goldstone-GD", X: gx, Y: gy}}},
		{Title: "psi", XLabel: "step", YLabel: "psi", LogY: true, Series: []Series{
			{Name: "AdaGrad", X: fx, Y: fy}, {Name: "Goldstone-GD", X: gx, Y: gy}}},
	}}
	tests := []struct {
		name string
		spec CurveSpec
	}{
		{"curves_artificial", CurveSpec{Title: "Artificial model", Panels: []Panel{gapP, psiP}}},
		{"curves_fig3", fig3},
		{"curves_single_linear", CurveSpec{Panels: []Panel{{XLabel: "x", YLabel: "y", Series: []Series{
			{Name: "line", X: []float64{0, 1, 2, math.NaN()}, Y: []float64{-1, 0, 3, 1}}}}}}},
		{"curves_degenerate", CurveSpec{Title: "degenerate", Panels: []Panel{
			{Title: "all dropped on log", LogX: true, LogY: true, Series: []Series{
				{Name: "zeros", X: []float64{0, 1, 2}, Y: []float64{0, 0, -1}}}},
			{Title: "one point", LogY: true, Series: []Series{
				{Name: "one", X: []float64{3}, Y: []float64{0.5}}}},
			{Title: "no series"},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := outPath(t, tt.name)
			if err := Curves(path, tt.spec); err != nil {
				t.Fatalf("Curves: %v", err)
			}
			checkPNG(t, path)
		})
	}
}

func TestCurvesErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path string
		spec       CurveSpec
		want       string
	}{
		{"no panels", filepath.Join(dir, "a.png"), CurveSpec{}, "no panels"},
		{"length mismatch", filepath.Join(dir, "b.png"), CurveSpec{Panels: []Panel{{Series: []Series{
			{Name: "s", X: []float64{1, 2}, Y: []float64{1}}}}}}, "len(X)=2 != len(Y)=1"},
		{"missing dir", filepath.Join(dir, "nope", "c.png"), CurveSpec{Panels: []Panel{{Series: []Series{
			{Name: "s", X: []float64{1, 2}, Y: []float64{1, 2}}}}}}, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Curves(tt.path, tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
			if _, serr := os.Stat(tt.path); serr == nil {
				t.Errorf("%s written despite error", tt.path)
			}
		})
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("stray files after failed writes: %v", ents)
	}
}

func TestCurveColors(t *testing.T) {
	panels := []Panel{
		{Series: []Series{{Name: "A"}, {Name: "B+", Group: "B"}, {Name: "C"}}},
		{Series: []Series{{Name: "C"}, {Name: "B", Group: "B"}, {Name: "X", Color: Palette(7)}, {Name: "D"}, {Name: "Y", Color: color.Gray{Y: 0x10}}}},
	}
	m, idx := curveColors(panels)
	// an explicit palette colour keeps its palette index as its style (7),
	// another colour takes the next index after the others (5)
	if idx["A"] != 0 || idx["D"] != 3 || idx["X"] != 7 || idx["Y"] != 5 {
		t.Errorf("style index = %v", idx)
	}
	want := map[string]int{"A": 0, "B": 1, "C": 2, "D": 3}
	if len(m) != len(want) {
		t.Fatalf("got %d colour keys, want %d", len(m), len(want))
	}
	for k, i := range want {
		if colorKey(m[k]) != colorKey(Palette(i)) {
			t.Errorf("key %s: colour %v, want palette %d", k, m[k], i)
		}
	}
	if got := lineColor(panels[1].Series[2], m); colorKey(got) != colorKey(Palette(7)) {
		t.Errorf("explicit colour overridden: %v", got)
	}
}

func TestDownsample(t *testing.T) {
	const n = 20000
	mono := make([]float64, n)
	shuffled := make([]float64, n)
	y := make([]float64, n)
	rng := rand.New(rand.NewPCG(2, 2))
	for i := range n {
		mono[i] = float64(i + 1)
		shuffled[i] = rng.Float64()
		y[i] = math.Sin(float64(i)/300) + 0.1*rng.NormFloat64()
	}
	y[12345] = -5 // global min in the middle
	y[777] = 9    // global max
	tests := []struct {
		name string
		x    []float64
		logX bool
	}{
		{"linear", mono, false},
		{"log", mono, true},
		{"unsorted", shuffled, false},
		{"unsorted log", shuffled, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := downsample(tt.x, y, maxDrawPoints, tt.logX)
			if len(idx) == 0 || len(idx) > maxDrawPoints {
				t.Fatalf("kept %d points, want 1..%d", len(idx), maxDrawPoints)
			}
			if !slices.IsSorted(idx) || slices.Compact(slices.Clone(idx)) == nil {
				t.Fatalf("indices not increasing")
			}
			for i := 1; i < len(idx); i++ {
				if idx[i] == idx[i-1] {
					t.Fatalf("duplicate index %d", idx[i])
				}
			}
			for _, want := range []int{0, n - 1, 12345, 777} {
				if _, ok := slices.BinarySearch(idx, want); !ok {
					t.Errorf("index %d (first/last/min/max) dropped", want)
				}
			}
		})
	}
	if idx := downsample(mono[:10], y[:10], maxDrawPoints, true); idx != nil {
		t.Errorf("short series thinned: %v", idx)
	}
	// Log buckets keep the early, log-dense part of the curve: every one of
	// the first 50 steps survives.
	idx := downsample(mono, y, maxDrawPoints, true)
	for i := range 50 {
		if _, ok := slices.BinarySearch(idx, i); !ok {
			t.Errorf("log thinning dropped early index %d", i)
		}
	}
}

func TestHistCounts(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name   string
		values []float64
		bins   int
		lo, hi float64
		want   []int
	}{
		{"edges", []float64{-1, -0.5, 0, 0.5, 1}, 4, -1, 1, []int{1, 1, 1, 2}},
		{"interior", []float64{-0.9, -0.6, -0.1, 0.2, 0.3, 0.99}, 4, -1, 1, []int{2, 1, 2, 1}},
		{"outside and nonfinite", []float64{-1.01, 1.01, nan, inf, -inf, 0.1}, 2, -1, 1, []int{0, 1}},
		{"one bin", []float64{3, 4, 5}, 1, 3, 5, []int{3}},
		{"shifted", []float64{10, 10.5, 11, 11.99, 12, 13}, 3, 10, 13, []int{2, 2, 2}},
		{"empty", nil, 3, 0, 1, []int{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := HistCounts(tt.values, tt.bins, tt.lo, tt.hi)
			if !slices.Equal(got, tt.want) {
				t.Errorf("HistCounts = %v, want %v", got, tt.want)
			}
		})
	}
	for _, bad := range []struct {
		bins   int
		lo, hi float64
	}{{0, -1, 1}, {3, 1, 1}, {3, 1, -1}, {3, nan, 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("HistCounts(bins=%d, [%g, %g]) did not panic", bad.bins, bad.lo, bad.hi)
				}
			}()
			HistCounts(nil, bad.bins, bad.lo, bad.hi)
		}()
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		v    []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{math.NaN(), 5, math.Inf(-1)}, 5},
	}
	for _, tt := range tests {
		if got := Median(tt.v); got != tt.want {
			t.Errorf("Median(%v) = %g, want %g", tt.v, got, tt.want)
		}
	}
	if got := Median([]float64{math.NaN()}); !math.IsNaN(got) {
		t.Errorf("Median(NaN) = %g, want NaN", got)
	}
}

// TestCensoredMedian: NaN and +Inf are "never reached" and count as the
// largest values.
func TestCensoredMedian(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tt := range []struct {
		v    []float64
		want float64
	}{
		{[]float64{300, 100, 200}, 200},
		{[]float64{100, nan, 200}, 200},
		{[]float64{100, nan, inf}, inf},
		{[]float64{100, 200, nan, 400}, 300},
		{[]float64{100, inf, nan, 400}, inf},
	} {
		if got := CensoredMedian(tt.v); got != tt.want {
			t.Errorf("CensoredMedian(%v) = %g, want %g", tt.v, got, tt.want)
		}
	}
	if got := CensoredMedian(nil); !math.IsNaN(got) {
		t.Errorf("CensoredMedian(nil) = %g, want NaN", got)
	}
}

func TestHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	cosines := func(n int, conc float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Max(-1, math.Min(1, 1-math.Abs(rng.NormFloat64())/conc))
		}
		return v
	}
	base := cosines(2000, 1.5)
	gold := cosines(1500, 8)
	base[0], gold[0] = math.NaN(), 1.2 // not counted
	samples := []Sample{{Name: "GD", Values: base}, {Name: "Goldstone-GD", Values: gold}}
	tests := []struct {
		name string
		spec HistSpec
	}{
		{"hist_overlaid", HistSpec{Title: "cos(u_first, u_last)", XLabel: "cosine similarity", Samples: samples}},
		{"hist_stacked", HistSpec{Title: "cos(u_first, u_last)", XLabel: "cosine similarity", Stacked: true, Normalize: true, Bins: 25, Samples: samples}},
		{"hist_empty_sample", HistSpec{XLabel: "v", Min: 0, Max: 10, Bins: 5, Samples: []Sample{{Name: "none"}, {Name: "some", Values: []float64{1, 2, 2, 9}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := outPath(t, tt.name)
			if err := Histogram(path, tt.spec); err != nil {
				t.Fatalf("Histogram: %v", err)
			}
			checkPNG(t, path)
		})
	}
	dir := t.TempDir()
	for _, bad := range []HistSpec{{}, {Bins: -1, Samples: samples}, {Min: 1, Max: 0, Samples: samples}} {
		if err := Histogram(filepath.Join(dir, "bad.png"), bad); err == nil {
			t.Errorf("Histogram(%+v) succeeded", bad)
		}
	}
}

// spiral returns a snapshot of n embeddings in 3-d drifting over t steps; a
// larger drift rotates the embeddings further between consecutive t.
func spiral(tn, n int, drift, scale float64, rng *rand.Rand) Snapshot {
	s := Snapshot{T: tn, N: n, D: 3, Z: make([]float64, tn*n*3)}
	for i := range n {
		a := 2 * math.Pi * float64(i) / float64(n)
		for t := range tn {
			th := a + drift*float64(t)
			z := s.Z[(t*n+i)*3:]
			z[0] = scale * (math.Cos(th) + 0.05*rng.NormFloat64())
			z[1] = scale * (math.Sin(th) + 0.05*rng.NormFloat64())
			z[2] = scale * (0.3*math.Cos(th) + 0.05*float64(t) + 0.05*rng.NormFloat64())
		}
	}
	return s
}

func TestTrajectories(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const tn, n = 12, 6
	gd := []Snapshot{spiral(tn, n, 0.02, 0.3, rng), spiral(tn, n, 0.1, 1, rng), spiral(tn, n, 0.25, 1.5, rng)}
	gs := []Snapshot{spiral(tn, n, 0.02, 0.3, rng), spiral(tn, n, 0.02, 1, rng), spiral(tn, n, 0.005, 1.5, rng)}
	gs[2].Z[5] = math.NaN() // dropped point
	spec := TrajSpec{
		Title:  "Embedding trajectories over t",
		Rows:   []string{"GD", "Goldstone-GD"},
		Cols:   []string{"step 0", "step 1000", "step 10000"},
		Data:   [][]Snapshot{gd, gs},
		Labels: []string{"w0", "w1", "w2", "w3", "w4", "w5"},
	}
	path := outPath(t, "traj")
	if err := Trajectories(path, spec); err != nil {
		t.Fatalf("Trajectories: %v", err)
	}
	checkPNG(t, path)

	// Many embeddings (hue colours), D = 1, explicit basis.
	many := spiral(5, 40, 0.1, 1, rng)
	one := Snapshot{T: 4, N: 2, D: 1, Z: []float64{0, 1, 0.5, 1.2, 0.7, 1.1, 0.9, 1.3}}
	for _, tt := range []struct {
		name string
		spec TrajSpec
	}{
		{"traj_many", TrajSpec{Rows: []string{"r"}, Cols: []string{"c"}, Data: [][]Snapshot{{many}}}},
		{"traj_d1", TrajSpec{Rows: []string{"r"}, Cols: []string{"c"}, Data: [][]Snapshot{{one}}}},
		{"traj_basis", TrajSpec{Rows: []string{"r"}, Cols: []string{"c"}, Data: [][]Snapshot{{many}},
			Basis: []float64{1, 0, 0, 0, 0, 1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := outPath(t, tt.name)
			if err := Trajectories(path, tt.spec); err != nil {
				t.Fatalf("Trajectories: %v", err)
			}
			checkPNG(t, path)
		})
	}

	dir := t.TempDir()
	bad := []TrajSpec{
		{},
		{Rows: []string{"a"}, Cols: []string{"c"}, Data: [][]Snapshot{{{T: 2, N: 1, D: 3, Z: make([]float64, 5)}}}},
		{Rows: []string{"a"}, Cols: []string{"c", "d"}, Data: [][]Snapshot{{many}}},
		{Rows: []string{"a"}, Cols: []string{"c", "d"}, Data: [][]Snapshot{{many, one}}},
		{Rows: []string{"a"}, Cols: []string{"c"}, Data: [][]Snapshot{{many}}, Basis: []float64{1, 0}},
	}
	for i, b := range bad {
		if err := Trajectories(filepath.Join(dir, "bad.png"), b); err == nil {
			t.Errorf("bad spec %d accepted", i)
		}
	}
}

func TestPCA2(t *testing.T) {
	// Points spread mostly along u = (1,2,2)/3, less along v = (4,1,-3)/√26.
	u := []float64{1.0 / 3, 2.0 / 3, 2.0 / 3}
	r26 := math.Sqrt(26)
	v := []float64{4 / r26, 1 / r26, -3 / r26}
	rng := rand.New(rand.NewPCG(5, 5))
	const m = 500
	z := make([]float64, 0, 3*m)
	for range m {
		a, b := 5*rng.NormFloat64(), rng.NormFloat64()
		for k := range 3 {
			z = append(z, 7+a*u[k]+b*v[k])
		}
	}
	basis, mean, frac := pca2(z, 3)
	for k := range 3 {
		if math.Abs(basis[k]-u[k]) > 0.02 || math.Abs(basis[3+k]-v[k]) > 0.1 {
			t.Fatalf("basis %v, want rows %v and %v", basis, u, v)
		}
		if math.Abs(mean[k]-7) > 0.6 {
			t.Errorf("mean %v, want ≈ 7", mean)
		}
	}
	if math.Abs(frac[0]+frac[1]-1) > 1e-9 || frac[0] < 0.9 {
		t.Errorf("explained fractions %v, want ≈ (0.96, 0.04)", frac)
	}
	// No spread: coordinate axes.
	basis, _, _ = pca2([]float64{1, 2, 3, 1, 2, 3}, 3)
	if !slices.Equal(basis, []float64{1, 0, 0, 0, 1, 0}) {
		t.Errorf("degenerate basis %v", basis)
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		lo, hi         float64
		minLab, maxLab int
	}{
		{1, 20000, 2, 6},
		{1e-14, 10, 2, 8},
		{0.2, 0.9, 2, 8},
		{0.31, 0.33, 2, 8},
		{3, 30, 2, 6},
		{1, 10, 2, 2},
	}
	for _, tt := range tests {
		labels := 0
		for _, tk := range (logTicks{}).Ticks(tt.lo, tt.hi) {
			if tk.Value < tt.lo*(1-1e-9) || tk.Value > tt.hi*(1+1e-9) {
				t.Errorf("[%g, %g]: tick %g outside range", tt.lo, tt.hi, tk.Value)
			}
			if tk.Label != "" {
				labels++
			}
		}
		if labels < tt.minLab || labels > tt.maxLab {
			t.Errorf("[%g, %g]: %d labels, want %d..%d", tt.lo, tt.hi, labels, tt.minLab, tt.maxLab)
		}
	}
}

// TestLogTickFormat: one label format per axis (issue: "5e+05" next to
// "1e5", "1000" next to "1e5").
func TestLogTickFormat(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []string
	}{
		{2e5, 9e5, []string{"2e5", "5e5"}},
		{1, 1e6, []string{"1e0", "1e1", "1e2", "1e3", "1e4", "1e5", "1e6"}},
		{1, 1000, []string{"1", "10", "100", "1000"}},
		{0.2, 0.9, []string{"0.2", "0.5"}},
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range (logTicks{}).Ticks(tt.lo, tt.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("[%g, %g]: labels %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
	for v, want := range map[float64]string{2.5e-4: "2.5e-4", 1e5: "1e5", -3e7: "-3e7", 1.23456e8: "1.235e8"} {
		if got := formatExp(v); got != want {
			t.Errorf("formatExp(%g) = %q, want %q", v, got, want)
		}
	}
}

func TestLinTicks(t *testing.T) {
	tests := []struct {
		lo, hi  float64
		integer bool
		want    []string
	}{
		{0, 2.1, true, []string{"0", "1", "2"}},
		{0, 20000, false, []string{"0", "5000", "10000", "15000", "20000"}},
		{1.55, 3.1, false, []string{"2.0", "2.5", "3.0"}},
		{-1, 1, false, []string{"-1.0", "-0.5", "0.0", "0.5", "1.0"}},
		{0, 0.0012, false, []string{"0.00000", "0.00025", "0.00050", "0.00075", "0.00100"}},
		{0, 3e6, false, []string{"0", "1e6", "2e6", "3e6"}},
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range (linTicks{integer: tt.integer}).Ticks(tt.lo, tt.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("[%g, %g]: labels %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}
