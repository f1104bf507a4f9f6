package figures

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// SweepSpec describes a sweep figure: one summary metric against each swept
// setting, faceted by variant.
type SweepSpec struct {
	Title  string
	Metric string // y label
	// Settings are the swept settings to put on x axes, in order (one row of
	// panels each); the seed is not one of them: points that differ only by
	// seed are averaged.
	Settings []string
	// LogX names the settings drawn on a log axis; LogY the metric.
	LogX map[string]bool
	LogY bool
	// Points are the trials' results.
	Points []SweepPoint
	// Variants, if set, are every variant of the run in order: variant k
	// is drawn in Palette(k), so that it has one colour in every figure of
	// the run, also where an earlier variant has no point (gauge counts of
	// a variant without gauge fixes). Nil: the variants of Points in order
	// of first appearance, coloured in that order. Variants of Points not
	// listed come after those listed.
	Variants []string
}

// SweepPoint is one trial: its variant, its value of every swept setting
// (as text: numbers are placed on a numeric axis, anything else on a
// categorical one in order of first appearance) and its metric value.
// Non-finite values are left out of means.
type SweepPoint struct {
	Variant  string
	Settings map[string]string
	Value    float64
}

// Sweep draws spec into a PNG (and its SVG twin) at path, written
// atomically: one panel per swept setting (the metric against it), every
// variant on the same axes in its own colour; within a variant one line
// per combination of the other swept settings, told apart by dash and
// marker (named "goldstone dim=10, lr=0.1"). At each x the line goes
// through the mean over the points that differ only by seed; with at most
// SeedPoints of them each seed's value is drawn as a dot, with more an
// error bar of ± one standard deviation (not below zero when no value is
// negative). Non-finite values (a threshold never reached) are left out.
func Sweep(path string, spec SweepSpec) error {
	panels, err := sweepPanels(spec)
	if err != nil {
		return fmt.Errorf("sweep %s: %w", path, err)
	}
	if err := Curves(path, CurveSpec{Title: spec.Title, Panels: panels, Cols: min(2, len(panels))}); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}

// sweepPanels returns the panels of Sweep: one per swept setting.
func sweepPanels(spec SweepSpec) ([]Panel, error) {
	if len(spec.Settings) == 0 {
		return nil, fmt.Errorf("no swept settings")
	}
	if len(spec.Points) == 0 {
		return nil, fmt.Errorf("no points")
	}
	variants := slices.Clone(spec.Variants)
	nonNeg := true
	for _, p := range spec.Points {
		if !slices.Contains(variants, p.Variant) {
			variants = append(variants, p.Variant) // after those of Variants
		}
		for _, s := range spec.Settings {
			if _, ok := p.Settings[s]; !ok {
				return nil, fmt.Errorf("a point of variant %q has no value of %q", p.Variant, s)
			}
		}
		if finite(p.Value) && p.Value < 0 {
			nonNeg = false
		}
	}
	fixed := len(spec.Variants) > 0 && len(variants) <= len(palette)
	var panels []Panel
	for _, s := range spec.Settings {
		cats, numeric := sweepAxis(spec.Points, s)
		others := slices.DeleteFunc(slices.Clone(spec.Settings), func(o string) bool { return o == s })
		pn := Panel{Title: spec.Metric + " against " + s, XLabel: s, YLabel: spec.Metric, LogX: numeric && spec.LogX[s], LogY: spec.LogY, NonNegative: nonNeg, Summaries: true}
		if !numeric {
			pn.XCategories = cats
		}
		for k, v := range variants {
			series := sweepSeries(spec.Points, v, s, others, cats, numeric)
			for i := range series {
				if fixed {
					series[i].Color = Palette(k)
				}
			}
			pn.Series = append(pn.Series, series...)
		}
		panels = append(panels, pn)
	}
	return panels, nil
}

// SeedPoints is the largest number of seeds per point that Sweep draws as
// dots (individual values) instead of an error bar.
const SeedPoints = 3

// Constant reports whether the figure would show a constant: every mean
// over seeds (per variant and setting) the same, or no finite value at
// all. Such a metric (a setting of the data such as l_star, a count that
// every run reaches) is not worth a figure.
func (spec SweepSpec) Constant() bool {
	type key struct{ v, s string }
	sums := map[key][2]float64{}
	for _, p := range spec.Points {
		if !finite(p.Value) {
			continue
		}
		parts := []string{}
		for _, s := range spec.Settings {
			parts = append(parts, p.Settings[s])
		}
		k := key{p.Variant, strings.Join(parts, "\x00")}
		a := sums[k]
		sums[k] = [2]float64{a[0] + p.Value, a[1] + 1}
	}
	first, seen := 0.0, false
	for _, a := range sums {
		m := a[0] / a[1]
		if !seen {
			first, seen = m, true
			continue
		}
		if math.Abs(m-first) > 1e-12*math.Max(math.Abs(m), math.Abs(first)) {
			return false
		}
	}
	return true
}

// sweepAxis returns the distinct values of setting s in order of first
// appearance and whether all of them are numbers.
func sweepAxis(points []SweepPoint, s string) (cats []string, numeric bool) {
	numeric = true
	for _, p := range points {
		v := p.Settings[s]
		if !slices.Contains(cats, v) {
			cats = append(cats, v)
		}
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			numeric = false
		}
	}
	return cats, numeric
}

// sweepSeries returns, for variant v, one series per combination of the
// other settings: the mean and standard deviation of the metric at each
// value of s, and the seeds' values where there are at most SeedPoints.
func sweepSeries(points []SweepPoint, v, s string, others, cats []string, numeric bool) []Series {
	type acc struct {
		n, sum, sq float64
		vals       []float64
	}
	var groups []string
	vals := map[string]map[string]*acc{} // group -> x value -> acc
	for _, p := range points {
		if p.Variant != v {
			continue
		}
		parts := make([]string, len(others))
		for i, o := range others {
			parts[i] = o + "=" + p.Settings[o]
		}
		g := strings.Join(parts, ", ")
		if vals[g] == nil {
			vals[g] = map[string]*acc{}
			groups = append(groups, g)
		}
		a := vals[g][p.Settings[s]]
		if a == nil {
			a = &acc{}
			vals[g][p.Settings[s]] = a
		}
		if finite(p.Value) {
			a.n++
			a.sum += p.Value
			a.sq += float64(p.Value * p.Value)
			a.vals = append(a.vals, p.Value)
		}
	}
	var out []Series
	for _, g := range groups {
		type pt struct {
			x, y, e float64
			vals    []float64
		}
		var pts []pt
		for i, c := range cats {
			a := vals[g][c]
			if a == nil || a.n == 0 {
				continue
			}
			x := float64(i)
			if numeric {
				x, _ = strconv.ParseFloat(c, 64)
			}
			mean := a.sum / a.n
			sd := 0.0
			if a.n > 1 {
				sd = math.Sqrt(math.Max(0, (a.sq-a.n*mean*mean)/(a.n-1)))
			}
			pts = append(pts, pt{x, mean, sd, a.vals})
		}
		slices.SortFunc(pts, func(a, b pt) int { return cmpFloat(a.x, b.x) })
		name := strings.TrimSpace(v + " " + g)
		if name == "" {
			name = "mean over seeds"
		}
		se := Series{Name: name, Group: v, Style: g}
		dots := true
		for _, q := range pts {
			dots = dots && len(q.vals) <= SeedPoints
		}
		for _, q := range pts {
			se.X = append(se.X, q.x)
			se.Y = append(se.Y, q.y)
			if dots {
				se.Dots = append(se.Dots, q.vals)
			} else {
				se.Spread = append(se.Spread, q.e)
			}
		}
		out = append(out, se)
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
