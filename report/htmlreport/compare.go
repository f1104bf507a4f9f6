package htmlreport

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"path/filepath"
	"sort"

	"goldstone/internal/atomicfile"
	"goldstone/runs"
)

// ComparePage is what the page of `runner compare` shows: the runs, one
// overlay figure per series metric (every run's trials on the same axes,
// one colour per run and variant), the headline aggregates of every run
// side by side, and the diff of the first run against each other.
type ComparePage struct {
	Runs    []runs.RunListing
	Figures []Figure // relative to the page
	// Aggregates: per headline metric, one table whose rows are every
	// run's cells (CompareCell).
	Aggregates []CompareAggregate
	// SettingDiffs: per setting that differs among the trials pooled over
	// the runs, each headline metric's difference paired by seed.
	SettingDiffs []SettingDiff
	Diffs        []CompareDiff
}

// CompareAggregate is a headline metric over the runs compared.
type CompareAggregate struct {
	runs.Headline
	Settings []string // the union of the runs' swept settings
	Rows     []CompareCell
}

// CompareCell is one run's cell of a headline metric; Best marks the best
// over every run's cells.
type CompareCell struct {
	Run      int64
	Settings []string // values of CompareAggregate.Settings ("" where the run does not sweep it)
	// Partial: the run has not ended (running or interrupted): its cells
	// are over the trials it has finished so far.
	Partial bool
	runs.Cell
}

// MarkPartial marks the rows of the runs in listings that are running or
// interrupted, whose cells hold only the trials finished so far.
func MarkPartial(aggs []CompareAggregate, listings []runs.RunListing) {
	partial := map[int64]bool{}
	for _, l := range listings {
		partial[l.ID] = l.Status == runs.StatusRunning || l.Status == runs.StatusInterrupted
	}
	for k := range aggs {
		for i := range aggs[k].Rows {
			aggs[k].Rows[i].Partial = partial[aggs[k].Rows[i].Run]
		}
	}
}

// CompareDiff is the diff of two runs (runs.Store.Diff) with the metrics
// that differ; Equal counts those that do not.
type CompareDiff struct {
	*runs.RunDiff
	Changed []runs.MetricDiff
	Equal   int
}

// fixedDiffer returns, sorted, the keys that every run of fixed fixes
// (when there are two runs or more) to values that are not all equal;
// the seed (what the rows aggregate over), the trial name and the
// variant (a column of its own) aside.
func fixedDiffer(fixed []map[string]string) []string {
	if len(fixed) < 2 {
		return nil
	}
	var keys []string
	for k, v := range fixed[0] {
		if k == "seed" || k == "name" || k == "variant" {
			continue
		}
		all, same := true, true
		for _, f := range fixed[1:] {
			w, ok := f[k]
			all = all && ok
			same = same && w == v
		}
		if all && !same {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// NewCompareDiff keeps the metrics of d whose values differ.
func NewCompareDiff(d *runs.RunDiff) CompareDiff {
	cd := CompareDiff{RunDiff: d}
	for _, m := range d.Metrics {
		if m.InA && m.InB && (m.A == m.B || math.IsNaN(m.A) && math.IsNaN(m.B)) {
			cd.Equal++
			continue
		}
		cd.Changed = append(cd.Changed, m)
	}
	return cd
}

// CompareAggregates lines up the aggregates of several runs (each from
// runs.Aggregates, in the order of ids) by headline metric and marks the
// best cell over all of them: the fewest nevers, then the best mean. A
// setting one run sweeps and another does not shows the other's value
// from fixed (the parameter values, as text by key, that every trial of
// a run shares; may be nil), and a setting every run fixes, to values
// that differ between the runs (lr 1 in one run, 0.5 in another), gets
// a column too: without it the rows of the runs would not say how they
// differ.
func CompareAggregates(ids []int64, per [][]runs.Aggregate, fixed []map[string]string) []CompareAggregate {
	var out []CompareAggregate
	index := map[string]int{}
	for _, aggs := range per {
		for _, a := range aggs {
			k, ok := index[a.Metric]
			if !ok {
				k = len(out)
				index[a.Metric] = k
				out = append(out, CompareAggregate{Headline: a.Headline})
			}
			for _, s := range a.Settings {
				if !contains(out[k].Settings, s) {
					out[k].Settings = append(out[k].Settings, s)
				}
			}
		}
	}
	differ := fixedDiffer(fixed)
	for k := range out {
		for _, s := range differ {
			if !contains(out[k].Settings, s) {
				out[k].Settings = append(out[k].Settings, s)
			}
		}
	}
	for i, aggs := range per {
		for _, a := range aggs {
			ca := &out[index[a.Metric]]
			for _, c := range a.Cells {
				row := CompareCell{Run: ids[i], Cell: c}
				row.Best = false
				for _, s := range ca.Settings {
					v := ""
					if i < len(fixed) {
						v = fixed[i][s]
					}
					for j, as := range a.Settings {
						if as == s {
							v = c.Settings[j]
						}
					}
					row.Settings = append(row.Settings, v)
				}
				ca.Rows = append(ca.Rows, row)
			}
		}
	}
	for k := range out {
		best := -1
		for i, r := range out[k].Rows {
			if r.Finite() == 0 {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			b := out[k].Rows[best]
			switch {
			case r.Never != b.Never:
				if r.Never < b.Never {
					best = i
				}
			case out[k].Lower && r.Mean < b.Mean, !out[k].Lower && r.Mean > b.Mean:
				best = i
			}
		}
		cells := make([]runs.Cell, len(out[k].Rows))
		for i, r := range out[k].Rows {
			cells[i] = r.Cell
		}
		if best >= 0 && len(out[k].Rows) > 1 && !runs.TiedWithNext(cells, best, out[k].Lower) {
			out[k].Rows[best].Best = true
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// WriteCompare writes the page as dir/index.html (atomically) and returns
// its path.
func WriteCompare(dir string, p *ComparePage) (string, error) {
	path := filepath.Join(dir, "index.html")
	var b bytes.Buffer
	if err := compareTmpl.Execute(&b, p); err != nil {
		return "", fmt.Errorf("compare page %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, visible(b.Bytes())); err != nil {
		return "", fmt.Errorf("compare page %s: %w", path, err)
	}
	return path, nil
}

var compareTmpl = template.Must(template.New("compare").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>compare runs{{range .Runs}} {{.ID}}{{end}}</title>
<style>` + style + `</style>
</head>
<body>
<p><a href="../../index.html">all runs</a></p>
<h1>Compare runs{{range $i, $r := .Runs}}{{if $i}} ·{{end}} {{$r.ID}}{{end}}</h1>
<table id="compared"><thead><tr><th>run</th><th>experiment</th><th>status</th><th>started</th><th>trials</th><th>commit</th><th>note</th><th>tags</th></tr></thead><tbody>
{{range .Runs}}<tr><td class="num"><a href="../../{{.Experiment}}/run-{{.ID}}/index.html">{{.ID}}</a></td><td>{{.Experiment}}</td><td>{{.Status}}</td><td>{{time .Started}}</td><td>{{.Trials}}{{with counts .Counts}} <span class="muted">({{.}})</span>{{end}}</td><td><code>{{short .GitCommit}}{{if .GitDirty}}+{{end}}</code></td><td>{{.Note}}</td><td>{{tags .Tags}}</td></tr>
{{end}}</tbody></table>

{{with .Aggregates}}<h2 id="aggregates">Headline metrics over seeds</h2>
<p class="muted">Each run's aggregates (as on its page) side by side; ★ best over all runs: the fewest nevers, then the best mean; no ★ when the next best ties (means within 1e-9 of their size, or a 95% interval of their difference over the seeds that holds 0).</p>
{{range .}}<h3>{{.Metric}} <span class="muted">({{better .Headline}})</span></h3>
<div class="wide"><table class="aggregate sortable" data-metric="{{.Metric}}"><thead><tr><th>run</th><th>variant</th>{{range .Settings}}<th>{{.}}</th>{{end}}<th>n</th><th>never</th><th>mean</th><th>sd</th><th>95% CI</th><th>median</th></tr></thead><tbody>
{{range .Rows}}<tr{{if .Best}} class="best"{{end}}><td class="num" data-v="{{.Run}}">{{.Run}}{{if .Partial}} <span class="muted">partial</span>{{end}}</td><td>{{.Variant}}</td>{{range .Settings}}<td>{{.}}</td>{{end}}<td class="num" data-v="{{.N}}">{{.N}}</td><td class="num{{if .Never}} never{{end}}" data-v="{{.Never}}">{{.Never}}</td><td class="num" data-v="{{stat .Mean}}">{{stat .Mean}}</td><td class="num">{{stat .SD}}</td><td class="num">{{ci .Cell}}</td><td class="num">{{stat .Median}}</td></tr>
{{end}}</tbody></table></div>
{{end}}{{end}}

` + settingDiffsHTML + `<h2>Series</h2>
{{range .Figures}}<figure id="fig-{{.File}}"><img src="{{.File}}" alt="{{.File}}"><figcaption><b>{{.File}}</b>{{with .SVG}} (<a href="{{.}}">SVG</a>){{end}}{{with .Caption}}: {{.}}{{end}}</figcaption></figure>
{{else}}<p class="muted">No series in common.</p>{{end}}

<h2>Diff</h2>
{{range .Diffs}}{{$d := .}}<h3>run {{.A.ID}} vs run {{.B.ID}}</h3>
{{if .Settings}}<table class="diff-settings"><thead><tr><th>setting</th><th>run {{.A.ID}}</th><th>run {{.B.ID}}</th></tr></thead><tbody>
{{range .Settings}}<tr><td><code>{{.Key}}</code></td><td><code>{{or .A "-"}}</code></td><td><code>{{or .B "-"}}</code></td></tr>
{{end}}</tbody></table>{{else}}<p class="muted">Settings identical.</p>{{end}}
{{if .Changed}}<div class="wide"><table class="diff-metrics sortable"><thead><tr><th>trial</th><th>metric</th><th>run {{.A.ID}}</th><th>run {{.B.ID}}</th><th>delta</th></tr></thead><tbody>
{{range .Changed}}<tr><td>{{.Trial}}</td><td>{{.Metric}}</td><td class="num">{{if .InA}}{{stat .A}}{{else}}-{{end}}</td><td class="num">{{if .InB}}{{stat .B}}{{else}}-{{end}}</td><td class="num">{{stat .Delta}}</td></tr>
{{end}}</tbody></table></div>
<p class="muted">{{.Equal}} metric values equal in both runs not shown; trials are matched by name (variant and grid values).</p>
{{else if .Metrics}}<p class="diff-none">Every metric value ({{.Equal}}) of the trials in both runs is equal; trials are matched by name (variant and grid values).</p>
{{else}}<p class="diff-none">No trial is in both runs (trials are matched by name: variant and grid values), so no metric is compared.</p>{{end}}
{{with .OnlyA}}<details><summary>{{len .}} trial{{if ne (len .) 1}}s{{end}} only in run {{$d.A.ID}}</summary><p class="muted">{{join . ", "}}</p></details>{{end}}
{{with .OnlyB}}<details><summary>{{len .}} trial{{if ne (len .) 1}}s{{end}} only in run {{$d.B.ID}}</summary><p class="muted">{{join . ", "}}</p></details>{{end}}
{{end}}
<script>` + sortScript + `</script>
</body>
</html>
`))
