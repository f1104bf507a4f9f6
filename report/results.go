package report

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/pipeline"
	"goldstone/report/figures"
	"goldstone/runs"
	"goldstone/train"
	"goldstone/trialio"
)

// TrialResult is one trial's result directory, loaded for a report.
type TrialResult struct {
	Trial   experiment.Trial
	Variant string // the trial's variant for legends (VariantName)
	Dir     string
	Series  *trialio.Series
	Summary trialio.Summary
}

// loadResults reads the series and summary of every trial the report node
// has as an input (named by trial id), in trial order; it stops with ctx's
// error when ctx is done.
func loadResults(ctx context.Context, trials []experiment.Trial, io *pipeline.IO) ([]TrialResult, error) {
	var out []TrialResult
	for _, tr := range trials {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !io.HasInput(tr.ID) {
			continue
		}
		d := io.Input(tr.ID)
		ser, err := trialio.ReadSeries(filepath.Join(d, trialio.SeriesArrow))
		if err != nil {
			return nil, err
		}
		sum, err := trialio.ReadSummary(filepath.Join(d, "summary.json"))
		if err != nil {
			return nil, err
		}
		out = append(out, TrialResult{Trial: tr, Variant: VariantName(tr), Dir: d, Series: ser, Summary: sum})
	}
	return out, nil
}

// VariantName names a trial's variant for legends: its variant, else its
// symmetry step (the name of its gauge choice, train.OptimSettings), else
// "" for a pipeline without one.
func VariantName(t experiment.Trial) string {
	if t.Variant != "" {
		return t.Variant
	}
	var o train.OptimSettings
	if settings.Decode(t.Settings, &o) != nil || o.Gauge == nil {
		return ""
	}
	return settings.ChoiceName(o.Gauge)
}

// Curve is a metric of a trial as a figure series, steps shifted by one
// for log axes when shifted is set: the colour is the variant's; the
// trial's grid values other than the seed (GridSetting) are its dash and
// marker style, so that lines of different settings stay apart, and its
// legend entry ("goldstone lr=0.5"); the seeds of one setting share one.
func (r TrialResult) Curve(metric string, shifted bool) figures.Series {
	x, y := r.Series.Of(metric)
	if shifted {
		x = Shift(x)
	}
	v := r.Variant
	g := GridSetting(r.Trial)
	name := v
	if g != "" {
		name = strings.TrimSpace(v + " " + g)
	}
	return figures.Series{Name: name, Group: v, Style: g, X: x, Y: y}
}

// GridSetting is a trial's grid values other than the seed, as in its
// name ("lr=0.5 dim=10"); "" when the grid sweeps the seed only.
func GridSetting(t experiment.Trial) string {
	rest := strings.TrimPrefix(t.Name, t.Variant)
	var parts []string
	for _, f := range strings.Fields(rest) {
		if strings.Contains(f, "=") && !strings.HasPrefix(f, "seed=") {
			parts = append(parts, f)
		}
	}
	return strings.Join(parts, " ")
}

// Shift turns steps into step+1 so step 0 shows on a log axis.
func Shift(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x + 1
	}
	return out
}

// MarkdownTable renders one row per trial with every summary metric
// (runs.ValueText: "never" for a threshold never reached) except those
// that describe the data rather than the trial (DataPrefix: the same for
// every trial on one data set; a pipeline's report shows them once).
func MarkdownTable(title string, results []TrialResult) string {
	var ks []string
	for _, r := range results {
		for k := range r.Summary {
			if !strings.HasPrefix(k, DataPrefix) {
				ks = append(ks, k)
			}
		}
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n| trial | name | %s |\n|---|---|%s\n", MarkdownText(title), strings.Join(ks, " | "), strings.Repeat("---|", len(ks)))
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s |", r.Trial.ID, MarkdownText(r.Trial.Name))
		for _, k := range ks {
			v, ok := r.Summary[k]
			if !ok {
				b.WriteString("  |")
			} else {
				fmt.Fprintf(&b, " %s |", runs.ValueText(v, 6))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// DataPrefix starts the name of a summary metric that describes the data
// a trial was trained on (its density, for example), not the trial.
const DataPrefix = "data_"

// MarkdownText escapes text for a Markdown line or table cell: HTML's
// special characters become entities (a name, note or error cannot inject
// <script> or <img onerror> into a rendered report), '|' is escaped so a
// cell stays one cell, and line breaks and other control characters become
// spaces, so the text stays on its line.
func MarkdownText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '|':
			b.WriteString(`\|`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// MarkdownCode renders s as a Markdown code span: shown literally (no HTML
// or Markdown inside is interpreted), delimited by more backticks than the
// longest run of backticks in s, so that s cannot close it; line breaks and
// control characters become spaces.
func MarkdownCode(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || (s != "" && strings.Trim(s, " ") == "") {
		s = " " + s + " "
	}
	return fence + s + fence
}
