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
	type loaded struct {
		tr  Trial
		ser *Series
		sum Summary
	}
	var all []loaded
	for _, tr := range trials {
		if !io.HasInput(tr.ID) {
			continue
		}
		d := io.Input(tr.ID)
		ser, err := ReadSeries(filepath.Join(d, "series.arrow"))
		if err != nil {
			return err
		}
		sum, err := ReadSummary(filepath.Join(d, "summary.json"))
		if err != nil {
			return err
		}
		all = append(all, loaded{tr, ser, sum})
	}
	variantOf := func(t Trial) string {
		if t.Variant != "" {
			return t.Variant
		}
		return t.Settings.String("gauge")
	}
	var excess, psi, gap []figures.Series
	for _, l := range all {
		v := variantOf(l.tr)
		name := v
		sx, sy := l.ser.Of("excess")
		excess = append(excess, figures.Series{Name: name, Group: v, X: shift(sx), Y: sy})
		px, py := l.ser.Of("psi")
		psi = append(psi, figures.Series{Name: name, Group: v, X: shift(px), Y: py})
		gx, gy := l.ser.Of("gauge_gap")
		gap = append(gap, figures.Series{Name: name, Group: v, X: shift(gx), Y: gy})
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
		return err
	}
	// Figure 2: the lowest seed's snapshots for the first two variants.
	seeds := map[string]loaded{}
	var order []string
	for _, l := range all {
		v := variantOf(l.tr)
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
		b, err := os.ReadFile(filepath.Join(io.Input(l.tr.ID), "snapshots.json"))
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
	ts, ss := trialsOf(all, func(l loaded) (Trial, Summary) { return l.tr, l.sum })
	return writeFileAtomic(filepath.Join(dir, "summary.md"), []byte(markdownTable(experiment, ts, ss)))
}

func trialsOf[T any](xs []T, f func(T) (Trial, Summary)) ([]Trial, []Summary) {
	var ts []Trial
	var ss []Summary
	for _, x := range xs {
		t, s := f(x)
		ts = append(ts, t)
		ss = append(ss, s)
	}
	return ts, ss
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
func markdownTable(title string, trials []Trial, sums []Summary) string {
	keys := map[string]bool{}
	for _, s := range sums {
		for k := range s {
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
	for i, t := range trials {
		fmt.Fprintf(&b, "| %s | %s |", t.ID, t.Name)
		for _, k := range ks {
			v, ok := sums[i][k]
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
