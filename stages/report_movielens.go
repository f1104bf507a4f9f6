package stages

import (
	"context"
	"os"
	"path/filepath"

	"goldstone/pipeline"
	"goldstone/stages/figures"
)

// ReportMovieLens draws the paper's Figure 3 (training curves of the loss L
// and of psi, for every variant: AdaGrad, Goldstone-GD and Procrustes on the
// same AdaGrad) with the gauge gap and the validation log-likelihood, and
// writes a Markdown table of every trial's summary metrics.
func ReportMovieLens(ctx context.Context, experiment string, trials []Trial, io *pipeline.IO, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var loss, psi, gap, vll []figures.Series
	var ts []Trial
	var ss []Summary
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
		ts, ss = append(ts, tr), append(ss, sum)
		v := tr.Variant
		if v == "" {
			v = tr.Settings.String("gauge")
		}
		name := v // one legend entry per variant
		add := func(dst *[]figures.Series, metric string) {
			x, y := ser.Of(metric)
			*dst = append(*dst, figures.Series{Name: name, Group: v, X: shift(x), Y: y})
		}
		add(&loss, "loss")
		add(&psi, "psi")
		add(&gap, "gauge_gap")
		x, y := ser.Of("valid_ll")
		vll = append(vll, figures.Series{Name: name, Group: v, X: x, Y: y})
	}
	err := figures.Curves(filepath.Join(dir, "figure3.png"), figures.CurveSpec{
		Title: experiment + ": training curves (colour = variant)",
		Panels: []figures.Panel{
			{Title: "loss L", XLabel: "step + 1", YLabel: "L", LogX: true, LogY: true, Series: loss},
			{Title: "psi", XLabel: "step + 1", YLabel: "psi", LogX: true, LogY: true, Series: psi},
			{Title: "gauge gap", XLabel: "step + 1", YLabel: "psi - min_R psi", LogX: true, LogY: true, Series: gap},
			{Title: "validation log-likelihood per rating", XLabel: "step", YLabel: "mean log p", Series: vll},
		},
	})
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, "summary.md"), []byte(markdownTable(experiment, ts, ss)))
}
