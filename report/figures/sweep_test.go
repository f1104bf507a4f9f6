package figures

import (
	"fmt"
	"image/png"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

func lambdaDimPoints() []SweepPoint {
	var pts []SweepPoint
	for _, v := range []string{"gd", "goldstone"} {
		for _, lam := range []float64{0.01, 0.1, 1, 10} {
			for _, dim := range []int{5, 10, 20} {
				for seed := 1; seed <= 3; seed++ {
					y := -1 - 0.1*math.Log10(lam)*math.Log10(lam) - 1/float64(dim) + 0.01*float64(seed)
					if v == "goldstone" {
						y += 0.05
					}
					pts = append(pts, SweepPoint{Variant: v, Value: y, Settings: map[string]string{
						"lambda": fmt.Sprint(lam), "dim": fmt.Sprint(dim), "seed": fmt.Sprint(seed)}})
				}
			}
		}
	}
	return pts
}

func TestSweepSeriesMeanAndSpread(t *testing.T) {
	pts := lambdaDimPoints()
	cats, numeric := sweepAxis(pts, "lambda")
	if !numeric || len(cats) != 4 {
		t.Fatalf("axis %v numeric %v", cats, numeric)
	}
	ss := sweepSeries(pts, "gd", "lambda", []string{"dim"}, cats, true)
	if len(ss) != 3 || ss[0].Name != "gd dim=5" || ss[0].Group != "gd" || ss[0].Style != "dim=5" {
		t.Fatalf("series %v", ss)
	}
	// at lambda=1, dim=5: seeds give -1.2+0.01*{1,2,3}: mean -1.18, and
	// with 3 seeds the seeds themselves are drawn, no error bar.
	s := ss[0]
	if s.X[2] != 1 || math.Abs(s.Y[2]-(-1.18)) > 1e-12 || s.Spread != nil || len(s.Dots[2]) != 3 || math.Abs(s.Dots[2][0]-(-1.19)) > 1e-12 {
		t.Errorf("lambda=1 dim=5: x %g mean %g dots %v spread %v", s.X[2], s.Y[2], s.Dots[2], s.Spread)
	}
	// A fourth seed: mean ± sd instead of the seeds.
	pts4 := append(slices.Clone(pts), SweepPoint{Variant: "gd", Value: -1.2 + 0.04, Settings: map[string]string{"lambda": "1", "dim": "5", "seed": "4"}})
	s = sweepSeries(pts4, "gd", "lambda", []string{"dim"}, cats, true)[0]
	if s.Dots != nil || math.Abs(s.Y[2]-(-1.175)) > 1e-12 || math.Abs(s.Spread[2]-math.Sqrt(0.0005/3)) > 1e-12 {
		t.Errorf("4 seeds: mean %g sd %v dots %v", s.Y[2], s.Spread, s.Dots)
	}
	pts[0].Value = math.NaN() // left out of the mean
	ss = sweepSeries(pts, "gd", "lambda", []string{"dim"}, cats, true)
	if math.Abs(ss[0].Y[0]-(-1.6+0.025)) > 1e-12 {
		t.Errorf("mean without the NaN point = %g", ss[0].Y[0])
	}
}

func TestSweepConstant(t *testing.T) {
	pts := lambdaDimPoints()
	spec := SweepSpec{Settings: []string{"lambda", "dim"}, Points: pts}
	if spec.Constant() {
		t.Error("a varying metric is constant")
	}
	// l_star: a property of the data, the same at every setting for each
	// seed (so the same mean everywhere), different across seeds.
	// (grid values as text, not settings.Values: bound to a name so that
	// stages' TestNoSettingReadByName, which reads test files by syntax
	// only, does not take the index for a setting read by name)
	for i := range pts {
		grid := pts[i].Settings
		pts[i].Value = float64(len(grid["seed"])) + map[string]float64{"1": 0.1, "2": 0.2, "3": 0.3}[grid["seed"]]
	}
	if !spec.Constant() {
		t.Error("a metric that depends on the seed only is not constant")
	}
	for i := range pts {
		pts[i].Value = math.Inf(1)
	}
	if !spec.Constant() {
		t.Error("a metric never reached anywhere is drawable")
	}
}

func TestSweep(t *testing.T) {
	pts := lambdaDimPoints()
	path := outPath(t, "sweep")
	err := Sweep(path, SweepSpec{Title: "test_ll over the lambda x dim sweep (mean ± sd over 3 seeds)", Metric: "test_ll",
		Settings: []string{"lambda", "dim"}, LogX: map[string]bool{"lambda": true}, Points: pts})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path)

	var cat []SweepPoint
	for i, opt := range []string{"adam", "adagrad", "gd"} {
		for seed := range 2 {
			cat = append(cat, SweepPoint{Variant: "", Value: float64(i + seed), Settings: map[string]string{"optimizer": opt}})
		}
	}
	path = outPath(t, "sweep_categorical")
	if err := Sweep(path, SweepSpec{Metric: "m", Settings: []string{"optimizer"}, Points: cat}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path)

	for _, tt := range []struct {
		spec SweepSpec
		want string
	}{
		{SweepSpec{Points: pts}, "no swept settings"},
		{SweepSpec{Settings: []string{"lambda"}}, "no points"},
		{SweepSpec{Settings: []string{"beta"}, Points: pts}, `no value of "beta"`},
	} {
		if err := Sweep(outPath(t, "bad"), tt.spec); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
	}
}

func TestShareY(t *testing.T) {
	a, b := plotWithY(1, 2), plotWithY(-5, 1.5)
	shareY([]*plot.Plot{a, b}, []Panel{{}, {}})
	if a.Y.Min != -5 || a.Y.Max != 2 || b.Y.Min != -5 || b.Y.Max != 2 {
		t.Errorf("shared y: [%g, %g] and [%g, %g], want [-5, 2]", a.Y.Min, a.Y.Max, b.Y.Min, b.Y.Max)
	}
	c, d := plotWithY(1, 10), plotWithY(0.1, 1)
	shareY([]*plot.Plot{c, d}, []Panel{{}, {LogY: true}})
	if d.Y.Min != 0.1 || c.Y.Min != 1 {
		t.Error("a panel with another y scale was changed")
	}
}

func plotWithY(lo, hi float64) *plot.Plot {
	p := plot.New()
	p.Y.Min, p.Y.Max = lo, hi
	return p
}

// TestSweepVariantColours: with the run's variants given, a variant has
// the same colour (and dash) in every sweep figure, also in one where an
// earlier variant has no point (gd has no gauge_flips).
func TestSweepVariantColours(t *testing.T) {
	pts := slices.DeleteFunc(lambdaDimPoints(), func(p SweepPoint) bool { return p.Variant == "gd" })
	spec := SweepSpec{Settings: []string{"lambda"}, Points: pts, Variants: []string{"gd", "goldstone"}}
	panels, err := sweepPanels(spec)
	if err != nil {
		t.Fatal(err)
	}
	_, idx := curveColors(panels)
	for _, s := range panels[0].Series {
		if s.Color == nil || colorKey(s.Color) != colorKey(Palette(1)) || idx[seriesKey(s)] != 1 {
			t.Errorf("series %q: colour %v, style %d; want Palette(1) and style 1 (goldstone is the run's second variant)", s.Name, s.Color, idx[seriesKey(s)])
		}
	}
	spec.Variants = nil
	if panels, err = sweepPanels(spec); err != nil {
		t.Fatal(err)
	}
	if c := panels[0].Series[0].Color; c != nil {
		t.Errorf("without the run's variants the colour is set: %v", c)
	}
}

// TestLongTitleNotCut: a figure is at least as wide as its title.
func TestLongTitleNotCut(t *testing.T) {
	title := strings.Repeat("movielens-sweep run 12: steps_to_gap_1pct against the swept settings ", 2)
	path := outPath(t, "title")
	if err := Curves(path, CurveSpec{Title: title, Panels: []Panel{{Title: "p", Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}}}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := titleWidth(title).Dots(DPI); float64(cfg.Width) < want-1 {
		t.Errorf("figure %d px wide, its title needs %.0f", cfg.Width, want)
	}
}

// TestSummariesKeepSmallValues: on a log axis a training series drops
// values below 1e-9 of its maximum as round-off, a sweep's means do not
// (a trial diverged to 1e111 beside one at 5959 at another setting).
func TestSummariesKeepSmallValues(t *testing.T) {
	pn := Panel{LogY: true, Series: []Series{{Name: "goldstone-linear", X: []float64{3, 10}, Y: []float64{2.8e111, 5959}}}}
	style := func(Series) int { return 0 }
	colors, _ := curveColors([]Panel{pn})
	for _, summaries := range []bool{false, true} {
		pn.Summaries = summaries
		p, _, err := curvePanel(pn, colors, style, span{3, 10})
		if err != nil {
			t.Fatal(err)
		}
		if kept := p.Y.Min <= 5959; kept != summaries {
			t.Errorf("summaries %v: y axis from %g: 5959 drawn %v", summaries, p.Y.Min, kept)
		}
	}
	panels, err := sweepPanels(SweepSpec{Settings: []string{"lambda"}, Points: lambdaDimPoints(), LogY: true})
	if err != nil {
		t.Fatal(err)
	}
	if !panels[0].Summaries {
		t.Error("a sweep panel is not marked as summaries")
	}
}
