package stages

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"goldstone/pipeline"
	"goldstone/stages/figures"
)

// TrialResult is one trial's result directory, loaded for a report.
type TrialResult struct {
	Trial   Trial
	Dir     string
	Series  *Series
	Summary Summary
}

// LoadResults reads the series and summary of every trial the report node
// has as an input (named by trial id), in trial order.
func LoadResults(trials []Trial, io *pipeline.IO) ([]TrialResult, error) {
	var out []TrialResult
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
		out = append(out, TrialResult{Trial: tr, Dir: d, Series: ser, Summary: sum})
	}
	return out, nil
}

// VariantName names a trial's variant for legends: the variant, else its gauge step.
func (t Trial) VariantName() string {
	if t.Variant != "" {
		return t.Variant
	}
	return t.Settings.String("gauge")
}

// Curve is a metric of a trial as a figure series, steps shifted by one
// for log axes when shifted is set; one legend entry per variant.
func (r TrialResult) Curve(metric string, shifted bool) figures.Series {
	x, y := r.Series.Of(metric)
	if shifted {
		x = Shift(x)
	}
	v := r.Trial.VariantName()
	return figures.Series{Name: v, Group: v, X: x, Y: y}
}

// Shift turns steps into step+1 so step 0 shows on a log axis.
func Shift(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x + 1
	}
	return out
}

// MarkdownTable renders one row per trial with every summary metric.
func MarkdownTable(title string, results []TrialResult) string {
	var ks []string
	for _, r := range results {
		ks = slices.AppendSeq(ks, maps.Keys(r.Summary))
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n| trial | name | %s |\n|---|---|%s\n", title, strings.Join(ks, " | "), strings.Repeat("---|", len(ks)))
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s |", r.Trial.ID, r.Trial.Name)
		for _, k := range ks {
			v, ok := r.Summary[k]
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
