package serve

import (
	"html/template"

	"goldstone/internal/safetext"
)

// pages are the templates. html/template escapes every value for where it
// goes; t (safetext.Escape) also writes control characters, bidirectional
// controls and invalid UTF-8 from the database as visible Go escapes.
var pages = template.Must(template.New("").Funcs(template.FuncMap{"t": safetext.Escape}).Parse(`
{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.}}</title>
<link rel="stylesheet" href="/static/style.css"></head><body>
<p><a href="/">runs</a></p>{{end}}
{{define "foot"}}<p id="poll-error"></p><script src="/static/live.js"></script></body></html>{{end}}

{{define "runs"}}{{template "head" "goldstone runs"}}
<h1>Runs</h1>
{{with .Index}}<p><a href="{{.}}">static reports index</a></p>{{end}}
{{template "runs-live" .}}
{{template "foot"}}{{end}}

{{define "runs-live"}}<div id="live" data-src="/live/runs" data-live="{{if .Live}}yes{{else}}no{{end}}" data-every="{{.Every}}">
<table id="runs"><thead><tr><th>run</th><th>experiment</th><th>kind</th><th>status</th><th>owner</th><th>trials</th><th>by status</th><th>started</th><th>duration</th><th>note</th><th>report</th></tr></thead><tbody>
{{range .Runs}}<tr data-run="{{.ID}}" data-status="{{.Status}}"><td><a href="/run/{{.ID}}">{{.ID}}</a></td><td>{{t .Experiment}}</td><td>{{t .Kind}}</td><td class="{{.Status}}">{{t .Status}}</td><td>{{t .Owner}}</td><td class="num">{{.Trials}}</td><td>{{.CountText}}</td><td>{{.Started}}</td><td>{{.Duration}}</td><td>{{t .Note}}</td><td>{{with .Report}}<a href="{{.}}">report</a>{{end}}</td></tr>
{{else}}<tr><td colspan="11">no runs yet</td></tr>{{end}}
</tbody></table></div>{{end}}

{{define "run"}}{{template "head" (printf "run %d" .Run.ID)}}
<h1>Run {{.Run.ID}}: {{t .Run.Experiment}}</h1>
{{template "run-live" .}}
{{with .Compare}}<form action="/compare" method="get"><input type="hidden" name="a" value="{{$.Run.ID}}">
compare with <select name="b">{{range .}}<option value="{{.ID}}">run {{.ID}} ({{t .Status}}, {{.Started}})</option>{{end}}</select>
<button type="submit">compare</button></form>{{end}}
{{template "foot"}}{{end}}

{{define "run-live"}}<div id="live" data-src="/run/{{.Run.ID}}/live" data-live="{{if .Live}}yes{{else}}no{{end}}" data-every="{{.Every}}">
{{template "run-summary" .Run}}
<h2>Trials</h2>
<table id="trials"><thead><tr><th>#</th><th>trial</th><th>status</th><th>step</th>{{range .Headlines}}<th>{{t .}}</th>{{end}}<th>error</th></tr></thead><tbody>
{{range .Trials}}<tr data-trial="{{.ID}}" data-status="{{.Status}}"><td class="num">{{.Seq}}</td><td>{{t .Name}}</td><td class="{{.Status}}">{{t .Status}}</td><td class="num">{{with .Step}}{{.}}{{else}}—{{end}}</td>{{range .Metrics}}<td class="num">{{.}}</td>{{end}}<td>{{t .Error}}</td></tr>
{{end}}</tbody></table>
{{template "aggregates" .Aggregates}}
{{with .Curves}}<h2>Curves</h2><div class="curves">{{range .}}{{template "curve" .}}{{end}}</div>{{end}}
</div>{{end}}

{{define "run-summary"}}<p id="run-status" data-status="{{.Status}}">status <b class="{{.Status}}">{{t .Status}}</b>{{with .Owner}}, owner {{t .}}{{end}};
{{.Trials}} trials{{with .CountText}}: {{.}}{{end}}; started {{.Started}}, {{.Duration}}{{with .Report}}; <a href="{{.}}">static report</a>{{end}}</p>
{{with .Note}}<p>note: {{t .}}</p>{{end}}{{end}}

{{define "aggregates"}}{{with .}}<h2>Over seeds</h2>
<table class="aggregates"><thead><tr><th>metric</th><th>variant</th><th>settings</th><th>n</th><th>mean</th><th>sd</th><th>95% interval</th><th>median</th></tr></thead><tbody>
{{range .}}<tr><td>{{t .Metric}}</td><td>{{t .Variant}}{{if .Best}} ★{{end}}</td><td>{{t .Settings}}</td><td class="num">{{.N}}</td><td class="num">{{.Mean}}</td><td class="num">{{.SD}}</td><td class="num">{{.Interval}}</td><td class="num">{{.Median}}</td></tr>
{{end}}</tbody></table>{{end}}{{end}}

{{define "curve"}}<figure><svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" role="img" aria-label="{{t .Name}}">
<text x="50" y="{{.Height}}" font-size="10" dy="-5">{{.XMin}}</text><text x="{{.Width}}" y="{{.Height}}" font-size="10" dy="-5" dx="-10" text-anchor="end">{{.XMax}}</text>
<text x="45" y="15" font-size="10" text-anchor="end">{{.YMax}}</text><text x="45" y="195" font-size="10" text-anchor="end">{{.YMin}}</text>
{{range .Lines}}<polyline fill="none" stroke="{{.Color}}" stroke-width="1.2" points="{{.Points}}"><title>{{t .Trial}}</title></polyline>{{end}}
</svg><figcaption>{{t .Name}} by step{{if .Missing}} ({{.Missing}} trials without it yet){{end}}{{if .NonFiniteSkips}} ({{.NonFiniteSkips}} non-finite points not drawn){{end}}</figcaption></figure>{{end}}

{{define "compare"}}{{template "head" (printf "runs %d and %d" .A.Run.ID .B.Run.ID)}}
<h1>Run {{.A.Run.ID}} and run {{.B.Run.ID}}</h1>
<h2>Settings that differ</h2>
<table id="settings"><thead><tr><th>setting</th><th>run {{.A.Run.ID}}</th><th>run {{.B.Run.ID}}</th></tr></thead><tbody>
{{range .Settings}}<tr><td>{{t .Key}}</td><td>{{t .A}}</td><td>{{t .B}}</td></tr>{{else}}<tr><td colspan="3">none</td></tr>{{end}}
</tbody></table>
<h2><a href="/run/{{.A.Run.ID}}">Run {{.A.Run.ID}}</a></h2>{{template "run-summary" .A.Run}}{{template "aggregates" .A.Aggregates}}
<h2><a href="/run/{{.B.Run.ID}}">Run {{.B.Run.ID}}</a></h2>{{template "run-summary" .B.Run}}{{template "aggregates" .B.Aggregates}}
</body></html>{{end}}
`))
