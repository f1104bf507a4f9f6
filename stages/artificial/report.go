package artificial

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"goldstone/pipeline"
	"goldstone/report"
	"goldstone/report/figures"
)

// Report draws the artificial experiment's figures from its trials'
// results: the paper's Figure 2 (figure2.png: L - L* against the step), L -
// L* and psi against step (log scales) for every variant with the gauge gap
// (curves.png), the trajectories of the embeddings over t at several steps,
// GD against Goldstone-GD (trajectories.png); it returns the Markdown of
// summary.md after the summary table: which file answers which paper
// figure, and the chain-length scaling when the sweep varies T.
func Report(ctx context.Context, experiment string, all []report.TrialResult, io *pipeline.IO, dir string) (string, error) {
	var excess, psi, gap []figures.Series
	for _, l := range all {
		excess = append(excess, l.Curve("excess", true))
		psi = append(psi, l.Curve("psi", true))
		gap = append(gap, l.Curve("gauge_gap", true))
	}
	err := figures.Curves(filepath.Join(dir, "curves.png"), figures.CurveSpec{
		Title: experiment + ": every trial (colour = variant)",
		Panels: []figures.Panel{
			{Title: "L - L*", XLabel: "step + 1", YLabel: "L - L*", LogX: true, LogY: true, Series: excess},
			{Title: "psi", XLabel: "step + 1", YLabel: "psi", LogX: true, LogY: true, Series: psi},
			{Title: "gauge gap psi - min_R psi", XLabel: "step + 1", YLabel: "gap", LogX: true, LogY: true, Series: gap},
		},
	})
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err // a figure of many trials takes a while: Ctrl-C stops between them
	}
	var excessLin []figures.Series
	for _, l := range all {
		excessLin = append(excessLin, l.Curve("excess", false))
	}
	err = figures.Curves(filepath.Join(dir, "figure2.png"), figures.CurveSpec{
		Title: experiment + ": paper Fig. 2 counterpart, L - L* against training step (colour = variant)",
		Panels: []figures.Panel{
			{Title: "L - L*, linear steps", XLabel: "training step", YLabel: "L - L*", LogY: true, Series: excessLin},
			{Title: "L - L*, log steps", XLabel: "step + 1", YLabel: "L - L*", LogX: true, LogY: true, Series: excess},
		},
	})
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	// Figure 2: the lowest seed's snapshots for the first two variants.
	seeds := map[string]report.TrialResult{}
	var order []string
	for _, l := range all {
		v := l.Variant
		if old, ok := seeds[v]; !ok || l.Trial.Seed < old.Trial.Seed {
			if !ok {
				order = append(order, v)
			}
			seeds[v] = l
		}
	}
	var spec figures.TrajSpec
	spec.Title = "embedding trajectories over t (one colour per embedding vector)"
	for _, v := range order {
		if len(spec.Rows) == 2 {
			break
		}
		l := seeds[v]
		var snaps []Snapshot
		b, err := os.ReadFile(filepath.Join(l.Dir, "snapshots.json"))
		if err != nil {
			return "", err
		}
		if err := json.Unmarshal(b, &snaps); err != nil {
			return "", fmt.Errorf("snapshots of %s: %w", l.Trial.ID, err)
		}
		if len(snaps) == 0 {
			continue
		}
		var row []figures.Snapshot
		var cols []string
		for _, s := range snaps {
			row = append(row, figures.Snapshot{T: s.T, N: s.N, D: s.D, Z: s.Z})
			cols = append(cols, fmt.Sprintf("step %d", s.Step))
		}
		if len(spec.Rows) > 0 && len(cols) != len(spec.Cols) {
			continue
		}
		spec.Rows = append(spec.Rows, fmt.Sprintf("%s (seed %d)", v, l.Trial.Seed))
		spec.Cols = cols
		spec.Data = append(spec.Data, row)
	}
	if len(spec.Rows) > 0 {
		if err := figures.Trajectories(filepath.Join(dir, "trajectories.png"), spec); err != nil {
			return "", err
		}
	}
	scaling, err := scalingReport(dir, scalingPoints(all)) // "" unless time_steps is swept
	if err != nil {
		return "", err
	}
	caps := captions(spec.Rows, scaling != "")
	if err := figures.AddCaptions(dir, caps); err != nil {
		return "", err
	}
	return PaperFigures + scaling, nil
}

// captions are the captions of the report's figures: trajectories.png
// when rows were drawn, scaling.png when T is swept.
func captions(rows []string, scaling bool) map[string]string {
	caps := map[string]string{
		"curves.png": "L - L* (the loss above its optimum), psi (the coupling across time steps) and the gauge gap psi - min_R psi " +
			"(how much a gauge fix would still lower psi) against the training step + 1, log-log axes. " + figures.LinesNote + " " + figures.BandsNote,
		"figure2.png": "The paper's Fig. 2 counterpart: L - L* on a log axis against the training step on a linear (left) and a log (right) axis; " +
			"the steps to L - L* < 1 and < 0.01 are steps_to_excess_1 and steps_to_excess_0.01 in the tables. " + figures.LinesNote + " " + figures.BandsNote,
	}
	if len(rows) > 0 {
		caps["trajectories.png"] = "The embedding vectors along the chain t = 1..T (one colour per vector) at the training steps of the columns, " +
			"for the lowest seed of each of the first two variants (rows): " + strings.Join(rows, "; ") + "."
	}
	if scaling {
		caps["scaling.png"] = "The median over seeds of the steps to each threshold against the chain length T (log-log), one panel per metric and lambda, " +
			"one line per variant; a median that is never (at least half the seeds never reach the threshold) is not drawn. " +
			"The dashed grey line is T^2 through the first point of the first variant: the slope plain GD would have if the slowest Goldstone mode set its pace."
	}
	return caps
}

// PaperFigures says which report file is the counterpart of which figure
// of the paper (Bamler and Mandt 2018, Sec. 5.1).
const PaperFigures = `
## Paper figures

- Paper Fig. 2 (Sec. 5.1, artificial data: the loss above its optimum,
  L - L*, against training iterations, GD against Goldstone-GD): figure2.png,
  L - L* on a log axis against the step on a linear axis (left) and on a log
  axis (right), one line per trial, colour = variant. The steps to
  L - L* < 1, < 0.1 and < 0.01 are steps_to_excess_1, steps_to_excess_0.1
  and steps_to_excess_0.01 in the table.
- The paper's picture of the embeddings along t during training:
  trajectories.png (lowest seed, first two variants).
- curves.png: L - L*, psi and the gauge gap (beyond the paper) on log-log axes.
`
