package report

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"goldstone/experiment"
	"goldstone/runs"
)

// SearchRung is one rung of a pruned search as its rungs table shows it:
// the points that reached it (had trials at its steps), how many of them
// went on to the next rung, the objective of those points at the rung (a
// point's value: the mean over its trials there, when each has one), and
// the points the search stopped there.
type SearchRung struct {
	Index, Steps int
	Points       int // points with trials at the rung
	Trials       int
	// Promoted are the points that went on to the next rung; -1 at the
	// last rung.
	Promoted int
	// Best and Median of the points' values at the rung (NaN when none
	// has one); Valued counts the points with one.
	Best, Median float64
	Valued       int
	Pruned       []string // the points stopped at this rung (s<index>), in suggestion order
}

// SearchRungs is the rungs table of a pruned search run (nil for a search
// without a pruner): per rung of the pruner (experiment.Pruning.Rungs).
func (d *SearchData) SearchRungs() []SearchRung {
	p := d.Search.Pruning
	if p == nil {
		return nil
	}
	steps := p.Rungs()
	out := make([]SearchRung, len(steps))
	for k, s := range steps {
		out[k] = SearchRung{Index: k, Steps: s, Best: math.NaN(), Median: math.NaN()}
		if k == len(steps)-1 {
			out[k].Promoted = -1
		}
	}
	for _, pt := range d.Points {
		reached := make([]bool, len(steps))
		for k := range steps {
			var ts []SearchTrial
			for _, i := range pt.Trials {
				if t := d.Trials[i]; t.RungSteps == steps[k] {
					ts = append(ts, t)
				}
			}
			if len(ts) == 0 {
				continue
			}
			reached[k] = true
			r := &out[k]
			r.Points++
			r.Trials += len(ts)
			pruned, sum := false, 0.0
			for _, t := range ts {
				pruned = pruned || t.Status == runs.StatusPruned
				sum += t.Objective // NaN: no value (failed, diverged)
			}
			if pruned {
				r.Pruned = append(r.Pruned, experiment.PointVariant(pt.Index, ""))
			}
			if v := sum / float64(len(ts)); !math.IsNaN(v) && !math.IsInf(v, 0) {
				r.Valued++
				if d.better(v, r.Best) {
					r.Best = v
				}
			}
		}
		for k := 0; k+1 < len(steps); k++ {
			if reached[k] && reached[k+1] {
				out[k].Promoted++
			}
		}
	}
	for k := range out {
		out[k].Median = d.rungMedian(steps[k])
	}
	return out
}

// rungMedian is the median of the points' values at the rung of the given
// steps (NaN when none has one).
func (d *SearchData) rungMedian(steps int) float64 {
	var vs []float64
	for _, pt := range d.Points {
		sum, n := 0.0, 0
		for _, i := range pt.Trials {
			if t := d.Trials[i]; t.RungSteps == steps {
				sum += t.Objective
				n++
			}
		}
		if v := sum / float64(n); n > 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return math.NaN()
	}
	slices.Sort(vs)
	m := len(vs) / 2
	if len(vs)%2 == 1 {
		return vs[m]
	}
	return (vs[m-1] + vs[m]) / 2
}

// LoadSearchRungs is the rungs table of search run runID of e (nil for a
// search without a pruner, or no search).
func LoadSearchRungs(ctx context.Context, st *runs.Store, e *experiment.Experiment, runID int64) ([]SearchRung, error) {
	if e.Search == nil || e.Search.Pruning == nil {
		return nil, nil
	}
	d, err := LoadSearch(ctx, st, e, runID)
	if err != nil {
		return nil, err
	}
	return d.SearchRungs(), nil
}

// SearchRungsIntro says what the rungs table shows (objective: the
// search's, with its direction).
func SearchRungsIntro(objective string, maximize bool) string {
	dir := "lower is better"
	if maximize {
		dir = "higher is better"
	}
	return fmt.Sprintf("Per rung of the pruner (its steps): the points that reached it, how many went on to the next rung from their checkpoints, the best and the median of their %s there (a point's value: the mean over its trials at the rung; %s), and the points stopped there (status pruned).", objective, dir)
}

// SearchRungsMarkdown is the rungs table in Markdown ("" when there are no
// rungs).
func SearchRungsMarkdown(objective string, maximize bool, rungs []SearchRung) string {
	if len(rungs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(SearchRungsIntro(MarkdownText(objective), maximize) + "\n\n")
	fmt.Fprintf(&b, "| rung | steps | points | promoted | best %s | median %s | pruned here |\n|---|---|---|---|---|---|---|\n", MarkdownText(objective), MarkdownText(objective))
	for _, r := range rungs {
		pruned := strings.Join(r.Pruned, ", ")
		if pruned == "" {
			pruned = "none"
		}
		fmt.Fprintf(&b, "| %d | %d | %d | %s | %s | %s | %s |\n", r.Index, r.Steps, r.Points, PromotedText(r), RungValue(r.Best), RungValue(r.Median), pruned)
	}
	return b.String()
}

// PromotedText is a rung's promotions: "3 of 9", or "(last rung)".
func PromotedText(r SearchRung) string {
	if r.Promoted < 0 {
		return "(last rung)"
	}
	return fmt.Sprintf("%d of %d", r.Promoted, r.Points)
}

// RungValue formats a rung's objective ("-" when none).
func RungValue(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}
