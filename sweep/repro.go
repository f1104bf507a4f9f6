package sweep

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"

	"goldstone/stages"
	"goldstone/stages/settings"
	"goldstone/stages/trialio"
)

// Drift is one summary metric that did not reproduce.
type Drift struct {
	Trial, Name, Metric string
	Recorded, Now       float64
	Tolerance           float64
}

// Compare checks every summary metric of every trial of a recorded run
// against a new one, within the experiment's tolerances; timings (metrics
// ending in _seconds) are skipped. A metric present in one run only drifts.
func Compare(recorded, now map[string]map[string]float64, names map[string]string, tol map[string]float64) []Drift {
	var out []Drift
	trials := slices.Sorted(maps.Keys(recorded))
	for t := range now {
		if _, ok := recorded[t]; !ok {
			trials = append(trials, t)
		}
	}
	slices.Sort(trials)
	for _, t := range trials {
		a, b := recorded[t], now[t]
		ks := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
		slices.Sort(ks)
		for _, k := range slices.Compact(ks) {
			if trialio.IsTiming(k) {
				continue
			}
			va, oka := a[k]
			vb, okb := b[k]
			if !oka {
				va = math.NaN()
			}
			if !okb {
				vb = math.NaN()
			}
			if oka != okb || !trialio.SameValue(va, vb, tol[k]) {
				out = append(out, Drift{Trial: t, Name: names[t], Metric: k, Recorded: va, Now: vb, Tolerance: tol[k]})
			}
		}
	}
	return out
}

// MatchByName re-keys a recorded run's and a repro run's summaries (by
// trial id) by trial name (variant and grid values), so that Compare pairs
// them: ids hash every setting, so they change when a newer version adds
// one. recParams are the recorded run's trial parameters (runs.Store
// TrialParams); e is the experiment the repro ran.
func MatchByName(e *stages.Experiment, recorded, now map[string]map[string]float64, recParams map[string]map[string]string) (rec, cur map[string]map[string]float64) {
	recName, nowName := TrialNamers(e, recParams)
	return ByName(recorded, recName), ByName(now, nowName)
}

// ByName re-keys per-trial records (by trial id) by name(id).
func ByName[V any](byID map[string]V, name func(id string) string) map[string]V {
	out := make(map[string]V, len(byID))
	for id, v := range byID {
		out[name(id)] = v
	}
	return out
}

// TrialNamers returns the names MatchByName gives the trials of a recorded
// run (recParams: runs.Store TrialParams) and of a repro of it (e), to key
// any per-trial record (summaries, series) alike.
func TrialNamers(e *stages.Experiment, recParams map[string]map[string]string) (rec, now func(id string) string) {
	nowNames := map[string]string{}
	for _, t := range e.Trials() {
		nowNames[t.ID] = t.Name
	}
	recName := func(id string) string {
		p := recParams[id]
		var n string
		if json.Unmarshal([]byte(p["name"]), &n) == nil && n != "" {
			return n
		}
		// Runs recorded before names were stored: rebuild the name from the
		// variant and the grid values, as Experiment.Trials does.
		var parts []string
		if json.Unmarshal([]byte(p["variant"]), &n) == nil && n != "" {
			parts = append(parts, n)
		}
		for _, ax := range e.Grid {
			var v any
			if json.Unmarshal([]byte(p[ax.Key]), &v) != nil {
				return id
			}
			parts = append(parts, ax.Key+"="+settings.FormatValue(v))
		}
		if len(parts) == 0 {
			return id
		}
		return strings.Join(parts, " ")
	}
	nowName := func(id string) string {
		if n := nowNames[id]; n != "" {
			return n
		}
		return id
	}
	return recName, nowName
}
