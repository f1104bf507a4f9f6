package figures

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot/plotter"
)

func TestInitialOutlier(t *testing.T) {
	mk := func(ys ...float64) plotter.XYs {
		xy := make(plotter.XYs, len(ys))
		for i, y := range ys {
			xy[i] = plotter.XY{X: float64(i + 1), Y: y}
		}
		return xy
	}
	tests := []struct {
		name string
		xy   plotter.XYs
		log  bool
		want bool
	}{
		{"loss spike at step 1 (log)", mk(5000, 3, 2.5, 2, 1.8, 1.7), true, true},
		{"smooth decay (log)", mk(10, 3, 2.5, 2, 1.8, 1.7), true, false},
		{"spike (linear)", mk(100, 3, 2.5, 2, 1.8, 1.7), false, true},
		{"start inside range", mk(2, 3, 2.5, 2, 1.8, 1.7), false, false},
		{"too short to tell", mk(100, 1, 2), false, false},
	}
	for _, tt := range tests {
		if got := initialOutlier(tt.xy, tt.log); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestJaggedAndEnvelope(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var noise, smooth plotter.XYs
	for i := range 1000 {
		noise = append(noise, plotter.XY{X: float64(i + 1), Y: math.Pow(10, -13+10*rng.Float64())})
		smooth = append(smooth, plotter.XY{X: float64(i + 1), Y: 1 / float64(i+1)})
	}
	if !jagged(noise, true) {
		t.Error("round-off noise over 10 decades not jagged")
	}
	if jagged(noise, false) || jagged(smooth, true) || jagged(noise[:50], true) {
		t.Error("jagged on a linear axis, a smooth curve or a short series")
	}
	band, mid := envelope(noise, 100, true) // 10 points per bucket
	if len(mid) != 100 || len(band) != 200 {
		t.Fatalf("envelope: %d band points, %d mid points", len(band), len(mid))
	}
	for i, q := range mid {
		hi, lo := band[i].Y, band[len(band)-1-i].Y
		if !(lo <= q.Y && q.Y <= hi) || band[i].X != q.X {
			t.Errorf("bucket %d: median %g outside [%g, %g]", i, q.Y, lo, hi)
		}
	}
}

func TestMarkerPoints(t *testing.T) {
	var sparse, dense plotter.XYs
	for i := range 41 { // validation every 50 steps
		sparse = append(sparse, plotter.XY{X: float64(50 * i), Y: 1})
	}
	for i := range 5000 {
		dense = append(dense, plotter.XY{X: float64(i + 1), Y: 1})
	}
	if got := markerPoints(sparse, 0, false, true); len(got) != len(sparse) {
		t.Errorf("sparse series: %d markers, want one per point (%d)", len(got), len(sparse))
	}
	a, b := markerPoints(dense, 0, true, true), markerPoints(dense, 1, true, true)
	if len(a) != denseMarkers || len(b) != denseMarkers {
		t.Fatalf("dense series: %d and %d markers, want %d", len(a), len(b), denseMarkers)
	}
	same := 0
	for i := range a {
		if a[i].X == b[i].X {
			same++
		}
	}
	if same > 1 {
		t.Errorf("%d markers of two styles coincide: %v and %v", same, a, b)
	}
}

func TestSharedX(t *testing.T) {
	panels := []Panel{
		{LogX: true, Series: []Series{{X: []float64{1, 10}, Y: []float64{1, 1}}}},
		{LogX: true, Series: []Series{{X: []float64{0, 5, 1000}, Y: []float64{1, 1, 1}}}},
		{Series: []Series{{X: []float64{0, 50}, Y: []float64{1, 1}}}, Marks: []Mark{{X: 70}}},
	}
	r := sharedX(panels)
	if r[xAxisKey{log: true}] != (span{1, 1000}) || r[xAxisKey{}] != (span{0, 70}) {
		t.Errorf("shared x = %v", r)
	}
}

// TestReadableFigure renders the cases the issue names into one figure (see
// it with -render): four variants with overlapping curves, a loss spike at
// step 1, validation every 50 steps, round-off noise of exact gauge fixing,
// and the minibatch-to-full-batch switch.
func TestReadableFigure(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var loss, val, gap []Series
	for k, v := range []string{"gd", "gd+goldstone", "adam", "adam+goldstone"} {
		var x, y, vx, vy, gx, gy []float64
		for s := 1; s <= 2000; s++ {
			x = append(x, float64(s))
			l := 2 + 1/math.Sqrt(float64(s)) + 0.001*float64(k%2)
			if s == 1 {
				l = 4000
			}
			y = append(y, l)
			if s%50 == 0 {
				vx = append(vx, float64(s))
				vy = append(vy, -1-1/math.Sqrt(float64(s))-0.0005*float64(k))
			}
			if k%2 == 1 {
				gx = append(gx, float64(s))
				gy = append(gy, math.Pow(10, -13+10*rng.Float64()))
			} else if s%50 == 0 {
				gx = append(gx, float64(s))
				gy = append(gy, 1/float64(s))
			}
		}
		loss = append(loss, Series{Name: v, X: x, Y: y})
		val = append(val, Series{Name: v, X: vx, Y: vy})
		gap = append(gap, Series{Name: v, X: gx, Y: gy})
	}
	switchAt := []Mark{{X: 1000, Label: "full batch"}}
	path := outPath(t, "readable")
	err := Curves(path, CurveSpec{Title: "readability", Panels: []Panel{
		{Title: "loss", XLabel: "step", YLabel: "L", LogY: true, Series: loss, Marks: switchAt},
		{Title: "validation", XLabel: "step", YLabel: "ll", Series: val, Marks: switchAt},
		{Title: "gauge gap", XLabel: "step", YLabel: "gap", LogY: true, Series: gap},
	}})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path)
}

func TestDropRoundOff(t *testing.T) {
	var xy plotter.XYs
	for i := range 100 {
		y := 1e-3 * float64(i+1)
		if i%20 == 0 {
			y = 1e-13 // right after an exact gauge fix
		}
		xy = append(xy, plotter.XY{X: float64(i), Y: y})
	}
	got, n := dropRoundOff(xy)
	if n != 5 || len(got) != 95 {
		t.Errorf("dropped %d, kept %d; want 5 and 95", n, len(got))
	}
	for _, q := range got {
		if q.Y < 1e-4 {
			t.Errorf("kept round-off %g", q.Y)
		}
	}
	tiny := plotter.XYs{{X: 1, Y: 1e-13}, {X: 2, Y: 3e-14}}
	if _, n := dropRoundOff(tiny); n != 0 {
		t.Errorf("a series entirely at round-off scale lost %d points", n)
	}
}
