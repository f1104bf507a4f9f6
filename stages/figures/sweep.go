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

// Sweep draws spec into a PNG at path, written atomically: row r shows the
// metric against Settings[r], one panel per variant (in order of first
// appearance, one y range per row); in each panel one line per combination of the other swept
// settings (named "dim=10, lr=0.1", the same colour, dash and marker in
// every panel), at each x the mean over the points that differ only by
// seed, with an error bar of ± one standard deviation where there are
// several.
func Sweep(path string, spec SweepSpec) error {
	if len(spec.Settings) == 0 {
		return fmt.Errorf("sweep %s: no swept settings", path)
	}
	if len(spec.Points) == 0 {
		return fmt.Errorf("sweep %s: no points", path)
	}
	var variants []string
	for _, p := range spec.Points {
		if !slices.Contains(variants, p.Variant) {
			variants = append(variants, p.Variant)
		}
		for _, s := range spec.Settings {
			if _, ok := p.Settings[s]; !ok {
				return fmt.Errorf("sweep %s: a point of variant %q has no value of %q", path, p.Variant, s)
			}
		}
	}
	var panels []Panel
	for _, s := range spec.Settings {
		cats, numeric := sweepAxis(spec.Points, s)
		others := slices.DeleteFunc(slices.Clone(spec.Settings), func(o string) bool { return o == s })
		for _, v := range variants {
			title := s
			if v != "" {
				title = v + ": " + s
			}
			pn := Panel{Title: title, XLabel: s, YLabel: spec.Metric, LogX: numeric && spec.LogX[s], LogY: spec.LogY}
			if !numeric {
				pn.XCategories = cats
			}
			pn.Series = sweepSeries(spec.Points, v, s, others, cats, numeric)
			panels = append(panels, pn)
		}
	}
	if err := Curves(path, CurveSpec{Title: spec.Title, Panels: panels, Cols: len(variants), ShareYByRow: true}); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
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
// value of s.
func sweepSeries(points []SweepPoint, v, s string, others, cats []string, numeric bool) []Series {
	type acc struct{ n, sum, sq float64 }
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
			a.sq += p.Value * p.Value
		}
	}
	var out []Series
	for _, g := range groups {
		type pt struct{ x, y, e float64 }
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
			pts = append(pts, pt{x, mean, sd})
		}
		slices.SortFunc(pts, func(a, b pt) int { return cmpFloat(a.x, b.x) })
		se := Series{Name: g, Group: g}
		if g == "" {
			se.Name, se.Group = "mean over seeds", "mean over seeds"
		}
		for _, q := range pts {
			se.X = append(se.X, q.x)
			se.Y = append(se.Y, q.y)
			se.Spread = append(se.Spread, q.e)
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
