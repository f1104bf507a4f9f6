package movielens

import (
	"context"
	"os"
	"path/filepath"

	"goldstone/internal/atomicfile"
	"goldstone/pipeline"
	"goldstone/stages"
	"goldstone/stages/figures"
)

// Report draws the paper's Figure 3 (training curves of the loss L
// and of psi, for every variant: AdaGrad, Goldstone-GD and Procrustes on the
// same AdaGrad) with the gauge gap and the validation log-likelihood, and
// writes a Markdown table of every trial's summary metrics.
func Report(ctx context.Context, experiment string, trials []stages.Trial, io *pipeline.IO, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	all, err := stages.LoadResults(trials, io)
	if err != nil {
		return err
	}
	var loss, psi, gap, vll []figures.Series
	for _, r := range all {
		loss = append(loss, r.Curve("loss", true))
		psi = append(psi, r.Curve("psi", true))
		gap = append(gap, r.Curve("gauge_gap", true))
		vll = append(vll, r.Curve("valid_ll", false))
	}
	err = figures.Curves(filepath.Join(dir, "figure3.png"), figures.CurveSpec{
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
	return atomicfile.WriteFile(filepath.Join(dir, "summary.md"), []byte(stages.MarkdownTable(experiment, all)))
}
