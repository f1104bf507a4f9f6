package claims

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// The data column of a row names the data the run was trained on, read
// from the run itself (issue 27: a run on another data set through a copy
// of the config must not say "ml-latest-small"): the data set setting of
// its trials, the SHA-256 digests of the input files the run recorded in
// its build information, and, for ratings, the regime its trials recorded
// (data_* summaries: ratings, bins, ratings per bin, bins per user, ratings
// per active item and bin, the busiest tenth's share). The experiment's own
// description of the setup follows.
func (r *Run) dataText(ctx context.Context) string {
	all := append(slices.Clip(r.trials), r.failed...)
	if len(all) == 0 {
		return ""
	}
	first := all[0]
	var parts []string
	switch {
	case first.params["dataset"] != nil:
		parts = append(parts, fmt.Sprintf("data set %v", first.params["dataset"]))
	case first.params["corpus"] != nil:
		parts = append(parts, fmt.Sprintf("corpus %v", first.params["corpus"]))
	case first.params["time_steps"] != nil:
		parts = append(parts, "artificial data generated from each trial's seed")
	}
	if d := r.inputDigests(ctx); d != "" {
		parts = append(parts, d)
	}
	if g := regimeText(first.sum); g != "" {
		parts = append(parts, g)
	}
	return strings.Join(parts, "; ")
}

// inputDigests lists the input files the run recorded with their digests
// ("ratings.csv sha256 1a2b3c4d5e6f"), "" when it recorded none.
func (r *Run) inputDigests(ctx context.Context) string {
	if r.store == nil {
		return ""
	}
	env, err := r.store.Env(ctx, r.info.ID)
	if err != nil {
		return ""
	}
	var out []string
	for k, v := range env {
		if path, ok := strings.CutPrefix(k, "input "); ok {
			out = append(out, fmt.Sprintf("%s sha256 %s", filepath.Base(path), v[:min(len(v), 12)]))
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// regimeText is the regime of a ratings trial's data from its data_*
// summaries, "" when it has none.
func regimeText(sum map[string]float64) string {
	n, ok := sum["data_ratings"]
	if !ok {
		return ""
	}
	return fmt.Sprintf("regime: %.0f ratings in %.0f bins, per bin median %.0f, bins per user median %.0f, per active item and bin median %.0f (quartiles %.0f-%.0f), busiest tenth of the bins %.0f%% of the ratings",
		n, sum["data_bins"], sum["data_per_bin_median"], sum["data_bins_per_user_median"],
		sum["data_per_item_bin_median"], sum["data_per_item_bin_q1"], sum["data_per_item_bin_q3"], 100*sum["data_busiest_share"])
}
