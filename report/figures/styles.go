package figures

import (
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series are told apart by colour and also by dash pattern and marker
// shape, assigned by the index of their colour key, so that lines stay
// distinguishable where they overlap, in grey print and for colour-blind
// readers.
var dashPatterns = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2.5)},
	{vg.Points(8), vg.Points(3), vg.Points(1.5), vg.Points(3)},
	{vg.Points(12), vg.Points(4)},
}

var glyphShapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{},
	draw.PyramidGlyph{}, draw.RingGlyph{}, draw.PlusGlyph{}, draw.SquareGlyph{},
}

func dashPattern(k int) []vg.Length { return dashPatterns[k%len(dashPatterns)] }

func glyphShape(k int) draw.GlyphDrawer { return glyphShapes[k%len(glyphShapes)] }

// lineGlyph is a legend thumbnail showing a line with its marker.
type lineGlyph struct {
	l *plotter.Line
	s *plotter.Scatter
}

func (t lineGlyph) Thumbnail(c *draw.Canvas) {
	t.l.Thumbnail(c)
	t.s.Thumbnail(c)
}

const (
	// sparsePoints: a series of at most this many points is marked at
	// every point (validation every 50 steps, gauge gap every 50 steps).
	sparsePoints = 60
	// denseMarkers is the number of markers on a longer series.
	denseMarkers = 8
	// bandBuckets is the number of buckets of a jagged series' band.
	bandBuckets = 40
)

// markerPoints returns the points of xy to mark: all of a sparse series
// (sparse set and at most sparsePoints points),
// else denseMarkers points evenly spaced along x (on the log scale for log
// axes), shifted by the style index k so that markers of overlapping series
// do not sit on each other.
func markerPoints(xy plotter.XYs, k int, logX, sparse bool) plotter.XYs {
	if sparse && len(xy) <= sparsePoints {
		return xy
	}
	tr := func(v float64) float64 {
		if logX {
			return math.Log10(v)
		}
		return v
	}
	lo, hi := tr(xy[0].X), tr(xy[len(xy)-1].X)
	if !(hi > lo) {
		return xy[:1]
	}
	var out plotter.XYs
	off := (float64(k%4) + 0.5) / 4
	for m := range denseMarkers {
		target := lo + (hi-lo)*(float64(m)+off)/float64(denseMarkers)
		j := sort.Search(len(xy), func(i int) bool { return tr(xy[i].X) >= target })
		if j < len(xy) {
			out = append(out, xy[j])
		}
	}
	return out
}

// initialOutlier reports whether the first point of a series lies far
// outside the range of the rest (more than the rest's whole span beyond
// it, in decades on a log axis): such a point (the loss at step 1) must not
// set the axis.
func initialOutlier(xy plotter.XYs, logY bool) bool {
	if len(xy) < 5 {
		return false
	}
	tr := func(v float64) float64 {
		if logY {
			return math.Log10(v)
		}
		return v
	}
	r := newRange()
	for _, q := range xy[1:] {
		r.add(tr(q.Y))
	}
	w := r.hi - r.lo
	if logY {
		w = math.Max(w, 1) // at least a decade beyond
	}
	y := tr(xy[0].Y)
	return w > 0 && (y > r.hi+w || y < r.lo-w)
}

// jagged reports whether a series on a log y axis is noise spanning several
// decades (round-off of exact gauge fixing between 1e-13 and 1e-3): many
// points, most steps reversing direction, a spread of more than 3 decades.
// Drawn as a line it would be a solid block; it is drawn as a band from the
// minimum to the maximum of buckets of steps, with a line at their median.
func jagged(xy plotter.XYs, logY bool) bool {
	if !logY || len(xy) < 2*sparsePoints {
		return false
	}
	rev := 0
	r := newRange()
	for i := range xy {
		r.add(math.Log10(xy[i].Y))
		if i >= 2 {
			d1 := xy[i-1].Y - xy[i-2].Y
			d2 := xy[i].Y - xy[i-1].Y
			if d1*d2 < 0 {
				rev++
			}
		}
	}
	return r.hi-r.lo > 3 && float64(rev) > 0.4*float64(len(xy)-2)
}

// envelope splits xy (sorted by x) into n buckets of equal count and
// returns the polygon of their minimum and maximum and the line of their
// medians (geometric on a log axis, i.e. the median of logs).
func envelope(xy plotter.XYs, n int, logY bool) (band, mid plotter.XYs) {
	n = min(n, len(xy))
	var lower plotter.XYs
	for b := range n {
		lo, hi := b*len(xy)/n, (b+1)*len(xy)/n
		if hi <= lo {
			continue
		}
		ys := make([]float64, 0, hi-lo)
		for _, q := range xy[lo:hi] {
			ys = append(ys, q.Y)
		}
		sort.Float64s(ys)
		x := xy[(lo+hi-1)/2].X
		med := ys[len(ys)/2]
		if len(ys)%2 == 0 {
			a, c := ys[len(ys)/2-1], ys[len(ys)/2]
			if logY {
				med = math.Sqrt(a * c)
			} else {
				med = (a + c) / 2
			}
		}
		band = append(band, plotter.XY{X: x, Y: ys[len(ys)-1]})
		lower = append(lower, plotter.XY{X: x, Y: ys[0]})
		mid = append(mid, plotter.XY{X: x, Y: med})
	}
	for i := len(lower) - 1; i >= 0; i-- {
		band = append(band, lower[i])
	}
	return band, mid
}

// vmark draws a labelled vertical line across the data area.
type vmark Mark

func (m vmark) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(m.X)
	if x < c.Min.X || x > c.Max.X {
		return
	}
	ls := draw.LineStyle{Color: color.Gray{0x50}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
	c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
	if m.Label == "" {
		return
	}
	sty := textStyle(9)
	sty.Color = color.Gray{0x30}
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	at := x + vg.Points(3)
	// The label stays inside the data area: right of the line when it
	// fits, else left of it.
	if w := sty.Rectangle(m.Label).Size().X; at+w > c.Max.X {
		sty.XAlign = draw.XRight
		at = x - vg.Points(3)
	}
	c.FillText(sty, vg.Point{X: at, Y: c.Max.Y - vg.Points(3)}, m.Label)
}

// errorBars returns the error bars of s (finite points with a finite
// spread; on a log axis the lower end is clipped to the point's tenth, for
// a non-negative quantity at zero) and widens yr to hold them.
func errorBars(s Series, logX, logY, nonNeg bool, col color.Color, yr *span) plot.Plotter {
	var pts errPoints
	for i := range s.Y {
		x, y, e := s.X[i], s.Y[i], math.Abs(s.Spread[i])
		if !finite(x) || !finite(y) || !finite(e) || e == 0 || (logX && x <= 0) || (logY && y <= 0) {
			continue
		}
		lo := y - e
		if logY && lo <= 0 {
			lo = y / 10
		}
		if nonNeg && lo < 0 {
			lo = 0
		}
		pts = append(pts, errPoint{x, y, y - lo, e})
		yr.add(lo)
		yr.add(y + e)
	}
	if len(pts) == 0 {
		return nil
	}
	b, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return nil
	}
	b.LineStyle.Color = col
	b.LineStyle.Width = vg.Points(1)
	b.CapWidth = vg.Points(5)
	return b
}

type errPoint struct{ x, y, lo, hi float64 }

type errPoints []errPoint

func (p errPoints) Len() int                        { return len(p) }
func (p errPoints) XY(i int) (float64, float64)     { return p[i].x, p[i].y }
func (p errPoints) YError(i int) (float64, float64) { return p[i].lo, p[i].hi }

// categoryTicks labels the integer positions 0..n-1.
type categoryTicks []string

func (c categoryTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for i, name := range c {
		if v := float64(i); v >= lo && v <= hi {
			out = append(out, plot.Tick{Value: v, Label: name})
		}
	}
	return out
}

// roundOffRel: on a log axis, values below roundOffRel times their series'
// maximum are round-off (the gauge gap right after an exact gauge fix is
// 1e-13 where it is 1e-3 between fixes): drawn, they would pull the line
// down to the floor at every fix and turn the panel into a solid block.
const roundOffRel = 1e-9

// dropRoundOff returns xy without its round-off values and their count.
func dropRoundOff(xy plotter.XYs) (plotter.XYs, int) {
	top := math.Inf(-1)
	for _, q := range xy {
		top = math.Max(top, q.Y)
	}
	out := xy[:0:0]
	for _, q := range xy {
		if q.Y >= top*roundOffRel {
			out = append(out, q)
		}
	}
	return out, len(xy) - len(out)
}

// cornerNote writes a small grey line in the lower left of the data area.
type cornerNote string

func (n cornerNote) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := textStyle(8)
	sty.Color = color.Gray{0x60}
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	c.FillText(sty, vg.Point{X: c.Min.X + vg.Points(3), Y: c.Min.Y + vg.Points(3)}, string(n))
}
