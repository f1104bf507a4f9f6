package claims

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"goldstone/runs"
)

// notMeasured is what a row says when its experiment has no ended run.
const notMeasured = "not measured yet"

// Run is the latest ended run of an experiment with its trials that have
// results, done and diverged (a diverged trial's summary says never for
// every threshold and NaN for its final and held-out values), and its
// failed ones, which a censored comparison counts as never reaching the
// target too.
type Run struct {
	info   runs.RunInfo
	trials []trial // done and diverged
	failed []trial // sum is empty; err says why
	total  int
	// The store the run was read from, for rows that read series (nil: a
	// run built by hand in a test).
	store *runs.Store
	db    string // the database's file name when claims reads several
}

type trial struct {
	variant string
	params  map[string]any // decoded JSON values
	sum     map[string]float64
	err     string // failed trials: the error; diverged ones: where they diverged
	id      string // the trial id (series)
	// diverged: the trial's training diverged (status diverged): a result,
	// with a summary.
	diverged bool
}

// divergence reports whether t diverged: its status says so, or (runs
// recorded before a divergence was a result) it failed with the driver's
// divergence error.
func (t trial) divergence() bool {
	return t.diverged || strings.Contains(t.err, "optim: loss diverged")
}

// latestEnded returns the latest run of kind "run" of experiment with the
// settings of configHash that has ended (finished or failed) with its done
// trials, or nil when there is none; other says how many ended runs of the
// experiment had other settings (a --set override, or an older definition).
func latestEnded(ctx context.Context, st *runs.Store, experiment, configHash string) (_ *Run, other int, _ error) {
	list, err := st.Runs(ctx, experiment)
	if err != nil {
		return nil, 0, err
	}
	for i := len(list) - 1; i >= 0; i-- {
		r := list[i]
		if r.Kind != runs.KindRun || !runs.Ended(r.Status) {
			continue
		}
		if r.ConfigHash != configHash {
			other++
			continue
		}
		cr, err := readRun(ctx, st, r)
		if err != nil {
			return nil, 0, err
		}
		if len(cr.trials) > 0 {
			return cr, other, nil
		}
	}
	return nil, other, nil
}

// readRun reads the done, diverged and failed trials of run r with their
// settings and summaries.
func readRun(ctx context.Context, st *runs.Store, r runs.RunInfo) (*Run, error) {
	trials, err := st.Trials(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	sums, err := st.Summaries(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	if r.GitCommit == "" {
		// A run recorded before runs took the binary's stamp: its
		// build info (run_env) still names the revision.
		if env, err := st.Env(ctx, r.ID); err == nil && env["build vcs.revision"] != "" {
			r.GitCommit, r.GitDirty = env["build vcs.revision"], env["build vcs.modified"] == "true"
		}
	}
	cr := &Run{info: r, total: len(trials), store: st}
	for _, t := range trials {
		done := runs.HasResult(t.Status)
		if !done && t.Status != runs.StatusFailed {
			continue
		}
		ct := trial{params: map[string]any{}, sum: sums[t.ID], err: t.Error, id: t.ID, diverged: t.Status == runs.StatusDiverged}
		for k, v := range t.Params {
			var x any
			if json.Unmarshal([]byte(v), &x) != nil {
				x = v
			}
			ct.params[k] = x
		}
		ct.variant, _ = ct.params["variant"].(string)
		if ct.variant == "" {
			ct.variant, _ = ct.params["gauge"].(string)
		}
		if !done {
			cr.failed = append(cr.failed, ct)
			continue
		}
		cr.trials = append(cr.trials, ct)
	}
	return cr, nil
}

// Stores are the results databases the table reads, in order: each
// experiment's run comes from the first that holds one.
type Stores []*runs.Store

// latestEnded is latestEnded over the stores: the first store's run, and
// the ended runs with other settings summed over all of them. With more
// than one store the run names its database.
func (ss Stores) latestEnded(ctx context.Context, experiment, configHash string) (*Run, int, error) {
	others := 0
	for _, st := range ss {
		r, other, err := latestEnded(ctx, st, experiment, configHash)
		if err != nil {
			return nil, 0, err
		}
		others += other
		if r != nil {
			if len(ss) > 1 {
				r.db = filepath.Base(st.Path())
			}
			return r, others, nil
		}
	}
	return nil, others, nil
}

// values returns each variant's values of metric (NaN when missing), in
// order of first appearance.
func (r *Run) values(metric string) (variants []string, vals map[string][]float64) {
	vals = map[string][]float64{}
	for _, t := range r.trials {
		if _, ok := vals[t.variant]; !ok {
			variants = append(variants, t.variant)
		}
		v, ok := t.sum[metric]
		if !ok {
			v = math.NaN()
		}
		vals[t.variant] = append(vals[t.variant], v)
	}
	return variants, vals
}

// source names the run a row is computed from.
func (r *Run) source() string {
	c := r.info.GitCommit[:min(len(r.info.GitCommit), 10)]
	if c == "" {
		c = "unknown"
	}
	if r.info.GitDirty {
		c += "+dirty"
	}
	db := ""
	if r.db != "" {
		db = " of " + r.db
	}
	done := fmt.Sprintf("%d/%d trials done", len(r.trials), r.total)
	if n := r.divergedOf("", nil); n > 0 {
		done = fmt.Sprintf("%d/%d trials done, %d diverged", len(r.trials)-n, r.total, n)
	}
	return fmt.Sprintf("run %d%s (%s, commit %s, %s)", r.info.ID, db, r.info.Started.UTC().Format("2006-01-02"), c, done)
}

// paramsOf returns the settings of variant's first trial (nil: none).
func (r *Run) paramsOf(variant string) map[string]any {
	for _, t := range append(slices.Clip(r.trials), r.failed...) {
		if t.variant == variant {
			return t.params
		}
	}
	return nil
}

// guarded reports whether a trial's settings have a guard that rejects a
// gauge round which would raise psi (Goldstone-GD with guard on): only its
// rounds can be "accepted" or not; every other symmetry step applies every
// round, whatever it does to psi.
func guarded(p map[string]any) bool {
	g, _ := p["guard"].(bool)
	return p["gauge"] == "goldstone" && g
}
