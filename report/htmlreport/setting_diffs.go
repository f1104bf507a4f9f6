package htmlreport

import (
	"encoding/json"
	"math"
	"strings"

	"goldstone/report/figures"
	"goldstone/runs"
)

// SettingDiff is one headline metric's difference between two values of
// one setting, paired by seed: for every seed whose trials with value A
// and with value B agree in the variant and every other swept setting,
// metric(B) - metric(A); the mean and 95% t interval are over those seeds.
type SettingDiff struct {
	Setting string // the setting that differs
	A, B    string // its two values (A the first met in the trials)
	Variant string
	Context string // the other swept settings, "k=v k=v", fixed in the pair
	Metric  string
	Lower   bool    // lower is better
	N       int     // seed pairs with a finite value on both sides
	Skipped int     // seed pairs left out: a never or a missing value on a side
	Mean    float64 // mean of metric(B) - metric(A); NaN when N = 0
	Lo, Hi  float64 // its 95% t interval (figures.TInterval); NaN when N < 2
	Tie     bool    // the interval holds 0, or N < 2: no side is better
}

// Better names the better value ("" for a tie).
func (d SettingDiff) Better() string {
	switch {
	case d.Tie:
		return ""
	case (d.Mean < 0) == d.Lower:
		return d.B
	default:
		return d.A
	}
}

// SettingDiffs pairs trials (of one run, or of several runs of one
// experiment pooled) that differ in exactly one swept setting and share
// a seed, and returns per headline metric the difference between each
// later value of the setting and its first, with its interval over seeds.
// Only trials with a result count; the settings are runs.SweptSettings of
// the pooled trials, so a setting two runs fix at different values is one.
func SettingDiffs(trials []runs.TrialRow, heads []runs.Headline) []SettingDiff {
	swept := runs.SweptSettings(trials)
	var ok []runs.TrialRow
	for _, t := range trials {
		if runs.HasResult(t.Status) {
			ok = append(ok, t)
		}
	}
	var out []SettingDiff
	for si, s := range swept {
		type cellKey struct{ variant, context string }
		values := []string{}                // the setting's values, first met first
		cells := []cellKey{}                // the contexts, first met first
		at := map[[3]string]runs.TrialRow{} // (cell, value, seed) -> first trial
		seeds := map[cellKey][]string{}
		for _, t := range ok {
			v := plainParam(t.Params[s])
			var ctx []string
			for sj, o := range swept {
				if sj != si {
					ctx = append(ctx, o+"="+plainParam(t.Params[o]))
				}
			}
			c := cellKey{runs.TrialVariant(t.Params), strings.Join(ctx, " ")}
			seed := t.Params["seed"]
			k := [3]string{c.variant + "\x00" + c.context, v, seed}
			if _, dup := at[k]; dup {
				continue
			}
			at[k] = t
			if !contains(values, v) {
				values = append(values, v)
			}
			if _, seen := seeds[c]; !seen {
				cells = append(cells, c)
			}
			if !contains(seeds[c], seed) {
				seeds[c] = append(seeds[c], seed)
			}
		}
		for _, c := range cells {
			ck := c.variant + "\x00" + c.context
			for _, b := range values[min(1, len(values)):] {
				for _, h := range heads {
					d := SettingDiff{Setting: s, A: values[0], B: b, Variant: c.variant, Context: c.context, Metric: h.Metric, Lower: h.Lower}
					var xs []float64
					pairs := 0
					for _, seed := range seeds[c] {
						ta, okA := at[[3]string{ck, values[0], seed}]
						tb, okB := at[[3]string{ck, b, seed}]
						if !okA || !okB {
							continue
						}
						va, hasA := ta.Summary[h.Metric]
						vb, hasB := tb.Summary[h.Metric]
						if !hasA && !hasB {
							continue
						}
						pairs++
						if !hasA || !hasB || !finite(va) || !finite(vb) {
							continue
						}
						xs = append(xs, vb-va)
					}
					if pairs == 0 {
						continue
					}
					d.N, d.Skipped = len(xs), pairs-len(xs)
					d.Mean, d.Lo, d.Hi = math.NaN(), math.NaN(), math.NaN()
					if d.N > 0 {
						d.Mean, d.Lo, d.Hi = figures.TInterval(xs, 0.95)
					}
					d.Tie = d.N < 2 || !(d.Lo > 0 || d.Hi < 0)
					out = append(out, d)
				}
			}
		}
	}
	return out
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// plainParam is a parameter's JSON text as plain text: a string unquoted.
func plainParam(s string) string {
	var str string
	if json.Unmarshal([]byte(s), &str) == nil {
		return str
	}
	return s
}

// settingDiffsHTML is the table of SettingDiffs, shared by the run page
// (one run's trials grouped by a setting) and the compare page (the runs'
// trials pooled).
const settingDiffsHTML = `{{with .SettingDiffs}}<h2 id="setting-diffs">Differences per setting, paired by seed</h2>
<p class="muted">For each setting whose values differ among them, metric(B) − metric(A) over the seeds whose trials agree in the variant and every other swept setting (shown as context); mean and 95% Student t interval over those seeds. ★ the better value where the interval excludes 0; "tie" where it holds 0 or fewer than two seeds pair. Skipped: pairs with a never or missing value.</p>
<div class="wide"><table class="setting-diffs sortable"><thead><tr><th>setting</th><th>A</th><th>B</th><th>variant</th><th>context</th><th>metric</th><th>n</th><th>skipped</th><th>mean B − A</th><th>95% CI</th><th>better</th></tr></thead><tbody>
{{range .}}<tr><td><code>{{.Setting}}</code></td><td>{{.A}}</td><td>{{.B}}</td><td>{{.Variant}}</td><td>{{.Context}}</td><td>{{.Metric}}</td><td class="num">{{.N}}</td><td class="num">{{.Skipped}}</td><td class="num">{{stat .Mean}}</td><td class="num">{{if ge .N 2}}[{{stat .Lo}}, {{stat .Hi}}]{{end}}</td><td>{{if .Tie}}tie{{else}}★ {{.Better}}{{end}}</td></tr>
{{end}}</tbody></table></div>
{{end}}
`
