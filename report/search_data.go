package report

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"goldstone/experiment"
	"goldstone/runs"
	"goldstone/search"
)

// SearchTrial is one trial of a search run as the search's views show it.
type SearchTrial struct {
	ID, Name string
	Point    int    // the suggestion's index (its variant s<Point>)
	Status   string // its status as the run recorded it (runs.Status*)
	// Searched are the searched settings it has (a conditional one only
	// where its condition holds), as JSON texts.
	Searched map[string]string
	// Objective is its own value of the search's objective: NaN when it
	// has none (failed) or its training diverged.
	Objective float64
	// Steps is how many training steps it recorded: the last step of its
	// loss series plus one (0: none recorded).
	Steps int
	// CurveX and CurveY are its learning curve (SearchData.Curve).
	CurveX, CurveY []float64
	// Rung: a pruned search's trial short of the last rung (variant
	// s<index>@<steps>); Seed its seed (JSON text): a promoted trial goes
	// on from the checkpoint of the same point and seed at the rung below.
	Rung bool
	Seed string
	// RungSteps is its steps setting: a pruned search's rung (0 when the
	// run did not record one).
	RungSteps int
}

// SearchPoint is one suggestion of the search and its trials.
type SearchPoint struct {
	Index  int
	Trials []int // indices into SearchData.Trials
	// Value is the mean objective over its trials at the full budget (what
	// the search ranks it by), NaN unless it has such trials and every one
	// finished (Outcome) with a finite value: a point pruned at a rung has
	// none.
	Value float64
	// Steps is the training its trials did: per seed the most steps of
	// its rungs (a promoted trial goes on from the rung below's
	// checkpoint: no step trained twice), summed over the seeds.
	Steps int
}

// SearchData is a search run as its views show it: its trials in
// suggestion order (then trial order), grouped by point.
type SearchData struct {
	Experiment string
	Run        int64
	Search     *experiment.Search
	Trials     []SearchTrial
	Points     []SearchPoint
	// Curve is the series each trial's learning curve shows: the
	// objective's when the trials record it as a series, that of a final_X
	// objective's X, else the training loss.
	Curve string
}

// LoadSearch reads search run runID of e (whose Search is the search the
// run recorded) from the store: every trial with its status, searched
// settings, objective, training steps and learning curve.
func LoadSearch(ctx context.Context, st *runs.Store, e *experiment.Experiment, runID int64) (*SearchData, error) {
	s := e.Search
	if s == nil {
		return nil, fmt.Errorf("experiment %s has no search table", e.Name)
	}
	rows, err := st.TrialTable(ctx, runID)
	if err != nil {
		return nil, err
	}
	names, err := st.SeriesNames(ctx, runID)
	if err != nil {
		return nil, err
	}
	d := &SearchData{Experiment: e.Name, Run: runID, Search: s, Curve: curveSeries(s.Objective, names)}
	for _, r := range rows {
		idx, rung, ok := experiment.ParsePointVariant(r.Params["variant"])
		if !ok {
			return nil, fmt.Errorf("run %d, trial %s: variant %s is not a search point's (s<index>, s<index>@<steps>)", runID, r.ID, r.Params["variant"])
		}
		t := SearchTrial{ID: r.ID, Name: r.Name, Point: idx, Rung: rung, Seed: r.Params["seed"], Status: r.Status, Searched: map[string]string{}, Objective: math.NaN()}
		if n, err := strconv.Atoi(r.Params["steps"]); err == nil {
			t.RungSteps = n
		}
		for _, p := range s.Space.Params {
			if v, ok := r.Params[p.Key]; ok && (p.When == nil || holds(p.When, r.Params)) {
				t.Searched[p.Key] = v
			}
		}
		if v, ok := r.Summary[s.Objective]; ok && runs.HasResult(r.Status) && r.Status != runs.StatusDiverged {
			t.Objective = v
		}
		// The steps it trained: the last step of its loss series plus one.
		loss, err := st.Series(ctx, runID, r.ID, "loss")
		if err != nil {
			return nil, err
		}
		if len(loss) > 0 {
			t.Steps = loss[len(loss)-1].Step + 1
		}
		curve := loss
		if d.Curve != "loss" {
			if curve, err = st.Series(ctx, runID, r.ID, d.Curve); err != nil {
				return nil, err
			}
		}
		for _, p := range curve {
			t.CurveX, t.CurveY = append(t.CurveX, float64(p.Step)), append(t.CurveY, p.Value)
		}
		d.Trials = append(d.Trials, t)
	}
	slices.SortStableFunc(d.Trials, func(a, b SearchTrial) int { return cmp.Compare(a.Point, b.Point) })
	d.Points = groupPoints(d.Trials)
	return d, nil
}

// groupPoints groups trials (in point order) by point.
func groupPoints(trials []SearchTrial) []SearchPoint {
	var out []SearchPoint
	for i, t := range trials {
		if len(out) == 0 || out[len(out)-1].Index != t.Point {
			out = append(out, SearchPoint{Index: t.Point})
		}
		p := &out[len(out)-1]
		p.Trials = append(p.Trials, i)
	}
	for k := range out {
		p := &out[k]
		sum, n := 0.0, 0
		steps := map[string]int{} // per seed: the most steps of its rungs
		for _, i := range p.Trials {
			t := trials[i]
			steps[t.Seed] = max(steps[t.Seed], t.Steps)
			if t.Rung {
				continue
			}
			v := t.Objective
			if Outcome(t.Status) != "finished" {
				v = math.NaN() // failed, diverged, or stopped early (pruned): no value
			}
			sum += v
			n++
		}
		for _, seed := range slices.Sorted(maps.Keys(steps)) {
			p.Steps += steps[seed]
		}
		p.Value = math.NaN()
		if n > 0 {
			p.Value = sum / float64(n)
		}
		if math.IsInf(p.Value, 0) {
			p.Value = math.NaN()
		}
	}
	return out
}

// curveSeries is the series the learning curves show (SearchData.Curve).
func curveSeries(objective string, names []string) string {
	if slices.Contains(names, objective) {
		return objective
	}
	if rest, ok := strings.CutPrefix(objective, "final_"); ok && slices.Contains(names, rest) {
		return rest
	}
	return "loss"
}

// holds reports whether the recorded params meet a conditional setting's
// condition.
func holds(c *search.Condition, params map[string]string) bool {
	for _, v := range c.Values {
		b, err := json.Marshal(v)
		if err == nil && params[c.Key] == string(b) {
			return true
		}
	}
	return false
}

// better reports whether objective a is better than b in the search's
// direction (a NaN is never better).
func (d *SearchData) better(a, b float64) bool {
	if math.IsNaN(a) {
		return false
	}
	if math.IsNaN(b) {
		return true
	}
	if d.Search.Maximize() {
		return a > b
	}
	return a < b
}

// Best is the index into Points of the best point (the first of equals),
// or -1 when no point has a finite value.
func (d *SearchData) Best() int {
	best := -1
	for i, p := range d.Points {
		if !math.IsNaN(p.Value) && (best < 0 || d.better(p.Value, d.Points[best].Value)) {
			best = i
		}
	}
	return best
}

// Outcome names a trial's outcome for the views' colours and legends:
// "finished" for done and cached trials, else its status (diverged,
// failed, and any status a newer store records, such as pruned).
func Outcome(status string) string {
	if status == runs.StatusDone || status == runs.StatusCached {
		return "finished"
	}
	return status
}

// outcomeColors gives every outcome of the trials a palette index: the
// fixed ones first (finished blue, failed red, diverged purple), any other
// the next free colour in the order of its name, so that a new status
// (pruned) gets a colour of its own.
func outcomeColors(trials []SearchTrial) map[string]int {
	m := map[string]int{"finished": 0, runs.StatusFailed: 3, runs.StatusDiverged: 4}
	var others []string
	for _, t := range trials {
		if o := Outcome(t.Status); !slices.Contains(others, o) {
			if _, fixed := m[o]; !fixed {
				others = append(others, o)
			}
		}
	}
	slices.Sort(others)
	free := []int{1, 2, 5, 6, 8, 9, 7}
	for i, o := range others {
		m[o] = free[i%len(free)]
	}
	return m
}
