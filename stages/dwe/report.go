package dwe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"goldstone/experiment/settings"
	"goldstone/pipeline"
	"goldstone/report"
	"goldstone/report/figures"
	"goldstone/trialio"
)

// Report draws the paper's Figure 4 (figure4.png: histograms of
// cos(u_first, u_last) over the vocabulary, one sample per variant) and the
// training curves, and returns the Markdown of report.md after the summary
// table: which file answers which paper figure, Table 2, and each trial's
// histogram counts and word aging table.
func Report(ctx context.Context, experiment string, all []report.TrialResult, io *pipeline.IO, dir string) (string, error) {
	var samples []figures.Sample
	var loss, psi []figures.Series
	var md strings.Builder
	var marks []figures.Mark
	seen := map[int]bool{}
	for _, r := range all {
		tr, d, sum := r.Trial, r.Dir, r.Summary
		// The switch from minibatches to full batches (x is step + 1).
		if ts := settings.MustDecode[TrainSettings](tr.Settings); ts.MinibatchSteps > 0 && ts.MinibatchWords > 0 && !seen[ts.MinibatchSteps] {
			mb := ts.MinibatchSteps
			seen[mb] = true
			marks = append(marks, figures.Mark{X: float64(mb + 1), Label: "full batch"})
		}
		loss = append(loss, r.Curve("loss", true))
		psi = append(psi, r.Curve("psi", true))
		if dv, ok := sum.Divergence(); ok {
			// Not evaluated: no cosines, no aging table.
			fmt.Fprintf(&md, "\n## %s (%s)\n\nNot evaluated: the training %s.\n", tr.Name, tr.ID, dv)
			continue
		}
		meta, err := readMeta(filepath.Join(d, "model.json"))
		if err != nil {
			return "", err
		}
		cos, shape, err := trialio.ReadNpy(filepath.Join(d, "first_last_cos.npy"))
		if err == nil && !slices.Equal(shape, []int{meta.V}) {
			err = fmt.Errorf("%s: shape %v, want (%d,)", filepath.Join(d, "first_last_cos.npy"), shape, meta.V)
		}
		if err != nil {
			return "", err
		}
		samples = append(samples, figures.Sample{Name: tr.Name, Values: cos})
		aging, err := os.ReadFile(filepath.Join(d, "aging.md"))
		if err != nil {
			return "", err
		}
		counts := figures.HistCounts(cos, 20, -1, 1)
		fmt.Fprintf(&md, "\n## %s (%s)\n\nmedian cos(first, last) = %.4f; histogram over [-1, 1] in 20 bins: %v\n\nword aging:\n\n%s", tr.Name, tr.ID, sum["median_first_last_cos"], counts, aging)
	}
	caps := map[string]string{
		"curves.png": "The training loss and psi (the coupling across time steps, log axis) against the training step + 1 (log axis); the " +
			"vertical dashed lines mark where training switches from minibatches to the full batch. " + figures.LinesNote + " " + figures.BandsNote,
	}
	if len(samples) > 0 { // none when every trial diverged
		if err := figures.Histogram(filepath.Join(dir, "figure4.png"), figures.HistSpec{
			Title: experiment + ": cosine between each word's first and last embedding", XLabel: "cos(u_first, u_last)",
			Bins: 40, Min: -1, Max: 1, Stacked: true, Samples: samples,
		}); err != nil {
			return "", err
		}
		caps["figure4.png"] = "The paper's Fig. 4 counterpart: histograms over the vocabulary of the cosine between each word's embedding at the first and " +
			"at the last time step, 40 bins over [-1, 1], one panel per trial; the dashed line is the trial's median (median_first_last_cos)."
	}
	if err := figures.Curves(filepath.Join(dir, "curves.png"), figures.CurveSpec{
		Title: experiment + ": training curves (colour = variant)",
		Panels: []figures.Panel{
			{Title: "loss", XLabel: "step + 1", YLabel: "L", LogX: true, Series: loss, Marks: marks},
			{Title: "psi", XLabel: "step + 1", YLabel: "psi", LogX: true, LogY: true, Series: psi, Marks: marks},
		},
	}); err != nil {
		return "", err
	}
	if err := figures.AddCaptions(dir, caps); err != nil {
		return "", err
	}
	return PaperFigures + table2(all) + md.String(), nil
}

// PaperFigures says which report file or section is the counterpart of
// which figure or table of the paper (Bamler and Mandt 2018, Sec. 5.3).
const PaperFigures = `
## Paper figures

- Paper Fig. 4 (Sec. 5.3: histogram over the vocabulary of the cosine
  between each word's first (1800) and last (2008) embedding, baseline
  against Goldstone-GD): figure4.png, the same histogram over [-1, 1] (x:
  cos(u_first, u_last), y: words), first and last time step of this corpus,
  one sample per trial; the counts per trial are in the sections below and
  the median is median_first_last_cos in the table.
- Paper Table 2 (Sec. 5.3: predictive log-likelihood per test point): the
  "Table 2" section below (test_ll of every trial).
- The paper's word aging table: "word aging" in each trial's section.
- curves.png: loss and psi against the step (beyond the paper).
`

// table2 renders the paper's Table 2 counterpart: the predictive
// log-likelihood per test point of every trial, next to the paper's values.
func table2(all []report.TrialResult) string {
	var b strings.Builder
	b.WriteString("\n## Table 2: predictive log-likelihood per test point\n\n")
	b.WriteString("Paper (Google Books, 1800-2008): Goldstone-GD -0.5317, baseline -0.5323.\n\n")
	b.WriteString("| trial | variant | test_ll | valid_ll |\n|---|---|---|---|\n")
	for _, r := range all {
		if dv, ok := r.Summary.Divergence(); ok {
			fmt.Fprintf(&b, "| %s | %s | diverged at step %d | diverged |\n", r.Trial.Name, r.Variant, dv.Step)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %.4f | %.4f |\n", r.Trial.Name, r.Variant, r.Summary["test_ll"], r.Summary["valid_ll"])
	}
	return b.String()
}

func readMeta(path string) (*meta, error) {
	var m meta
	if err := trialio.ReadJSON(path, &m); err != nil {
		return nil, err
	}
	return &m, nil
}
