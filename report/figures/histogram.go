package figures

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// HistSpec describes a figure of histograms of several samples over common,
// fixed bins.
type HistSpec struct {
	Title, XLabel string
	Bins          int     // number of equal bins; 0 means 40
	Min, Max      float64 // bin range; Min == Max == 0 means [-1, 1]
	// Stacked draws one panel per sample, stacked vertically with shared x
	// and y ranges; by default all samples are overlaid in one panel.
	Stacked bool
	// Normalize plots the fraction of each sample's finite values per bin
	// instead of counts, so samples of different sizes compare.
	Normalize bool
	Samples   []Sample
}

// Sample is one named set of values. Non-finite values and values outside
// [Min, Max] are not counted.
type Sample struct {
	Name   string
	Values []float64
}

const (
	histDefaultBins = 40
	histTileW       = 5.5 * vg.Inch
	histTileH       = 3.6 * vg.Inch
	histStackedH    = 2.2 * vg.Inch
)

// HistCounts returns the number of values in each of bins equal-width bins
// over [lo, hi]. Bin k is [lo+k*w, lo+(k+1)*w) with w = (hi-lo)/bins, except
// that the last bin also holds hi. NaN, ±Inf and values outside [lo, hi] are
// not counted. It panics if bins < 1 or !(lo < hi).
func HistCounts(values []float64, bins int, lo, hi float64) []int {
	if bins < 1 || !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		panic(fmt.Sprintf("figures: HistCounts: bad bins %d or range [%g, %g]", bins, lo, hi))
	}
	counts := make([]int, bins)
	scale := float64(bins) / (hi - lo)
	for _, v := range values {
		if !(v >= lo && v <= hi) { // also rejects NaN
			continue
		}
		k := int((v - lo) * scale)
		if k >= bins {
			k = bins - 1
		}
		counts[k]++
	}
	return counts
}

// Median returns the median of the finite values (the mean of the middle two
// for an even count), or NaN if there are none. values is not modified.
func Median(values []float64) float64 {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if finite(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}

// CensoredMedian returns the median of values where NaN and +Inf stand for
// "never reached" and count as the largest values, so the median is +Inf
// when at least half of them never reached (the mean of the middle two for
// an even count), or NaN if there are none. values is not modified.
func CensoredMedian(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	v := make([]float64, len(values))
	for i, x := range values {
		if math.IsNaN(x) {
			x = math.Inf(1)
		}
		v[i] = x
	}
	sort.Float64s(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}

// Histogram draws spec into a PNG at path, written atomically. Each sample's
// histogram is a translucent filled outline in its palette colour and its
// median is a dashed vertical line of the same colour; the legend, to the
// right of the panels, gives each sample's median and number of values.
func Histogram(path string, spec HistSpec) error {
	if len(spec.Samples) == 0 {
		return fmt.Errorf("histogram %s: no samples", path)
	}
	bins, lo, hi := spec.Bins, spec.Min, spec.Max
	if bins == 0 {
		bins = histDefaultBins
	}
	if lo == 0 && hi == 0 {
		lo, hi = -1, 1
	}
	if bins < 1 || !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return fmt.Errorf("histogram %s: bad bins %d or range [%g, %g]", path, bins, lo, hi)
	}

	npanels := 1
	if spec.Stacked {
		npanels = len(spec.Samples)
	}
	plots := make([][]*plot.Plot, npanels)
	ymax := 0.0
	medians := make([][]plot.Plotter, npanels)
	var entries []legendEntry
	for si := range spec.Samples {
		pi := 0
		if spec.Stacked {
			pi = si
		}
		if plots[pi] == nil {
			plots[pi] = []*plot.Plot{histPanel(spec, si)}
		}
		h, entry, median, top := histSample(spec, si, bins, lo, hi)
		plots[pi][0].Add(h)
		entries = append(entries, entry)
		if median != nil {
			medians[pi] = append(medians[pi], median)
		}
		ymax = max(ymax, top)
	}
	for pi, ms := range medians { // on top of every histogram
		plots[pi][0].Add(ms...)
	}
	entries = append(entries, legendEntry{"median (dashed)", &plotter.Line{LineStyle: draw.LineStyle{
		Color: color.Gray{0x40}, Width: vg.Points(2), Dashes: dashes}}})

	for _, row := range plots {
		p := row[0]
		p.X.Min, p.X.Max = lo, hi
		p.Y.Min, p.Y.Max = 0, ymax*1.05
		if ymax == 0 {
			p.Y.Max = 1
		}
	}
	return paintHistogram(path, spec, plots, entries)
}

// histPanel returns the empty panel that sample si opens: its axis labels
// (the x label only on the bottom panel when stacked), the sample's name as
// title when stacked, ticks and grid.
func histPanel(spec HistSpec, si int) *plot.Plot {
	p := plot.New()
	p.X.Label.Text = spec.XLabel
	p.Y.Label.Text = "count"
	if spec.Normalize {
		p.Y.Label.Text = "fraction"
	}
	if spec.Stacked {
		p.Title.Text = spec.Samples[si].Name
		p.Title.TextStyle.Font.Size = vg.Points(12)
		if si < len(spec.Samples)-1 {
			p.X.Label.Text = ""
		}
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = linTicks{}, linTicks{integer: !spec.Normalize}
	g := plotter.NewGrid()
	g.Vertical.Color = nil
	g.Horizontal.Color = color.Gray{0xe0}
	p.Add(g)
	return p
}

// histSample returns sample si's histogram over bins equal bins of [lo, hi],
// its legend entry (median, count, how many fell outside), its dashed median
// line (nil when it has no finite value) and its highest bar.
func histSample(spec HistSpec, si, bins int, lo, hi float64) (h *plotter.Histogram, entry legendEntry, median plot.Plotter, top float64) {
	s := spec.Samples[si]
	width := (hi - lo) / float64(bins)
	counts := HistCounts(s.Values, bins, lo, hi)
	nfin, nin := 0, 0
	for _, v := range s.Values {
		if finite(v) {
			nfin++
		}
	}
	for _, c := range counts {
		nin += c
	}
	div := 1.0
	if spec.Normalize && nfin > 0 {
		div = float64(nfin)
	}
	h = &plotter.Histogram{Bins: make([]plotter.HistogramBin, bins), Width: width}
	for k, c := range counts {
		h.Bins[k] = plotter.HistogramBin{
			Min:    lo + float64(k)*width,
			Max:    lo + float64(k+1)*width,
			Weight: float64(c) / div,
		}
		top = max(top, h.Bins[k].Weight)
	}
	col := Palette(si)
	r, g, b, _ := col.RGBA()
	h.FillColor = color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0x55}
	h.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.2)}

	med := Median(s.Values)
	name := fmt.Sprintf("%s: median %.3g (n=%d", s.Name, med, nfin)
	if nfin == 0 {
		name = s.Name + ": (no values"
	}
	if out := nfin - nin; out > 0 {
		name += fmt.Sprintf(", %d outside", out)
	}
	entry = legendEntry{name + ")", h}
	if !math.IsNaN(med) {
		// Darker than the fill so it shows on bars of its own colour.
		dark := color.RGBA{uint8(r >> 9), uint8(g >> 9), uint8(b >> 9), 0xff}
		median = &vline{x: med, style: draw.LineStyle{Color: dark, Width: vg.Points(2), Dashes: dashes}}
	}
	return h, entry, median, top
}

// paintHistogram lays out the panels of a histogram figure, one above the
// other, with the legend entries to their right, and writes it to path.
func paintHistogram(path string, spec HistSpec, plots [][]*plot.Plot, entries []legendEntry) error {
	npanels := len(plots)
	leg, lw, lh := sideLegend(entries)
	th := titleHeight(spec.Title)
	ph := histTileH
	if spec.Stacked {
		ph = histStackedH
	}
	w := histTileW + lw
	h := th + max(vg.Length(npanels)*ph, lh+vg.Points(20))
	return paintBoth(path, w, h, func(dc draw.Canvas) {
		dc = drawTitle(dc, spec.Title)
		tiles := draw.Tiles{
			Rows: npanels, Cols: 1,
			PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8),
			PadY: vg.Points(10),
		}
		cvs := plot.Align(plots, tiles, draw.Crop(dc, 0, -lw, 0, 0))
		for r := range plots {
			plots[r][0].Draw(cvs[r][0])
		}
		lc := draw.Crop(dc, w-lw+vg.Points(4), 0, 0, -vg.Points(20))
		leg.Draw(lc)
	})
}

// vline is a vertical line across the whole data area at x.
type vline struct {
	x     float64
	style draw.LineStyle
}

func (v *vline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(v.x)
	if x < c.Min.X || x > c.Max.X {
		return
	}
	c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
}
