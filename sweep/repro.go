package sweep

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/runs"
	"goldstone/trialio"
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
	for _, t := range unionKeys(recorded, now) {
		a, b := recorded[t], now[t]
		for _, k := range unionKeys(a, b) {
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

// MatchByName re-keys a recorded run's and a repro run's summaries (or
// statuses, by trial id) by trial name (variant and grid values), so that
// Compare (CompareStatus) pairs them: ids hash every setting, so they change when a newer version adds
// one. recParams are the recorded run's trial parameters (runs.Store
// TrialParams); e is the experiment the repro ran.
func MatchByName[V any](e *experiment.Experiment, recorded, now map[string]V, recParams map[string]map[string]string) (rec, cur map[string]V) {
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
func TrialNamers(e *experiment.Experiment, recParams map[string]map[string]string) (rec, now func(id string) string) {
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

// StatusDrift is a trial whose status did not reproduce (a trial that
// diverged in one run and not in the other; where it diverged is the
// summary metric diverged_step, which Compare checks).
type StatusDrift struct {
	Trial         string
	Recorded, Now string
}

// CompareStatus checks the status of every trial of a recorded run that
// has a result (done, cached or diverged) against a new one's, both keyed
// alike (MatchByName): done and cached are the same outcome.
func CompareStatus(recorded, now map[string]string) []StatusDrift {
	outcome := func(s string) string {
		if s == runs.StatusCached {
			return runs.StatusDone
		}
		return s
	}
	var out []StatusDrift
	for _, t := range slices.Sorted(maps.Keys(recorded)) {
		r := recorded[t]
		if !runs.HasResult(r) {
			continue
		}
		if n, ok := now[t]; !ok || outcome(n) != outcome(r) {
			out = append(out, StatusDrift{Trial: t, Recorded: r, Now: n})
		}
	}
	return out
}

// unionKeys returns the keys of a and b, sorted, each once.
func unionKeys[A, B any](a map[string]A, b map[string]B) []string {
	ks := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(ks)
	return slices.Compact(ks)
}
