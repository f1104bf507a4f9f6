package htmlreport

import "html/template"

// style is shared by both pages.
const style = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 80em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .5em 0; } th, td { padding: .25em .6em; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
th { background: #f5f5f5; } th.sort { cursor: pointer; user-select: none; } th.sort:after { content: " \2195"; color: #999; }
th.asc:after { content: " \2191"; color: #222; } th.desc:after { content: " \2193"; color: #222; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } .muted { color: #777; } .bad { color: #b00; }
.failed { background: #fff3f3; } .interrupted { background: #fffbe6; } .diverged { background: #f4f0ff; } code, pre { font: 12px/1.4 ui-monospace, monospace; }
pre { white-space: pre-wrap; background: #f8f8f8; padding: .5em; } figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
.wide, .markdown { overflow-x: auto; } .markdown table td, .markdown table th { font-size: 12px; } tr.best td { background: #eaf6ea; font-weight: 600; } tr.best td:first-child:before { content: "\2605 "; color: #2a7a2a; }
td.never { color: #a05a00; } figcaption { color: #444; max-width: 60em; } figcaption b { color: #222; } dl { display: grid; grid-template-columns: max-content auto; gap: .1em 1em; } dt { color: #555; } dd { margin: 0; }
`

// sortScript makes every table with class "sortable" sortable by clicking
// a header: cells with a data-v attribute sort as numbers (cells without
// one last), the others as text. Clicking again reverses the order.
const sortScript = `
(function () {
  function key(td) {
    if (!td) return [2, ""];
    var v = td.getAttribute("data-v");
    if (v !== null) { return v === "" ? [1, 0] : [0, parseFloat(v)]; }
    return [0, td.textContent.trim()];
  }
  function cmp(a, b) {
    if (a[0] !== b[0]) return a[0] - b[0];
    if (typeof a[1] === "number" && typeof b[1] === "number") return a[1] - b[1];
    return String(a[1]).localeCompare(String(b[1]), undefined, {numeric: true});
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.classList.add("sort");
      th.addEventListener("click", function () {
        var asc = !th.classList.contains("asc");
        Array.prototype.forEach.call(heads, function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r1, r2) {
          var c = cmp(key(r1.cells[col]), key(r2.cells[col]));
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
`

// filterScript filters the rows of the runs index by experiment, status,
// tag and a text (matched, case-insensitive, against the whole row: note,
// tags, headline metrics and their variants).
const filterScript = `
(function () {
  var ids = ["f-experiment", "f-status", "f-tag", "f-text"];
  function apply() {
    var ex = document.getElementById("f-experiment").value, st = document.getElementById("f-status").value;
    var tag = document.getElementById("f-tag").value, text = document.getElementById("f-text").value.toLowerCase();
    var rows = document.getElementById("runs").tBodies[0].rows, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (!r.hasAttribute("data-status")) continue;
      var ok = (!ex || r.getAttribute("data-experiment") === ex) && (!st || r.getAttribute("data-status") === st) &&
        (!tag || r.getAttribute("data-tags").indexOf("|" + tag + "|") >= 0) && (!text || r.textContent.toLowerCase().indexOf(text) >= 0);
      r.style.display = ok ? "" : "none";
      if (ok) shown++;
    }
    document.getElementById("f-count").textContent = shown + " of " + rows.length + " runs";
  }
  ids.forEach(function (id) { var el = document.getElementById(id); el.addEventListener("input", apply); el.addEventListener("change", apply); });
  apply();
})();
`

var pageTmpl = template.Must(template.New("page").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Run.Experiment}} run {{.Run.ID}}</title>
<style>` + style + `</style>
</head>
<body>
<p><a href="../../index.html">all runs</a></p>
<h1>{{.Run.Experiment}} · run {{.Run.ID}}</h1>
<dl id="run">
<dt>status</dt><dd>{{.Run.Status}}</dd>
<dt>kind</dt><dd>{{.Run.Kind}}</dd>
<dt>started</dt><dd>{{time .Run.Started}}</dd>
<dt>ended</dt><dd>{{time .Run.Ended}}{{with runDur .Run}} ({{.}}){{end}}</dd>
<dt>trials</dt><dd>{{.Run.Trials}}{{with counts .Run.Counts}}: {{.}}{{end}}</dd>
{{with .Run.Note}}<dt>note</dt><dd>{{.}}</dd>{{end}}
{{with tags .Run.Tags}}<dt>tags</dt><dd>{{.}}</dd>{{end}}
<dt>git commit</dt><dd><code>{{if .Run.GitCommit}}{{.Run.GitCommit}}{{if .Run.GitDirty}} (dirty){{end}}{{else}}none{{end}}</code></dd>
<dt>config hash</dt><dd><code>{{.Run.ConfigHash}}</code></dd>
{{with .Summary}}<dt>summary</dt><dd><a href="{{.}}">{{.}}</a></dd>{{end}}
</dl>

<h2>Settings</h2>
{{if .Diff}}<p>Differences from the defaults:</p>
<table id="settings-diff"><thead><tr><th>setting</th><th>this run</th><th>default</th></tr></thead><tbody>
{{range .Diff}}<tr><td><code>{{.Key}}</code></td><td><code>{{.Value}}</code></td><td>{{if .HasDefault}}<code>{{.Default}}</code>{{else}}<span class="muted">(none)</span>{{end}}</td></tr>
{{end}}</tbody></table>{{else}}<p class="muted">No setting differs from the defaults{{if not .All}} (no settings recorded){{end}}.</p>{{end}}
<details><summary>all {{len .All}} settings</summary>
<table id="settings"><tbody>{{range .All}}<tr><td><code>{{.Key}}</code></td><td><code>{{.Value}}</code></td></tr>{{end}}</tbody></table>
</details>

{{with .Aggregates}}<h2 id="aggregates">Aggregates over seeds</h2>
<p class="muted">Each headline metric over the seeds of each variant and swept setting: n trials, how many never reached the threshold (never), mean and standard deviation of the values that did, with the 95% t-interval of the mean (cut to the metric&#39;s range: steps are never negative), and the median counting never as infinitely many steps. ★ best: the fewest nevers, then the best mean; none when the next best ties (means within 1e-9 of their size, or a 95% interval of their difference over the seeds that holds 0).</p>
{{range .}}<h3>{{.Metric}} <span class="muted">({{better .Headline}})</span></h3>
<div class="wide"><table class="aggregate sortable" data-metric="{{.Metric}}"><thead><tr><th>variant</th>{{range .Settings}}<th>{{.}}</th>{{end}}<th>n</th><th>never</th><th>mean</th><th>sd</th><th>95% CI</th><th>median</th><th>values</th></tr></thead><tbody>
{{range .Cells}}<tr{{if .Best}} class="best"{{end}}><td>{{.Variant}}</td>{{range .Settings}}<td>{{.}}</td>{{end}}<td class="num" data-v="{{.N}}">{{.N}}</td><td class="num{{if .Never}} never{{end}}" data-v="{{.Never}}">{{never .}}</td><td class="num" data-v="{{stat .Mean}}">{{stat .Mean}}</td><td class="num" data-v="{{stat .SD}}">{{stat .SD}}</td><td class="num">{{ci .}}</td><td class="num">{{stat .Median}}</td><td class="num">{{values .}}</td></tr>
{{end}}</tbody></table></div>
{{end}}{{end}}
{{with .Rungs}}<h2 id="rungs">Search rungs</h2>
<p class="muted">{{$.RungsIntro}}</p>
<div class="wide"><table id="search-rungs"><thead><tr><th>rung</th><th>steps</th><th>points</th><th>promoted</th><th>best {{$.RungsObjective}}</th><th>median {{$.RungsObjective}}</th><th>pruned here</th></tr></thead><tbody>
{{range .}}<tr><td class="num">{{.Index}}</td><td class="num">{{.Steps}}</td><td class="num">{{.Points}}</td><td class="num">{{promoted .}}</td><td class="num">{{rungValue .Best}}</td><td class="num">{{rungValue .Median}}</td><td>{{joinPoints .Pruned}}</td></tr>
{{end}}</tbody></table></div>
{{end}}` + settingDiffsHTML + `<h2>Trials</h2>
<div class="wide"><table id="trials" class="sortable"><thead><tr>
<th>#</th><th>name</th><th>status</th>{{range $.ParamKeys}}<th>{{.}}</th>{{end}}{{range $.MetricKeys}}<th>{{.}}</th>{{end}}<th>wall</th><th>log</th>
</tr></thead><tbody>
{{range .Trials}}{{$t := .}}<tr class="{{.Status}}"><td class="num" data-v="{{.Seq}}">{{.Seq}}</td><td title="{{.ID}}">{{.Name}}</td><td>{{.Status}}</td>
{{- range $.ParamKeys}}<td>{{param $t .}}</td>{{end}}
{{- range $.MetricKeys}}{{if hasMetric $t .}}<td class="num" data-v="{{mv $t .}}">{{metric $t .}}</td>{{else}}<td class="num" data-v=""></td>{{end}}{{end}}
<td class="num" data-v="{{.WallSeconds}}">{{num .WallSeconds}} s</td><td>{{with $.Rel .LogPath}}<a href="{{.}}">log</a>{{end}}</td></tr>
{{end}}</tbody></table></div>

{{with .Diverged}}<h2>Diverged trials</h2>
<p class="muted">Their training diverged (a loss or psi that is not finite or passed its bound): a result of the algorithm, not a failure of the run. The tables count the thresholds they never reached as never and show their final and held-out values as NaN.</p>
<table id="diverged"><thead><tr><th>name</th><th>where</th></tr></thead><tbody>
{{range .}}<tr class="diverged"><td title="{{.ID}}">{{.Name}}</td><td>{{.Error}}</td></tr>
{{end}}</tbody></table>{{end}}

{{with .Failed}}<h2>Failed trials</h2>
{{range .}}<h3 class="bad">{{.Name}} <span class="muted">({{.Status}}, {{.ID}})</span></h3>
<pre>{{.Error}}</pre>{{with $.Rel .LogPath}}<p><a href="{{.}}">trial log</a></p>{{end}}
{{end}}{{end}}

<h2>Figures</h2>
{{range .Figures}}<figure id="fig-{{.File}}"><img src="{{.File}}" alt="{{.File}}"><figcaption><b>{{.File}}</b>{{with .SVG}} (<a href="{{.}}">SVG</a>){{end}}{{with .Caption}}: {{.}}{{end}}</figcaption></figure>
{{else}}<p class="muted">No figures.</p>{{end}}

{{with .SummaryHTML}}<h2 id="summary">Summary <span class="muted">({{$.Summary}})</span></h2>
<div class="markdown">{{.}}</div>
{{end}}
<h2>Files</h2>
<table id="files"><thead><tr><th>file</th><th>size</th></tr></thead><tbody>
{{range .Files}}<tr><td><a href="{{.Href}}">{{.Name}}</a></td><td class="num">{{size .Bytes}}</td></tr>
{{end}}</tbody></table>
{{if .Outputs}}<details><summary>trial outputs ({{len .Outputs}} files; copies of those up to 2 MiB are in outputs/)</summary>
<table id="outputs"><thead><tr><th>trial</th><th>stage</th><th>file</th><th>size</th><th>sha256</th></tr></thead><tbody>
{{range .Outputs}}{{$o := .}}<tr><td>{{if .Trial}}{{.Trial}}{{else}}<span class="muted">(shared)</span>{{end}}</td><td>{{.Stage}}</td><td>{{with $.Rel .Path}}<a href="{{.}}">{{$o.File}}</a>{{else}}{{.File}} <span class="muted">(not copied: too large; in the cache)</span>{{end}}</td><td class="num">{{size .Bytes}}</td><td><code>{{short .SHA256}}</code></td></tr>
{{end}}</tbody></table></details>{{end}}

<h2>Environment</h2>
<dl id="env">
<dt>go</dt><dd>{{.Run.GoVersion}} {{.Run.OS}}/{{.Run.Arch}}</dd>
<dt>cpu</dt><dd>{{.Run.CPUModel}} (GOMAXPROCS {{.Run.GOMAXPROCS}})</dd>
<dt>host</dt><dd>{{.Run.Host}} (pid {{.Run.PID}})</dd>
{{range .Env}}<dt>{{.Key}}</dt><dd><code>{{.Value}}</code></dd>
{{end}}</dl>
<script>` + sortScript + `</script>
</body>
</html>
`))

var indexTmpl = template.Must(template.New("index").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>runs</title>
<style>` + style + `</style>
</head>
<body>
<h1>Runs</h1>
<form id="filters" onsubmit="return false">
<label>experiment <select id="f-experiment"><option value="">all</option>{{range experiments .}}<option>{{.}}</option>{{end}}</select></label>
<label>status <select id="f-status"><option value="">all</option>{{range statuses .}}<option>{{.}}</option>{{end}}</select></label>
<label>tag <select id="f-tag"><option value="">all</option>{{range tagList .}}<option>{{.}}</option>{{end}}</select></label>
<label>text <input id="f-text" type="search" placeholder="note, tag, metric, variant"></label>
<span id="f-count" class="muted"></span>
</form>
<table id="runs" class="sortable"><thead><tr><th>run</th><th>experiment</th><th>kind</th><th>status</th><th>started</th><th>duration</th><th>trials</th><th>headline metrics (best over seeds)</th><th>commit</th><th>note</th><th>tags</th></tr></thead><tbody>
{{range .}}<tr class="{{.Run.Status}}" data-experiment="{{.Run.Experiment}}" data-status="{{.Run.Status}}" data-tags="{{range $k, $v := .Run.Tags}}|{{$k}}={{$v}}{{end}}|"><td class="num" data-v="{{.Run.ID}}">{{if .Href}}<a href="{{.Href}}">{{.Run.ID}}</a>{{else}}{{.Run.ID}}{{end}}</td>
<td>{{.Run.Experiment}}</td><td>{{.Run.Kind}}</td><td>{{.Run.Status}}</td><td>{{time .Run.Started}}</td><td>{{runDur .Run}}</td>
<td>{{.Run.Trials}}{{with counts .Run.Counts}} <span class="muted">({{.}})</span>{{end}}</td>
<td class="headline">{{range .Best}}<div><code>{{.Metric}}</code> {{stat .Cell.Mean}}{{if .Cell.Never}} <span class="never">({{.Cell.Never}}/{{.Cell.N}} never)</span>{{end}} <span class="muted">{{.Label}}, n={{.Cell.N}}</span></div>{{end}}</td>
<td><code>{{short .Run.GitCommit}}{{if .Run.GitDirty}}+{{end}}</code></td><td>{{.Run.Note}}</td><td>{{tags .Run.Tags}}</td></tr>
{{else}}<tr><td colspan="11" class="muted">no runs</td></tr>
{{end}}</tbody></table>
<script>` + sortScript + filterScript + `</script>
</body>
</html>
`))
