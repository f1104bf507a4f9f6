package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"goldstone/experiment"
	"goldstone/optim"
	"goldstone/report/figures"
	"goldstone/runs"
	"goldstone/search"
)

// The files of a search run's views in its report directory.
const (
	SearchBestFile     = "search-best.png"     // best so far against cumulative training steps
	SearchCurvesFile   = "search-curves.png"   // every trial's learning curve, coloured by outcome
	SearchSettingsFile = "search-settings.png" // the objective against each searched setting
	SearchParallelFile = "search-parallel.svg" // parallel coordinates: the settings and the objective
)

// SearchViews draws the views of search run runID of e (e.Search: the
// search the run recorded; nothing for a run without one) into dir, its
// report directory: the best objective so far against the cumulative
// training steps in suggestion order, every trial's learning curve
// coloured by its outcome, the objective against each searched setting,
// and the parallel coordinates of every trial's settings and objective;
// with their captions (figures.CaptionsFile). It returns the files it
// wrote. The files depend only on what the run recorded.
func SearchViews(ctx context.Context, st *runs.Store, e *experiment.Experiment, runID int64, dir string) ([]string, error) {
	if e.Search == nil {
		return nil, nil
	}
	d, err := LoadSearch(ctx, st, e, runID)
	if err != nil {
		return nil, err
	}
	if len(d.Trials) == 0 {
		return nil, nil
	}
	caps := map[string]string{}
	var paths []string
	for _, v := range []struct {
		file string
		draw func(path string) (string, error)
	}{
		{SearchBestFile, d.drawBest},
		{SearchCurvesFile, d.drawCurves},
		{SearchSettingsFile, d.drawSettings},
		{SearchParallelFile, d.drawParallel},
	} {
		if err := ctx.Err(); err != nil {
			return paths, err
		}
		path := filepath.Join(dir, v.file)
		c, err := v.draw(path)
		if err != nil {
			return paths, err
		}
		caps[v.file] = c
		paths = append(paths, path)
		if filepath.Ext(path) == ".png" {
			paths = append(paths, figures.SVGPath(path))
		}
	}
	if err := figures.AddCaptions(dir, caps); err != nil {
		return paths, err
	}
	return append(paths, filepath.Join(dir, figures.CaptionsFile)), nil
}

// title is a figure's title: the run and what it shows.
func (d *SearchData) title(what string) string {
	return fmt.Sprintf("%s run %d: %s", d.Experiment, d.Run, what)
}

// direction says which way the objective is better.
func (d *SearchData) direction() string {
	if d.Search.Maximize() {
		return "higher is better"
	}
	return "lower is better"
}

// pointsText counts the points and trials for a caption.
func (d *SearchData) pointsText() string {
	return fmt.Sprintf("%d points of a %s search, %d trials", len(d.Points), d.Search.Sampler, len(d.Trials))
}

// drawBest draws the best objective so far against the training steps
// spent so far, points in suggestion order.
func (d *SearchData) drawBest(path string) (string, error) {
	best := figures.Series{Name: "best so far", Color: figures.Palette(0)}
	cum, cur := 0.0, math.NaN()
	var marks []figures.Mark
	var each []figures.Series
	var values []float64
	for i, p := range d.Points {
		cum += float64(p.Steps)
		if d.better(p.Value, cur) {
			cur = p.Value
		}
		best.X, best.Y = append(best.X, cum), append(best.Y, cur)
		each = append(each, figures.Series{Name: "each point (mean over its trials)", Color: figures.Palette(7), X: []float64{cum}, Y: []float64{p.Value}})
		values = append(values, p.Value)
		if w := d.Search.Wave; w > 0 && (i+1)%w == 0 && i+1 < len(d.Points) && len(d.Points)/w <= 12 {
			marks = append(marks, figures.Mark{X: cum, Label: fmt.Sprintf("wave %d", (i+1)/w+1)})
		}
	}
	logY := logWorthyValues(values)
	pn := figures.Panel{Title: "best " + d.Search.Objective + " so far (" + d.direction() + ")", XLabel: "training steps, cumulative in suggestion order",
		YLabel: d.Search.Objective, LogY: logY, Summaries: true, Marks: marks, Series: append(each, best)}
	if err := figures.Curves(path, figures.CurveSpec{Title: d.title("the search's progress"), Panels: []figures.Panel{pn}}); err != nil {
		return "", err
	}
	missing := 0
	for _, p := range d.Points {
		if math.IsNaN(p.Value) {
			missing++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The best %s of the points so far (%s; a point's value is the mean over its trials) against the training steps the search had spent, the points in the order they were suggested; grey dots: each point's own value", d.Search.Objective, d.direction())
	if len(marks) > 0 {
		fmt.Fprintf(&b, "; the vertical lines are where each wave of %d points began", d.Search.Wave)
	}
	b.WriteString(". ")
	if logY {
		b.WriteString("A log axis: the values span three decades or more. ")
	}
	if missing > 0 {
		fmt.Fprintf(&b, "%d points have no finite value (a trial failed, diverged or stopped early) and count as the worst. ", missing)
	}
	fmt.Fprintf(&b, "%s, %d training steps in all.", d.pointsText(), int64(cum))
	return b.String(), nil
}

// drawCurves draws every trial's learning curve, coloured by outcome.
func (d *SearchData) drawCurves(path string) (string, error) {
	colors := outcomeColors(d.Trials)
	count := map[string]int{}
	var outcomes []string
	var series []figures.Series
	var ys []float64
	without := 0
	for _, t := range d.Trials {
		o := Outcome(t.Status)
		if count[o] == 0 {
			outcomes = append(outcomes, o)
		}
		count[o]++
		if len(t.CurveX) == 0 {
			without++
			continue
		}
		series = append(series, figures.Series{Name: o, Color: figures.Palette(colors[o]), X: t.CurveX, Y: t.CurveY})
		ys = append(ys, t.CurveY...)
	}
	logY := logWorthyValues(ys)
	pn := figures.Panel{Title: d.Curve + " of every trial, by outcome", XLabel: "step", YLabel: d.Curve, LogY: logY, Series: series}
	if err := figures.Curves(path, figures.CurveSpec{Title: d.title("learning curves"), Panels: []figures.Panel{pn}}); err != nil {
		return "", err
	}
	slices.SortFunc(outcomes, func(a, b string) int { return colors[a] - colors[b] })
	var parts []string
	for _, o := range outcomes {
		parts = append(parts, fmt.Sprintf("%d %s", count[o], o))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The %s series of every trial of the search against its training step, one line per trial, coloured by how the trial ended (%s)", d.Curve, strings.Join(parts, ", "))
	if d.Curve != d.Search.Objective {
		fmt.Fprintf(&b, "; the objective %s is not recorded as a series, so the lines show %s", d.Search.Objective, d.Curve)
	}
	b.WriteString(". A trial stopped early ends where it stopped. ")
	if logY {
		fmt.Fprintf(&b, "%s on a log axis (its values span three decades or more). ", d.Curve)
	}
	if without > 0 {
		fmt.Fprintf(&b, "%d trials recorded no %s series and have no line. ", without, d.Curve)
	}
	b.WriteString(d.pointsText() + ".")
	return b.String(), nil
}

// drawSettings draws the objective against each searched setting: a panel
// per setting, a marker per point where the setting exists.
func (d *SearchData) drawSettings(path string) (string, error) {
	best := d.Best()
	var panels []figures.Panel
	var values []float64
	for _, p := range d.Points {
		values = append(values, p.Value)
	}
	logY := logWorthyValues(values)
	for _, sp := range d.Search.Space.Params {
		pn := figures.Panel{Title: d.Search.Objective + " against " + sp.Key, XLabel: sp.Key, YLabel: d.Search.Objective,
			LogX: sp.Dist != search.Choice && sp.Log, LogY: logY, Summaries: true}
		if sp.Dist == search.Choice {
			for _, c := range sp.Choices {
				pn.XCategories = append(pn.XCategories, fmt.Sprint(c))
			}
		}
		for k, p := range d.Points {
			x, ok := settingX(sp, d.Trials[p.Trials[0]].Searched)
			if !ok || math.IsNaN(p.Value) {
				continue
			}
			s := figures.Series{Name: "a point (mean over its trials)", Color: figures.Palette(0), X: []float64{x}, Y: []float64{p.Value}}
			if k == best {
				s.Name, s.Color = "the best point", figures.Palette(2)
			}
			if len(p.Trials) > 1 {
				var dots []float64
				for _, i := range p.Trials {
					dots = append(dots, d.Trials[i].Objective)
				}
				s.Dots = [][]float64{dots}
			}
			pn.Series = append(pn.Series, s)
		}
		panels = append(panels, pn)
	}
	if err := figures.Curves(path, figures.CurveSpec{Title: d.title(d.Search.Objective + " against the searched settings"), Panels: panels, Cols: min(3, len(panels)), ShareYByRow: true}); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The %s of every point (%s; the mean over its trials, each trial's own value a hollow dot) against each searched setting, one panel each; the best point in green. ", d.Search.Objective, d.direction())
	for _, sp := range d.Search.Space.Params {
		switch {
		case sp.Dist == search.Choice:
			fmt.Fprintf(&b, "%s: its choices. ", sp.Key)
		case sp.Log:
			fmt.Fprintf(&b, "%s: a log axis (%s). ", sp.Key, sp.String())
		default:
			fmt.Fprintf(&b, "%s: %s. ", sp.Key, sp.String())
		}
		if sp.When != nil {
			var vals []string
			for _, v := range sp.When.Values {
				vals = append(vals, fmt.Sprint(v))
			}
			fmt.Fprintf(&b, "Only the points whose %s is %s have %s. ", sp.When.Key, strings.Join(vals, " or "), sp.Key)
		}
	}
	if logY {
		fmt.Fprintf(&b, "%s on a log axis (its values span three decades or more). ", d.Search.Objective)
	}
	missing := len(d.Points) - countFinite(values)
	if missing > 0 {
		fmt.Fprintf(&b, "%d points without a finite value on every trial are not drawn. ", missing)
	}
	b.WriteString(d.pointsText() + ".")
	return b.String(), nil
}

// settingX is the value of a searched setting in settings (a trial's) on
// its axis (a choice's index), and whether the trial has it.
func settingX(sp search.Param, settings map[string]string) (float64, bool) {
	text, ok := settings[sp.Key]
	if !ok {
		return 0, false
	}
	if sp.Dist == search.Choice {
		for i, c := range sp.Choices {
			if b, err := json.Marshal(c); err == nil && string(b) == text {
				return float64(i), true
			}
		}
		return 0, false
	}
	v, err := strconv.ParseFloat(text, 64)
	return v, err == nil
}

// drawParallel draws the parallel coordinates of every trial: its
// searched settings and its objective, coloured by the objective.
func (d *SearchData) drawParallel(path string) (string, error) {
	var axes []figures.ParallelAxis
	for _, sp := range d.Search.Space.Params {
		a := figures.ParallelAxis{Name: sp.Key, Lo: sp.Lo, Hi: sp.Hi, Log: sp.Log}
		if sp.Dist == search.Choice {
			a = figures.ParallelAxis{Name: sp.Key}
			for _, c := range sp.Choices {
				a.Categories = append(a.Categories, fmt.Sprint(c))
			}
		}
		axes = append(axes, a)
	}
	var objs []float64
	for _, t := range d.Trials {
		objs = append(objs, t.Objective)
	}
	lo, hi := finiteRange(objs)
	obj := figures.ParallelAxis{Name: d.Search.Objective, Lo: lo, Hi: hi, Log: logWorthyValues(objs)}
	if !(lo < hi) {
		obj.Lo, obj.Hi, obj.Log = lo-1, hi+1, false
		if math.IsInf(lo, 0) {
			obj.Lo, obj.Hi = 0, 1
		}
	}
	axes = append(axes, obj)
	spec := figures.ParallelSpec{Title: d.title("every trial's settings and " + d.Search.Objective), Axes: axes, ColorLabel: d.Search.Objective}
	for _, t := range d.Trials {
		spec.Lines = append(spec.Lines, d.parallelLine(t, axes))
	}
	if err := figures.Parallel(path, spec); err != nil {
		return "", err
	}
	return fmt.Sprintf("Parallel coordinates: one line per trial through its value of every searched setting (a log axis for a log range; a setting that does not exist for the trial's choices leaves a gap) and its %s on the last axis; the colour is its %s (%s), from dark for the best to light for the worst; grey dashed: a trial without a finite value (failed, diverged or stopped early). Hover over a line for the trial and its values. %s.",
		d.Search.Objective, d.Search.Objective, d.direction(), d.pointsText()), nil
}

// parallelLine is a trial's line of the parallel coordinates.
func (d *SearchData) parallelLine(t SearchTrial, axes []figures.ParallelAxis) figures.ParallelLine {
	l := figures.ParallelLine{Name: t.Name, Shade: math.NaN()}
	tip := []string{t.Name + " (" + Outcome(t.Status) + ")"}
	for _, sp := range d.Search.Space.Params {
		x, ok := settingX(sp, t.Searched)
		if !ok {
			x = math.NaN()
		} else {
			tip = append(tip, sp.Key+"="+plainJSON(t.Searched[sp.Key]))
		}
		l.Values = append(l.Values, x)
	}
	l.Values = append(l.Values, t.Objective)
	tip = append(tip, d.Search.Objective+"="+runs.ValueText(t.Objective, 6))
	l.Tip = strings.Join(tip, " ")
	if obj := axes[len(axes)-1]; !math.IsNaN(t.Objective) && !math.IsInf(t.Objective, 0) {
		f := parallelFraction(obj, t.Objective)
		if !d.Search.Maximize() {
			l.Shade = f // the lowest the best (dark)
		} else {
			l.Shade = 1 - f
		}
	}
	return l
}

// parallelFraction is where v lies on a numeric axis, from 0 to 1.
func parallelFraction(a figures.ParallelAxis, v float64) float64 {
	if a.Log && v > 0 {
		// optim.Log: the same bits on every build (math.Log's do not, and the
		// fraction is written into the SVG); the ratio needs no base.
		return min(max((optim.Log(v)-optim.Log(a.Lo))/(optim.Log(a.Hi)-optim.Log(a.Lo)), 0), 1)
	}
	return min(max((v-a.Lo)/(a.Hi-a.Lo), 0), 1)
}

// plainJSON is a JSON text as plain text: strings unquoted.
func plainJSON(text string) string {
	var s string
	if json.Unmarshal([]byte(text), &s) == nil {
		return s
	}
	return text
}

// finiteRange is the range of the finite values (+Inf, -Inf when none).
func finiteRange(vs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return lo, hi
}

func countFinite(vs []float64) int {
	n := 0
	for _, v := range vs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			n++
		}
	}
	return n
}

// logWorthyValues reports whether values go on a log axis: the finite
// ones are all positive and span three decades or more.
func logWorthyValues(vs []float64) bool {
	lo, hi := finiteRange(vs)
	return lo > 0 && hi/lo >= 1e3
}
