package serve

import (
	"math"
	"strconv"
	"strings"

	"goldstone/runs"
)

// maxPoints is the most points a curve draws per trial: a long series is
// thinned to every k-th point, its last point kept.
const maxPoints = 400

// Curve is one metric's SVG: a line per trial.
type Curve struct {
	Name           string
	Lines          []Line
	XMin, XMax     string // axis labels
	YMin, YMax     string
	Width, Height  int
	Missing        int // trials without this metric yet
	NonFiniteSkips int // points not drawn: NaN or ±Inf
}

// Line is one trial's polyline.
type Line struct {
	Trial  string
	Points string // "x,y x,y ..." in the SVG's coordinates
	Color  string
}

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// curves draws every series of a run: its names (sorted) and one Curve per
// name, the trials in enumeration order.
func curves(trials []runs.TrialRow, series map[string]map[string][]runs.Point) ([]string, []Curve) {
	names := map[string]bool{}
	for _, m := range series {
		for n := range m {
			names[n] = true
		}
	}
	keys := sortedKeys(names)
	out := make([]Curve, 0, len(keys))
	for _, n := range keys {
		out = append(out, curve(n, trials, series))
	}
	return keys, out
}

func curve(name string, trials []runs.TrialRow, series map[string]map[string][]runs.Point) Curve {
	c := Curve{Name: name, Width: 420, Height: 220}
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, t := range trials {
		for _, p := range series[t.ID][name] {
			if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
				continue
			}
			x0, x1 = math.Min(x0, float64(p.Step)), math.Max(x1, float64(p.Step))
			y0, y1 = math.Min(y0, p.Value), math.Max(y1, p.Value)
		}
	}
	if x0 > x1 { // no finite point
		x0, x1, y0, y1 = 0, 1, 0, 1
	}
	if x1 == x0 {
		x1 = x0 + 1
	}
	if y1 == y0 {
		y0, y1 = y0-0.5, y1+0.5
	}
	c.XMin, c.XMax, c.YMin, c.YMax = num(x0), num(x1), num(y0), num(y1)
	const left, right, top, bottom = 50.0, 10.0, 10.0, 25.0
	w, h := float64(c.Width)-left-right, float64(c.Height)-top-bottom
	for i, t := range trials {
		pts := series[t.ID][name]
		if len(pts) == 0 {
			c.Missing++
			continue
		}
		step := (len(pts) + maxPoints - 1) / maxPoints
		var b strings.Builder
		for j, p := range pts {
			if j%step != 0 && j != len(pts)-1 {
				continue
			}
			if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
				c.NonFiniteSkips++
				continue
			}
			x := left + float64(w*(float64(p.Step)-x0))/(x1-x0)
			y := top + float64(h*(1-(p.Value-y0)/(y1-y0)))
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatFloat(x, 'f', 1, 64) + "," + strconv.FormatFloat(y, 'f', 1, 64))
		}
		c.Lines = append(c.Lines, Line{Trial: t.Name, Points: b.String(), Color: palette[i%len(palette)]})
	}
	return c
}
