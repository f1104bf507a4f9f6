package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"goldstone/pipeline"
	"goldstone/stages/figures"
)

// ReportArtificial draws the artificial experiment's figures from its
// trials' results: L - L* and psi against step (log scales) for every
// variant, the gauge gap, and the paper's Figure 2 idea (trajectories of the
// embeddings over t at several steps, GD against Goldstone-GD), and writes a
// Markdown table of the summary metrics.
func ReportArtificial(ctx context.Context, experiment string, trials []Trial, io *pipeline.IO, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	all, err := loadResults(trials, io)
	if err != nil {
		return err
	}
	var excess, psi, gap []figures.Series
	for _, l := range all {
		excess = append(excess, l.curve("excess", true))
		psi = append(psi, l.curve("psi", true))
		gap = append(gap, l.curve("gauge_gap", true))
	}
	err = figures.Curves(filepath.Join(dir, "curves.png"), figures.CurveSpec{
		Title: experiment + ": every trial (colour = variant)",
		Panels: []figures.Panel{
			{Title: "L - L*", XLabel: "step + 1", YLabel: "L - L*", LogX: true, LogY: true, Series: excess},
			{Title: "psi", XLabel: "step + 1", YLabel: "psi", LogX: true, LogY: true, Series: psi},
			{Title: "gauge gap psi - min_R psi", XLabel: "step + 1", YLabel: "gap", LogX: true, LogY: true, Series: gap},
		},
	})
	if err != nil {
		return err
	}
	// Figure 2: the lowest seed's snapshots for the first two variants.
	seeds := map[string]trialResult{}
	var order []string
	for _, l := range all {
		v := l.tr.variant()
		if old, ok := seeds[v]; !ok || l.tr.Settings.Int("seed") < old.tr.Settings.Int("seed") {
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
		b, err := os.ReadFile(filepath.Join(l.dir, "snapshots.json"))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &snaps); err != nil {
			return fmt.Errorf("snapshots of %s: %w", l.tr.ID, err)
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
		spec.Rows = append(spec.Rows, fmt.Sprintf("%s (seed %d)", v, l.tr.Settings.Int("seed")))
		spec.Cols = cols
		spec.Data = append(spec.Data, row)
	}
	if len(spec.Rows) > 0 {
		if err := figures.Trajectories(filepath.Join(dir, "trajectories.png"), spec); err != nil {
			return err
		}
	}
	return writeFileAtomic(filepath.Join(dir, "summary.md"), []byte(markdownTable(experiment, all)))
}

// trialResult is one trial's result directory, loaded for a report.
type trialResult struct {
	tr  Trial
	dir string
	ser *Series
	sum Summary
}

// loadResults reads the series and summary of every trial the report node
// has as an input (named by trial id), in trial order.
func loadResults(trials []Trial, io *pipeline.IO) ([]trialResult, error) {
	var out []trialResult
	for _, tr := range trials {
		if !io.HasInput(tr.ID) {
			continue
		}
		d := io.Input(tr.ID)
		ser, err := ReadSeries(filepath.Join(d, "series.arrow"))
		if err != nil {
			return nil, err
		}
		sum, err := ReadSummary(filepath.Join(d, "summary.json"))
		if err != nil {
			return nil, err
		}
		out = append(out, trialResult{tr: tr, dir: d, ser: ser, sum: sum})
	}
	return out, nil
}

// variant names a trial's variant for legends: the variant, else its gauge step.
func (t Trial) variant() string {
	if t.Variant != "" {
		return t.Variant
	}
	return t.Settings.String("gauge")
}

// curve is a metric of a trial as a figure series, steps shifted by one
// for log axes when shifted is set; one legend entry per variant.
func (r trialResult) curve(metric string, shifted bool) figures.Series {
	x, y := r.ser.Of(metric)
	if shifted {
		x = shift(x)
	}
	v := r.tr.variant()
	return figures.Series{Name: v, Group: v, X: x, Y: y}
}

// shift turns steps into step+1 so step 0 shows on a log axis.
func shift(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x + 1
	}
	return out
}

// markdownTable renders one row per trial with every summary metric.
func markdownTable(title string, results []trialResult) string {
	keys := map[string]bool{}
	for _, r := range results {
		for k := range r.sum {
			keys[k] = true
		}
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n| trial | name | %s |\n|---|---|%s\n", title, strings.Join(ks, " | "), strings.Repeat("---|", len(ks)))
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s |", r.tr.ID, r.tr.Name)
		for _, k := range ks {
			v, ok := r.sum[k]
			switch {
			case !ok:
				b.WriteString("  |")
			case math.IsNaN(v):
				b.WriteString(" null |")
			default:
				fmt.Fprintf(&b, " %.6g |", v)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
