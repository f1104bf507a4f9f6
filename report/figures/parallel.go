package figures

import (
	"fmt"
	"html"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"goldstone/internal/atomicfile"
)

// ParallelSpec describes a parallel-coordinates figure: one vertical axis
// per quantity, one line per item (a trial) through its value on every
// axis.
type ParallelSpec struct {
	Title string
	Axes  []ParallelAxis
	Lines []ParallelLine
	// ColorLabel names what a line's colour shows (its last axis' value,
	// from dark for the best to light for the worst).
	ColorLabel string
}

// ParallelAxis is one axis: a numeric range (linear or log) or categories.
type ParallelAxis struct {
	Name       string
	Lo, Hi     float64  // the numeric range (Lo < Hi; Log: Lo > 0)
	Log        bool     // a log axis
	Categories []string // a categorical axis: values 0, 1, ... are these
}

// ParallelLine is one item: its value on every axis (NaN: none, as for a
// setting that only exists for some choices of another, or a trial
// without a result), its name and its tooltip, and its colour's position
// from 0 (best, dark) to 1 (worst, light); NaN draws it grey and dashed.
type ParallelLine struct {
	Name   string
	Values []float64
	Tip    string
	Shade  float64
}

// parallel layout, in SVG user units (pixels).
const (
	parAxisGap = 150
	parLeft    = 95
	parTop     = 60
	parHeight  = 300
	parBottom  = 70
)

// Parallel writes spec as an SVG file at path (atomically): the axes with
// their names and end values (every category on a categorical one), then
// the lines, worst first so that the best are on top; each line is a group
// of class "trial" with its name (data-trial) and a tooltip (title). A
// line breaks where a value is missing; its values are dots, so that a
// line with one value still shows. The output depends only on spec.
func Parallel(path string, spec ParallelSpec) error {
	if len(spec.Axes) < 2 {
		return fmt.Errorf("parallel %s: %d axes, want 2 or more", path, len(spec.Axes))
	}
	for i, a := range spec.Axes {
		if len(a.Categories) == 0 && (!(a.Lo < a.Hi) || a.Log && !(a.Lo > 0)) {
			return fmt.Errorf("parallel %s: axis %d (%s): range [%g, %g] is not one", path, i, a.Name, a.Lo, a.Hi)
		}
	}
	for i, l := range spec.Lines {
		if len(l.Values) != len(spec.Axes) {
			return fmt.Errorf("parallel %s: line %d (%s): %d values for %d axes", path, i, l.Name, len(l.Values), len(spec.Axes))
		}
	}
	w := parLeft*2 + parAxisGap*(len(spec.Axes)-1)
	h := parTop + parHeight + parBottom
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="20" text-anchor="middle" font-size="15">%s</text>`+"\n", w/2, html.EscapeString(spec.Title))
	for i, a := range spec.Axes {
		parallelAxis(&b, i, a)
	}
	order := make([]int, len(spec.Lines))
	for i := range order {
		order[i] = i
	}
	// Worst first, the lines without a colour before all: the best on top.
	slices.SortStableFunc(order, func(x, y int) int {
		sx, sy := spec.Lines[x].Shade, spec.Lines[y].Shade
		switch {
		case math.IsNaN(sx) && math.IsNaN(sy):
			return 0
		case math.IsNaN(sx):
			return -1
		case math.IsNaN(sy):
			return 1
		case sx > sy:
			return -1
		case sx < sy:
			return 1
		}
		return 0
	})
	for _, i := range order {
		parallelLine(&b, spec.Axes, spec.Lines[i])
	}
	if spec.ColorLabel != "" {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#444">colour: %s (dark: best, light: worst; grey dashed: none)</text>`+"\n",
			w/2, h-12, html.EscapeString(spec.ColorLabel))
	}
	b.WriteString("</svg>\n")
	if err := atomicfile.WriteFile(path, []byte(b.String())); err != nil {
		return fmt.Errorf("parallel %s: %w", path, err)
	}
	return nil
}

// parallelAxis draws axis i: its line, name and end values.
func parallelAxis(b *strings.Builder, i int, a ParallelAxis) {
	x := parLeft + i*parAxisGap
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#555" stroke-width="1.5"/>`+"\n", x, parTop, x, parTop+parHeight)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x, parTop-22, html.EscapeString(a.Name))
	if a.Log {
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" fill="#777">(log)</text>`+"\n", x, parTop-8)
	}
	tick := func(v float64, label string) {
		y := parY(a, v)
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#555"/>`, x-4, svgNum(y), x, svgNum(y))
		fmt.Fprintf(b, `<text x="%d" y="%s" text-anchor="end" fill="#333">%s</text>`+"\n", x-6, svgNum(y+4), html.EscapeString(label))
	}
	if len(a.Categories) > 0 {
		for k, c := range a.Categories {
			tick(float64(k), c)
		}
		return
	}
	tick(a.Lo, strconv.FormatFloat(a.Lo, 'g', 4, 64))
	tick(a.Hi, strconv.FormatFloat(a.Hi, 'g', 4, 64))
}

// parallelLine draws one line: a path through its values (broken where
// one is missing) and a dot at each.
func parallelLine(b *strings.Builder, axes []ParallelAxis, l ParallelLine) {
	col, dash := "#999999", ` stroke-dasharray="5,3"`
	if !math.IsNaN(l.Shade) {
		col, dash = shadeColor(l.Shade), ""
	}
	fmt.Fprintf(b, `<g class="trial" data-trial="%s"><title>%s</title>`, html.EscapeString(l.Name), html.EscapeString(l.Tip))
	var d strings.Builder
	var dots strings.Builder
	pen := false
	for i, v := range l.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) || axes[i].Log && v <= 0 {
			pen = false
			continue
		}
		x, y := float64(parLeft+i*parAxisGap), parY(axes[i], v)
		if pen {
			d.WriteString(" L")
		} else {
			d.WriteString(" M")
		}
		d.WriteString(svgNum(x) + " " + svgNum(y))
		pen = true
		fmt.Fprintf(&dots, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`, svgNum(x), svgNum(y), col)
	}
	if d.Len() > 0 {
		fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.6" stroke-opacity="0.85"%s/>`, strings.TrimSpace(d.String()), col, dash)
	}
	b.WriteString(dots.String())
	b.WriteString("</g>\n")
}

// parY is the y of value v on axis a (the top is the range's high end, or
// the last category).
func parY(a ParallelAxis, v float64) float64 {
	var f float64
	switch {
	case len(a.Categories) == 1:
		f = 0.5
	case len(a.Categories) > 1:
		f = v / float64(len(a.Categories)-1)
	case a.Log:
		f = (math.Log10(v) - math.Log10(a.Lo)) / (math.Log10(a.Hi) - math.Log10(a.Lo))
	default:
		f = (v - a.Lo) / (a.Hi - a.Lo)
	}
	f = min(max(f, 0), 1)
	return float64(parTop) + float64((1-f)*parHeight)
}

// shadeColor is the colour of shade s in [0, 1]: from the palette's dark
// blue (best) through teal and green to a light yellow (worst), as
// viridis.
func shadeColor(s float64) string {
	stops := []color.RGBA{{0x44, 0x01, 0x54, 0xff}, {0x3b, 0x52, 0x8b, 0xff}, {0x21, 0x90, 0x8d, 0xff}, {0x5d, 0xc9, 0x63, 0xff}, {0xdc, 0xe3, 0x19, 0xff}}
	s = min(max(s, 0), 1)
	pos := s * float64(len(stops)-1)
	k := min(int(pos), len(stops)-2)
	f := pos - float64(k)
	mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a) + float64(f*(float64(b)-float64(a))))) }
	a, c := stops[k], stops[k+1]
	return fmt.Sprintf("#%02x%02x%02x", mix(a.R, c.R), mix(a.G, c.G), mix(a.B, c.B))
}

// svgNum formats a coordinate with two decimals (the same text on every
// build).
func svgNum(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
