package figures

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CurveSpec describes a figure of one or more panels of line series.
type CurveSpec struct {
	Title  string  // figure title above all panels; "" = none
	Panels []Panel // drawn row by row
	// Cols is the number of panels per row; 0 means all panels in one row
	// when there are at most 3, two per row for 4, three per row otherwise.
	Cols int
	// ShareYByRow gives the panels of a row (with the same y scale) one y
	// range, so that they compare at a glance (facets of one quantity).
	ShareYByRow bool
}

// Panel is one set of axes.
type Panel struct {
	Title, XLabel, YLabel string
	// LogX and LogY select log10 axes. Points with a non-positive coordinate
	// on a log axis are dropped (so a loss gap that reaches exactly 0, or step
	// 0, simply does not appear).
	LogX, LogY bool
	Series     []Series
	// Marks are vertical lines at given x, labelled (e.g. the step where
	// training switches from minibatches to the full batch).
	Marks []Mark
	// XCategories, if set, labels the x positions 0, 1, ... with these
	// names instead of numbers (a categorical setting).
	XCategories []string
	// NonNegative says the quantity cannot be negative: error bars stop
	// at zero.
	NonNegative bool
	// Summaries says the points are summaries (one per trial or mean over
	// seeds), not a training series: on a log axis every positive value is
	// drawn, none is taken for round-off (roundOffRel).
	Summaries bool
}

// Mark is a labelled vertical line in a panel.
type Mark struct {
	X     float64
	Label string
}

// Series is one line. X and Y must have equal lengths; non-finite points are
// dropped, and series longer than 2000 points are thinned for drawing.
type Series struct {
	// Name labels the series in the figure's legend; series of the same
	// Name, colour and dash share one legend entry, "" means no entry.
	Name string
	// Group is the colour key: series with the same key have the same colour
	// in every panel. "" means Name. Keys get palette colours in order of
	// first appearance (panel by panel, series by series); with more than 10
	// keys, evenly spaced hues are used instead.
	Group string
	// Color, if non-nil, overrides the colour derived from Group (use
	// Palette(k) to keep colours fixed across figures).
	Color color.Color
	// Style is the dash and marker key: when any series of the figure
	// has one, series of one Style share their dash pattern and marker
	// shape in every panel and different Styles differ (a grid setting of
	// the trials, drawn in the variant's colour); otherwise dash and
	// marker follow the colour key.
	Style  string
	Dashed bool
	X, Y   []float64
	// Spread, if non-nil (len(Y)), draws an error bar from Y-Spread to
	// Y+Spread at every point (e.g. the standard deviation over seeds).
	Spread []float64
	// Dots, if non-nil (len(Y)), draws the values behind each point (the
	// seeds whose mean Y is) as small hollow markers at its x.
	Dots [][]float64
}

// panel tile size in Curves.
const (
	curveTileW = 4.4 * vg.Inch
	curveTileH = 3.3 * vg.Inch
)

// Curves draws spec into a PNG at path, written atomically. Panels are tiled
// with aligned data areas; one legend for the whole figure is drawn to the
// right of the panels. See Panel and Series for the treatment of log axes,
// non-finite values, long series and colours.
func Curves(path string, spec CurveSpec) error {
	if err := checkCurves(path, spec); err != nil {
		return err
	}
	colors, index := curveColors(spec.Panels)
	styles := styleIndex(spec.Panels)
	style := func(s Series) int {
		if styles != nil {
			return styles[s.Style]
		}
		return index[seriesKey(s)]
	}
	shared := sharedX(spec.Panels)

	cols := spec.Cols
	if cols <= 0 {
		switch n := len(spec.Panels); {
		case n <= 3:
			cols = n
		case n == 4:
			cols = 2
		default:
			cols = 3
		}
	}
	cols = min(cols, len(spec.Panels))
	rows := (len(spec.Panels) + cols - 1) / cols

	plots := make([][]*plot.Plot, rows)
	var entries []legendEntry
	seen := map[legendKey]bool{}
	for r := range rows {
		plots[r] = make([]*plot.Plot, cols)
		for c := range cols {
			k := r*cols + c
			if k >= len(spec.Panels) {
				continue
			}
			p, lines, err := curvePanel(spec.Panels[k], colors, style, shared[xAxisKey{spec.Panels[k].LogX, spec.Panels[k].XLabel}])
			if err != nil {
				return fmt.Errorf("curves %s: panel %d (%q): %w", path, k, spec.Panels[k].Title, err)
			}
			plots[r][c] = p
			for i, s := range spec.Panels[k].Series {
				key := legendKey{s.Name, colorKey(lineColor(s, colors)), s.Dashed || style(s) > 0}
				if s.Name == "" || seen[key] {
					continue
				}
				seen[key] = true
				entries = append(entries, legendEntry{s.Name, lines[i]})
			}
		}
	}

	if spec.ShareYByRow {
		for r := range rows {
			shareY(plots[r], spec.Panels[r*cols:min(len(spec.Panels), (r+1)*cols)])
		}
	}
	leg, lw, lh := sideLegend(entries)
	th := titleHeight(spec.Title)
	w := max(vg.Length(cols)*curveTileW+lw, titleWidth(spec.Title))
	h := th + max(vg.Length(rows)*curveTileH, lh+vg.Points(20))
	return paintBoth(path, w, h, func(dc draw.Canvas) {
		dc = drawTitle(dc, spec.Title)
		grid := draw.Crop(dc, 0, -lw, 0, 0)
		tiles := draw.Tiles{
			Rows: rows, Cols: cols,
			PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8),
			PadX: vg.Points(16), PadY: vg.Points(12),
		}
		cvs := plot.Align(plots, tiles, grid)
		for r := range rows {
			for c := range cols {
				if plots[r][c] != nil {
					plots[r][c].Draw(cvs[r][c])
				}
			}
		}
		if len(entries) > 0 {
			lc := draw.Crop(dc, w-lw, 0, 0, -vg.Points(20))
			lc = draw.Crop(lc, vg.Points(4), 0, 0, 0)
			leg.Draw(lc)
		}
	})
}

// checkCurves checks that spec has panels and that every series' columns
// have one length.
func checkCurves(path string, spec CurveSpec) error {
	if len(spec.Panels) == 0 {
		return fmt.Errorf("curves %s: no panels", path)
	}
	for pi, pn := range spec.Panels {
		for si, s := range pn.Series {
			if len(s.X) != len(s.Y) {
				return fmt.Errorf("curves %s: panel %d (%q) series %d (%q): len(X)=%d != len(Y)=%d",
					path, pi, pn.Title, si, s.Name, len(s.X), len(s.Y))
			}
			if s.Spread != nil && len(s.Spread) != len(s.Y) {
				return fmt.Errorf("curves %s: panel %d (%q) series %d (%q): len(Spread)=%d != len(Y)=%d",
					path, pi, pn.Title, si, s.Name, len(s.Spread), len(s.Y))
			}
			if s.Dots != nil && len(s.Dots) != len(s.Y) {
				return fmt.Errorf("curves %s: panel %d (%q) series %d (%q): len(Dots)=%d != len(Y)=%d",
					path, pi, pn.Title, si, s.Name, len(s.Dots), len(s.Y))
			}
		}
	}
	return nil
}

type legendKey struct {
	name   string
	color  [4]uint32
	dashed bool
}

func colorKey(c color.Color) [4]uint32 {
	r, g, b, a := c.RGBA()
	return [4]uint32{r, g, b, a}
}

// curveColors assigns a colour to every colour key (Group, else Name) of
// series without an explicit Color, in order of first appearance.
func curveColors(panels []Panel) (map[string]color.Color, map[string]int) {
	var keys []string
	idx := map[string]int{}
	for _, pn := range panels {
		for _, s := range pn.Series {
			if s.Color != nil {
				continue
			}
			k := seriesKey(s)
			if _, ok := idx[k]; !ok {
				idx[k] = len(keys)
				keys = append(keys, k)
			}
		}
	}
	m := make(map[string]color.Color, len(keys))
	for i, k := range keys {
		if len(keys) <= len(palette) {
			m[k] = Palette(i)
		} else {
			m[k] = hue(i, len(keys))
		}
	}
	// Series with an explicit colour get a style index too: Palette(j)'s
	// is j (so a colour fixed across figures keeps its dash and marker),
	// any other colour's the next in order of appearance after the others.
	for _, pn := range panels {
		for _, s := range pn.Series {
			if k := seriesKey(s); s.Color != nil {
				if _, ok := idx[k]; !ok {
					idx[k] = len(idx)
					if j := paletteIndex(s.Color); j >= 0 {
						idx[k] = j
					}
				}
			}
		}
	}
	return m, idx
}

// paletteIndex is the index of c in the palette, or -1.
func paletteIndex(c color.Color) int {
	for j := range palette {
		if colorKey(c) == colorKey(palette[j]) {
			return j
		}
	}
	return -1
}

// styleIndex numbers the Styles of the series (the empty one too) in
// order of first appearance, or returns nil when no series has a Style.
func styleIndex(panels []Panel) map[string]int {
	styles := map[string]int{}
	any := false
	for _, pn := range panels {
		for _, s := range pn.Series {
			if _, ok := styles[s.Style]; !ok {
				styles[s.Style] = len(styles)
			}
			any = any || s.Style != ""
		}
	}
	if !any {
		return nil
	}
	return styles
}

// xAxisKey identifies an x axis: panels of one figure with the same scale
// and x label share their x range.
type xAxisKey struct {
	log   bool
	label string
}

// sharedX returns the x range of all panels with the same x axis (scale
// and label), so that such panels of one figure line up.
func sharedX(panels []Panel) map[xAxisKey]span {
	out := map[xAxisKey]span{}
	for _, pn := range panels {
		key := xAxisKey{pn.LogX, pn.XLabel}
		r, ok := out[key]
		if !ok {
			r = newRange()
		}
		for _, s := range pn.Series {
			for _, q := range cleanXY(s.X, s.Y, pn.LogX, pn.LogY) {
				r.add(q.X)
			}
		}
		for _, m := range pn.Marks {
			if finite(m.X) && (!pn.LogX || m.X > 0) {
				r.add(m.X)
			}
		}
		if len(pn.XCategories) > 0 {
			r.add(-0.5)
			r.add(float64(len(pn.XCategories)) - 0.5)
		}
		out[key] = r
	}
	return out
}

func seriesKey(s Series) string {
	if s.Group != "" {
		return s.Group
	}
	return s.Name
}

func lineColor(s Series, colors map[string]color.Color) color.Color {
	if s.Color != nil {
		return s.Color
	}
	return colors[seriesKey(s)]
}

// curvePanel builds the plot of one panel and returns the legend thumbnail
// of each series (its line and markers; series with no drawable point are
// not added to the plot). Series are told apart by colour and, per colour
// key, dash pattern and marker shape. The x axis spans xr (shared by the
// figure's panels); the y axis spans the data, except a first point of a
// series far outside the rest of it (the loss at step 1), which is drawn
// off scale.
func curvePanel(pn Panel, colors map[string]color.Color, style func(Series) int, xr span) (*plot.Plot, []plot.Thumbnailer, error) {
	p := plot.New()
	p.Title.Text = pn.Title
	p.X.Label.Text = pn.XLabel
	p.Y.Label.Text = pn.YLabel
	p.Title.TextStyle.Font.Size = vg.Points(12)

	yr := newRange()
	thumbs := make([]plot.Thumbnailer, len(pn.Series))
	var drawn []plot.Plotter
	roundOff := 0
	for i, s := range pn.Series {
		xy := cleanXY(s.X, s.Y, pn.LogX, pn.LogY)
		if pn.LogY && !pn.Summaries {
			var n int
			xy, n = dropRoundOff(xy)
			roundOff += n
		}
		k := style(s)
		col := lineColor(s, colors)
		l := &plotter.Line{LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1.6), Dashes: dashPattern(k)}}
		if s.Dashed && len(l.Dashes) == 0 {
			l.Dashes = dashes
		}
		glyph := draw.GlyphStyle{Color: col, Radius: vg.Points(2.6), Shape: glyphShape(k)}
		thumbs[i] = lineGlyph{l, &plotter.Scatter{GlyphStyle: glyph}}
		if len(xy) == 0 {
			continue
		}
		for j, q := range xy {
			if j == 0 && initialOutlier(xy, pn.LogY) {
				continue
			}
			yr.add(q.Y)
		}
		if s.Spread != nil {
			if bars := errorBars(s, pn.LogX, pn.LogY, pn.NonNegative, col, &yr); bars != nil {
				drawn = append(drawn, bars)
			}
		}
		if dots := seedDots(s, pn, col, &yr); dots != nil {
			drawn = append(drawn, dots)
		}
		sparse := len(xy) <= sparsePoints
		if jagged(xy, pn.LogY) {
			band, mid := envelope(xy, bandBuckets, pn.LogY)
			fill := color.NRGBA{}
			r, g, b, _ := col.RGBA()
			fill = color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0x38}
			poly, err := plotter.NewPolygon(band)
			if err == nil {
				poly.Color = fill
				poly.LineStyle.Width = 0
				drawn = append(drawn, poly)
			}
			xy = mid
		} else if len(xy) > maxDrawPoints {
			xs, ys := splitXY(xy)
			if idx := downsample(xs, ys, maxDrawPoints, pn.LogX); idx != nil {
				thin := make(plotter.XYs, len(idx))
				for j, k := range idx {
					thin[j] = xy[k]
				}
				xy = thin
			}
		}
		l.XYs = xy
		drawn = append(drawn, l)
		if m := markerPoints(xy, k, pn.LogX, sparse); len(m) > 0 {
			drawn = append(drawn, &plotter.Scatter{XYs: m, GlyphStyle: glyph})
		}
	}
	for _, m := range pn.Marks {
		if !finite(m.X) || (pn.LogX && m.X <= 0) {
			continue
		}
		drawn = append(drawn, vmark(m))
	}
	if len(drawn) == len(pn.Marks) {
		drawn = append(drawn, note("no drawable data"))
	}
	if roundOff > 0 {
		drawn = append(drawn, cornerNote(fmt.Sprintf("%d values below %s × their series' maximum (round-off) not drawn", roundOff, formatExp(roundOffRel))))
	}
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{0xe0}
	g.Horizontal.Color = color.Gray{0xe0}
	p.Add(g)
	p.Add(drawn...)
	if err := setAxis(&p.X, xr, pn.LogX); err != nil {
		return nil, nil, fmt.Errorf("x axis: %w", err)
	}
	if len(pn.XCategories) > 0 {
		p.X.Tick.Marker = categoryTicks(pn.XCategories)
	}
	if err := setAxis(&p.Y, yr, pn.LogY); err != nil {
		return nil, nil, fmt.Errorf("y axis: %w", err)
	}
	return p, thumbs, nil
}

// seedDots returns the hollow markers of s.Dots (nil when there are none)
// and widens yr to hold them.
func seedDots(s Series, pn Panel, col color.Color, yr *span) plot.Plotter {
	var dots plotter.XYs
	for i, vs := range s.Dots {
		for _, v := range vs {
			if finite(s.X[i]) && finite(v) && (!pn.LogX || s.X[i] > 0) && (!pn.LogY || v > 0) {
				dots = append(dots, plotter.XY{X: s.X[i], Y: v})
				yr.add(v)
			}
		}
	}
	if len(dots) == 0 {
		return nil
	}
	return &plotter.Scatter{XYs: dots, GlyphStyle: draw.GlyphStyle{Color: col, Radius: vg.Points(2), Shape: draw.RingGlyph{}}}
}

// cleanXY returns the finite points of (x, y), without non-positive
// coordinates on log axes.
func cleanXY(x, y []float64, logX, logY bool) plotter.XYs {
	xy := make(plotter.XYs, 0, len(x))
	for i, xv := range x {
		yv := y[i]
		if !finite(xv) || !finite(yv) || (logX && xv <= 0) || (logY && yv <= 0) {
			continue
		}
		xy = append(xy, plotter.XY{X: xv, Y: yv})
	}
	return xy
}

func splitXY(xy plotter.XYs) (x, y []float64) {
	x = make([]float64, len(xy))
	y = make([]float64, len(xy))
	for i, q := range xy {
		x[i], y[i] = q.X, q.Y
	}
	return x, y
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

type span struct{ lo, hi float64 }

func newRange() span { return span{math.Inf(1), math.Inf(-1)} }

func (s *span) add(v float64) {
	s.lo = math.Min(s.lo, v)
	s.hi = math.Max(s.hi, v)
}

func (s span) empty() bool { return s.lo > s.hi }

var errNoScale = errors.New("invalid axis range")

// setAxis fixes the range of a log axis (plot's log scale panics on
// non-positive bounds, including those of an empty panel) and installs the
// log scale and ticks. Linear axes keep plot's automatic range, except that an
// empty one gets [0, 1].
func setAxis(a *plot.Axis, r span, log bool) error {
	if !log {
		switch {
		case r.empty():
			a.Min, a.Max = 0, 1
		case r.lo == r.hi:
			a.Min, a.Max = r.lo-1, r.hi+1
		default:
			pad := 0.02 * (r.hi - r.lo)
			a.Min, a.Max = r.lo-pad, r.hi+pad
		}
		a.Tick.Marker = linTicks{}
		return nil
	}
	lo, hi := r.lo, r.hi
	switch {
	case r.empty():
		lo, hi = 1, 10
	case lo == hi:
		lo, hi = lo/math.Sqrt(10), hi*math.Sqrt(10)
	}
	if !(lo > 0) || !(hi > lo) {
		return fmt.Errorf("%w [%g, %g] for a log axis", errNoScale, lo, hi)
	}
	a.Min, a.Max = lo, hi
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
	return nil
}

// shareY sets the y axes of the plots of one row (panels with the same y
// scale as the first) to the union of their ranges.
func shareY(row []*plot.Plot, panels []Panel) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, p := range row {
		if p != nil && i < len(panels) && panels[i].LogY == panels[0].LogY {
			lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
		}
	}
	for i, p := range row {
		if p != nil && i < len(panels) && panels[i].LogY == panels[0].LogY && lo < hi {
			p.Y.Min, p.Y.Max = lo, hi
		}
	}
}
