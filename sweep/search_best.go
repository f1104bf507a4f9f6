package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	"goldstone/experiment"
	"goldstone/runs"
	"goldstone/search"
)

// PointResult is one suggestion of a search and what its trials gave.
type PointResult struct {
	Index    int               // the suggestion's index (variant s<Index>)
	Settings map[string]string // each searched setting it has, as the run recorded it (JSON text)
	Values   []float64         // the objective of each trial that has a finite one
	Trials   int               // its trials (seeds and variants)
}

// Complete reports whether every trial of the point gave a finite
// objective: only such points can be chosen.
func (p PointResult) Complete() bool { return len(p.Values) == p.Trials && p.Trials > 0 }

// Stats are the mean of values, their sample standard deviation and the
// 95% Student-t interval of the mean (N < 2: sd and interval NaN).
type Stats struct {
	N            int
	Mean, SD     float64
	Low, High    float64
	HalfInterval float64
}

// MeanStats computes Stats of values.
func MeanStats(values []float64) Stats {
	s := Stats{N: len(values), SD: math.NaN(), Low: math.NaN(), High: math.NaN(), HalfInterval: math.NaN()}
	if s.N == 0 {
		s.Mean = math.NaN()
		return s
	}
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	s.Mean = sum / float64(s.N)
	if s.N < 2 {
		return s
	}
	ss := 0.0
	for _, v := range values {
		d := v - s.Mean
		ss += float64(d * d)
	}
	s.SD = math.Sqrt(ss / float64(s.N-1))
	s.HalfInterval = tQuantile975(s.N-1) * s.SD / math.Sqrt(float64(s.N))
	s.Low, s.High = s.Mean-s.HalfInterval, s.Mean+s.HalfInterval
	return s
}

// tQuantile975 is the 0.975 quantile of Student's t with df degrees of
// freedom (the normal's 1.96 past 30).
func tQuantile975(df int) float64 {
	t := [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df >= 1 && df <= len(t) {
		return t[df-1]
	}
	return 1.96
}

// SearchPoints reads the points of search run runID of e from its trials
// (grouped by their variant s<index>), in index order.
func SearchPoints(ctx context.Context, st *runs.Store, runID int64, e *experiment.Experiment) ([]PointResult, error) {
	if e.Search == nil {
		return nil, fmt.Errorf("experiment %s has no search table", e.Name)
	}
	rows, err := st.TrialTable(ctx, runID)
	if err != nil {
		return nil, err
	}
	byIndex := map[int]*PointResult{}
	for _, r := range rows {
		idx, rung, ok := experiment.ParsePointVariant(r.Params["variant"])
		if !ok {
			return nil, fmt.Errorf("run %d, trial %s: variant %s is not a search point's (s<index>): is run %d a run of search %s?", runID, r.ID, r.Params["variant"], runID, e.Name)
		}
		p := byIndex[idx]
		if p == nil {
			p = &PointResult{Index: idx, Settings: map[string]string{}}
			for _, sp := range e.Search.Space.Params {
				if v, ok := r.Params[sp.Key]; ok && (sp.When == nil || conditionHolds(sp.When, r.Params)) {
					p.Settings[sp.Key] = v
				}
			}
			byIndex[idx] = p
		}
		if rung {
			continue // a pruned search's trial short of the last rung: not the point's result
		}
		p.Trials++
		v, ok := r.Summary[e.Search.Objective]
		if runs.HasResult(r.Status) && r.Status != runs.StatusDiverged && ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			p.Values = append(p.Values, v)
		}
	}
	var out []PointResult
	for _, idx := range slices.Sorted(maps.Keys(byIndex)) {
		out = append(out, *byIndex[idx])
	}
	return out, nil
}

// conditionHolds reports whether the recorded params meet a conditional
// setting's condition.
func conditionHolds(c *search.Condition, params map[string]string) bool {
	for _, v := range c.Values {
		b, err := json.Marshal(v)
		if err == nil && params[c.Key] == string(b) {
			return true
		}
	}
	return false
}

// BestPoint is the complete point of the best mean objective (the first
// of equals), and whether there is one.
func BestPoint(points []PointResult, maximize bool) (PointResult, bool) {
	var best PointResult
	found := false
	for _, p := range points {
		if !p.Complete() {
			continue
		}
		m := MeanStats(p.Values).Mean
		if !found {
			best, found = p, true
			continue
		}
		bm := MeanStats(best.Values).Mean
		if maximize && m > bm || !maximize && m < bm {
			best = p
		}
	}
	return best, found
}
