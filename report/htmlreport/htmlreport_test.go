package htmlreport

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"goldstone/report/figures"
	"goldstone/runs"
)

// fixture records a run with three trials (one failed, with a log file),
// outputs, a figure, a Markdown summary and a data file, and returns the
// store, run id and report directory.
func fixture(t *testing.T) (*runs.Store, int64, string) {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	st, err := runs.Open(ctx, filepath.Join(root, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := `{"name":"demo","pipeline":"artificial","settings":{"lr":0.5,"steps":100},"variants":[{"name":"gd","settings":{}},{"name":"goldstone","settings":{"gauge":"goldstone"}}],"grid":[{"key":"seed","values":[1,2]}]}`
	id, err := st.CreateRun(ctx, runs.RunInfo{Experiment: "demo", ConfigJSON: cfg, ConfigHash: "abc", GitCommit: "0123456789abcdef", GitDirty: true,
		GoVersion: "go1.26", OS: "linux", Arch: "amd64", Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(root, "logs")
	os.MkdirAll(logDir, 0o755)
	for i, name := range []string{"goldstone seed=2", "gd seed=1", "gd seed=2"} {
		variant, seed, _ := strings.Cut(name, " seed=")
		tid := fmt.Sprintf("t%d", 9-i)
		tr := runs.Trial{RunID: id, ID: tid, Status: runs.StatusDone, Params: map[string]string{
			"name": `"` + name + `"`, "variant": `"` + variant + `"`, "seed": seed, "lr": "0.5"}}
		if i == 2 {
			tr.Status, tr.Error = runs.StatusFailed, "train: loss is NaN at step 17 <script>alert(1)</script>"
		}
		if err := st.UpsertTrial(ctx, tr); err != nil {
			t.Fatal(err)
		}
		lp := filepath.Join(logDir, tid+".log")
		os.WriteFile(lp, []byte("step 1 loss 3\n"), 0o644)
		if err := st.SetTrialLog(ctx, id, tid, lp); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			st.Summary(id, tid, "test_ll", []float64{-1.25, -10.5}[i])
			st.Summary(id, tid, "gap", math.NaN())
			st.Summary(id, tid, "steps_to_x", []float64{runs.Never, 40}[i])
		}
	}
	os.MkdirAll(filepath.Join(root, "work/cache/train/k/result"), 0o755)
	os.WriteFile(filepath.Join(root, "work/cache/train/k/result/summary.json"), []byte(`{"a": 1}`+"\n"), 0o644)
	if err := st.RecordOutputs(ctx, []runs.Output{{RunID: id, Trial: "t9", Stage: "train", CacheDir: filepath.Join(root, "work/cache/train/k"), File: "result/summary.json", SHA256: "ff00", Bytes: 9},
		{RunID: id, Trial: "t9", Stage: "train", CacheDir: filepath.Join(root, "work/cache/train/k"), File: "model/params.npy", SHA256: "ee00", Bytes: 3 << 20}}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetTags(ctx, id, map[string]string{"goal": "demo"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetNote(ctx, id, "first & <best>"); err != nil {
		t.Fatal(err)
	}
	// A second run, of another experiment, for the index's filters.
	other, err := st.CreateRun(ctx, runs.RunInfo{Experiment: "other", ConfigJSON: `{"name":"other","pipeline":"artificial"}`, Started: time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetTags(ctx, other, map[string]string{"goal": "other"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "reports", "demo", fmt.Sprintf("run-%d", id))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"curves.png", "sweep.png"} {
		if err := figures.Curves(filepath.Join(dir, name), figures.CurveSpec{Panels: []figures.Panel{{Title: name, Series: []figures.Series{
			{Name: "gd", X: []float64{1, 2, 3}, Y: []float64{3, 2, 1}}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := figures.AddCaptions(dir, map[string]string{"curves.png": "Curves of the demo <run>."}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "summary.md"), []byte("<!-- goldstone run header -->\n\n# demo, run 1 (the header)\n\n<!-- goldstone run header -->\n# demo\n\n| trial | test_ll |\n|---|---|\n| gd | -1.25 |\n\n<script>alert(1)</script>\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "trials.csv"), []byte("a,b\n"), 0o644)
	return st, id, dir
}

func writeFixture(t *testing.T) (string, string) {
	t.Helper()
	st, id, dir := fixture(t)
	ctx := context.Background()
	p, err := Build(ctx, st, id, dir, Options{Defaults: map[string]string{"settings.lr": "0.1", "settings.steps": "100"},
		Env: []KV{{"command", "runner run demo"}}, Headline: testHeadline("artificial")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Localize(ctx, dir, p, MaxLocalOutput); err != nil {
		t.Fatal(err)
	}
	page, err := Write(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteIndex(ctx, st, filepath.Join(dir, "..", ".."), testHeadline); err != nil {
		t.Fatal(err)
	}
	return page, filepath.Join(dir, "..", "..", "index.html")
}

// testHeadline stands in for stages.Headline.
func testHeadline(pipeline string) []runs.Headline {
	if pipeline != "artificial" {
		return nil
	}
	return []runs.Headline{{Metric: "test_ll"}, {Metric: "steps_to_x", Lower: true}, {Metric: "absent"}}
}

func TestPageContent(t *testing.T) {
	page, index := writeFixture(t)
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{
		"demo · run 1",
		`<td><code>settings.lr</code></td><td><code>0.5</code></td><td><code>0.1</code></td>`, // diff from the defaults
		`<img src="curves.png"`, `<img src="sweep.png"`,
		`<a href="summary.md">summary.md</a>`, `<a href="trials.csv">trials.csv</a>`,
		`href="logs/t7.log"`,                          // trial log, copied into the report
		`href="outputs/t9/train/result/summary.json"`, // a small output, copied
		`params.npy <span class="muted">(not copied: too large; in the cache)</span>`,
		// summary.md rendered, without its run header, raw HTML not passed
		`<h2 id="summary">Summary`, "<h1>demo</h1>", "<td>-1.25</td>",
		"loss is NaN at step 17 &lt;script&gt;", // failed trial, escaped
		"first &amp; &lt;best&gt;", "goal=demo", "0123456789abcdef (dirty)", "runner run demo",
		`data-v="-1.25"`, `<td class="num" data-v="">NaN</td>`,
		// aggregates over seeds: one table per headline metric the run has,
		// the best cell marked, a never counted as such
		`<h2 id="aggregates">Aggregates over seeds</h2>`, `<table class="aggregate sortable" data-metric="test_ll">`,
		`<tr class="best"><td>goldstone</td>`, `<tr class="best"><td>gd</td>`, `<td class="num never" data-v="1">1</td>`,
		`>never</td>`,
		// captions, and the SVG twin linked from its figure, not shown twice
		`<figcaption><b>curves.png</b> (<a href="curves.svg">SVG</a>): Curves of the demo &lt;run&gt;.</figcaption>`,
		`<figcaption><b>sweep.png</b> (<a href="sweep.svg">SVG</a>)</figcaption>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(html, "(the header)") || strings.Contains(html, "<script>alert(1)") || strings.Contains(html, `href="../../../`) {
		t.Error("the rendered summary shows its run header, passes raw HTML through, or a link leads out of the reports folder")
	}
	if strings.Contains(html, "<th>lr</th>") || !strings.Contains(html, "<th>seed</th>") || !strings.Contains(html, "<th>variant</th>") {
		t.Error("trials table: want the variant and the varying settings (seed) as columns, not the constant lr")
	}
	if strings.Contains(html, "<td><code>pipeline</code></td><td><code>&#34;artificial&#34;</code></td><td>") {
		t.Error("the pipeline name is listed as a difference from the defaults")
	}
	if strings.Contains(html, "settings.steps</code></td><td><code>100</code></td><td>") {
		t.Error("an unchanged setting is listed as a difference")
	}
	// enumeration order: goldstone seed=2 first
	if i, j := strings.Index(html, ">goldstone seed=2<"), strings.Index(html, ">gd seed=1<"); i < 0 || j < 0 || i > j {
		t.Errorf("trials not in enumeration order (%d, %d)", i, j)
	}
	ib, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ib), `<a href="demo/run-1/index.html">1</a>`) {
		t.Errorf("index lacks the link to run 1:\n%s", ib)
	}
	for _, want := range []string{`<code>test_ll</code> -1.25 <span class="muted">goldstone, n=1</span>`, `data-tags="|goal=demo|"`,
		`<option>goal=other</option>`, `<option>other</option>`, "first &amp; &lt;best&gt;"} {
		if !strings.Contains(string(ib), want) {
			t.Errorf("index lacks %q", want)
		}
	}
	if strings.Contains(string(ib), "absent") {
		t.Error("index shows a headline metric the run does not have")
	}
}

// chromium returns the path of a Chromium binary or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not installed (apt-get install -y chromium; .ci/run installs it): the HTML report is not checked in a browser")
	return ""
}

// headless runs Chromium on a file URL and returns the DOM after load and
// Chromium's log (console messages included).
func headless(t *testing.T, bin, path string, extra ...string) (dom, log string) {
	t.Helper()
	profile := t.TempDir()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + profile,
		"--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000", "--dump-dom"}, extra...)
	args = append(args, "file://"+path)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
	}
	return string(out), stderr.String()
}

// checker is put at the start of <head> of a copy of the page: it records
// script errors and console errors from the start, and after the load event
// writes into the DOM whether every image loaded and whether clicking a
// column header of the trials table sorts it.
const checker = `<script>
window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push("error: " + (e.message || (e.target && (e.target.src || e.target.href)))); }, true);
(function () { var ce = console.error; console.error = function () { window.__errors.push("console: " + Array.prototype.join.call(arguments, " ")); ce.apply(console, arguments); }; })();
window.addEventListener("load", function () {
  var bad = [], imgs = document.images;
  for (var i = 0; i < imgs.length; i++) { if (!imgs[i].complete || imgs[i].naturalWidth === 0) bad.push(imgs[i].getAttribute("src")); }
  var sorted = "none";
  var table = document.getElementById("trials");
  if (table) {
    var heads = table.tHead.rows[0].cells, col = -1;
    for (var j = 0; j < heads.length; j++) { if (heads[j].textContent.trim() === "test_ll") col = j; }
    heads[col].click();
    var vals = [];
    for (var r = 0; r < table.tBodies[0].rows.length; r++) { vals.push(table.tBodies[0].rows[r].cells[col].textContent.trim()); }
    sorted = vals.join("|");
  }
  var aggs = document.querySelectorAll("table.aggregate"), best = [];
  document.querySelectorAll("table.aggregate tr.best").forEach(function (r) { best.push(r.cells[0].textContent.trim()); });
  var filtered = "none";
  if (document.getElementById("f-tag")) {
    var sel = document.getElementById("f-tag");
    sel.value = "goal=other";
    sel.dispatchEvent(new Event("change"));
    var vis = [];
    var rows = document.getElementById("runs").tBodies[0].rows;
    for (var k = 0; k < rows.length; k++) { if (rows[k].style.display !== "none") vis.push(rows[k].cells[1].textContent.trim()); }
    filtered = vis.join("|") + " (" + document.getElementById("f-count").textContent + ")";
  }
  var out = document.createElement("pre");
  out.id = "__check";
  out.textContent = "images=" + imgs.length + " bad=" + JSON.stringify(bad) + " errors=" + JSON.stringify(window.__errors) + " sorted=" + sorted +
    " aggregates=" + aggs.length + " best=" + best.join("|") + " filtered=" + filtered +
    " captions=" + Array.prototype.filter.call(document.querySelectorAll("figcaption"), function (c) { return c.textContent.indexOf("): ") > 0; }).length +
    " svg=" + document.querySelectorAll("figcaption a[href$='.svg']").length;
  document.body.appendChild(out);
});
</script>`

var checkRe = regexp.MustCompile(`<pre id="__check">(.*?)</pre>`)

func TestPageInChromium(t *testing.T) {
	bin := chromium(t)
	page, index := writeFixture(t)

	// The page as written: Chromium logs console messages and uncaught
	// errors to stderr.
	_, log := headless(t, bin, page)
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Uncaught") {
			t.Errorf("console: %s", line)
		}
	}

	// A copy with the checker, in the same directory so links resolve alike.
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(filepath.Dir(page), ".probe.html")
	if err := os.WriteFile(probe, []byte(strings.Replace(string(b), "<head>", "<head>"+checker, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(probe)
	dom, log := headless(t, bin, probe)
	m := checkRe.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the check did not run; chromium log:\n%s", log)
	}
	res := strings.ReplaceAll(m[1], "&quot;", `"`)
	t.Logf("chromium: %s", res)
	// ascending by test_ll: -10.5, -1.25, then the failed trial (no value)
	if want := `images=2 bad=[] errors=[] sorted=-10.5|-1.25| aggregates=2 best=goldstone|gd filtered=none captions=1 svg=2`; res != want {
		t.Errorf("chromium check = %s\nwant %s", res, want)
	}

	_, log = headless(t, bin, index)
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Uncaught") {
			t.Errorf("index console: %s", line)
		}
	}
	// The index's filters: choosing the tag goal=other leaves run 2 only.
	ib, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	iprobe := filepath.Join(filepath.Dir(index), ".probe-index.html")
	if err := os.WriteFile(iprobe, []byte(strings.Replace(string(ib), "<head>", "<head>"+checker, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(iprobe)
	dom, log = headless(t, bin, iprobe)
	if m = checkRe.FindStringSubmatch(dom); m == nil {
		t.Fatalf("the index check did not run; chromium log:\n%s", log)
	}
	res = strings.ReplaceAll(m[1], "&quot;", `"`)
	if want := `errors=[] sorted=none aggregates=0 best= filtered=other (1 of 2 runs) captions=0 svg=0`; !strings.HasSuffix(res, want) {
		t.Errorf("index check = %s\nwant ...%s", res, want)
	}
}

// TestComparePageInChromium: the page of `runner compare` loads with no
// console error, its overlay figures load, the headline aggregates of the
// runs side by side mark one best row, and the diff is embedded.
func TestComparePageInChromium(t *testing.T) {
	st, id, dir := fixture(t)
	ctx := context.Background()
	id2, err := st.CreateRun(ctx, runs.RunInfo{Experiment: "demo", ConfigJSON: `{"name":"demo","pipeline":"artificial","settings":{"lr":0.1}}`, Started: time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.UpsertTrial(ctx, runs.Trial{RunID: id2, ID: "t9", Status: runs.StatusDone, Params: map[string]string{"name": `"goldstone seed=2"`, "variant": `"goldstone"`, "seed": "2"}}); err != nil {
		t.Fatal(err)
	}
	st.Summary(id2, "t9", "test_ll", -0.5)
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := st.ListRuns(ctx, runs.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	page := &ComparePage{}
	var per [][]runs.Aggregate
	for _, want := range []int64{id, id2} {
		for _, l := range list {
			if l.ID == want {
				page.Runs = append(page.Runs, l)
			}
		}
		tt, err := st.TrialTable(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		per = append(per, runs.Aggregates(tt, testHeadline("artificial")))
	}
	page.Aggregates = CompareAggregates([]int64{id, id2}, per, nil)
	d, err := st.Diff(ctx, id, id2)
	if err != nil {
		t.Fatal(err)
	}
	page.Diffs = []CompareDiff{NewCompareDiff(d)}
	cdir := filepath.Join(filepath.Dir(filepath.Dir(dir)), "..", "compare", "run-1-vs-3")
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		t.Fatal(err)
	}
	fig := filepath.Join(cdir, "compare-psi.png")
	if err := figures.Curves(fig, figures.CurveSpec{Panels: []figures.Panel{{Title: "psi", Series: []figures.Series{
		{Name: "run 1 gd", X: []float64{1, 2, 3}, Y: []float64{3, 2, 1}}, {Name: "run 3 gd", Style: "run 3", X: []float64{1, 2, 3}, Y: []float64{2, 2, 1}}}}}}); err != nil {
		t.Fatal(err)
	}
	page.Figures = []Figure{{File: "compare-psi.png", SVG: "compare-psi.svg", Caption: "psi of runs 1, 3."}}
	path, err := WriteCompare(cdir, page)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{"Compare runs 1 · 3", `<img src="compare-psi.png"`, `(<a href="compare-psi.svg">SVG</a>): psi of runs 1, 3.`,
		`<h3>run 1 vs run 3</h3>`, "<td><code>settings.lr</code></td><td><code>0.5</code></td><td><code>0.1</code></td>",
		`<tr class="best"><td class="num" data-v="3">3</td><td>goldstone</td>`, `href="../../demo/run-1/index.html"`,
		`<details><summary>2 trials only in run 1</summary><p class="muted">gd seed=1, gd seed=2</p></details>`} {
		if !strings.Contains(html, want) {
			t.Errorf("compare page lacks %q", want)
		}
	}
	bin := chromium(t)
	probe := filepath.Join(cdir, ".probe.html")
	if err := os.WriteFile(probe, []byte(strings.Replace(html, "<head>", "<head>"+checker, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, log := headless(t, bin, probe)
	m := checkRe.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the check did not run; chromium log:\n%s", log)
	}
	res := strings.ReplaceAll(m[1], "&quot;", `"`)
	if want := `images=1 bad=[] errors=[] sorted=none aggregates=2 best=3|1 filtered=none captions=1 svg=1`; res != want {
		t.Errorf("chromium check = %s\nwant %s", res, want)
	}
}

var linkRe = regexp.MustCompile(`(?:href|src)="([^"#]*)"`)

// TestCopiedReportsFolder (issue 21, item 7): a reports folder copied
// elsewhere, with the workdir gone, still works: every link of a run's
// page and of the index leads to a file inside the copy, and the page
// loads in Chromium with every image.
func TestCopiedReportsFolder(t *testing.T) {
	page, index := writeFixture(t)
	reports := filepath.Dir(index)
	root := filepath.Dir(reports)
	copyDir := filepath.Join(t.TempDir(), "copied-reports")
	if err := os.CopyFS(copyDir, os.DirFS(reports)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"work", "logs", "reports"} {
		if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	rel, _ := filepath.Rel(reports, page)
	for _, f := range []string{filepath.Join(copyDir, rel), filepath.Join(copyDir, "index.html")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		links := 0
		for _, m := range linkRe.FindAllStringSubmatch(string(b), -1) {
			if m[1] == "" {
				continue
			}
			target := filepath.Join(filepath.Dir(f), filepath.FromSlash(m[1]))
			if r, err := filepath.Rel(copyDir, target); err != nil || strings.HasPrefix(r, "..") {
				t.Errorf("%s links %s, outside the reports folder", f, m[1])
				continue
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links %s, missing in the copy: %v", f, m[1], err)
			}
			links++
		}
		if links < 1 {
			t.Errorf("%s: only %d links checked", f, links)
		}
	}
	bin := chromium(t)
	copied := filepath.Join(copyDir, rel)
	b, _ := os.ReadFile(copied)
	probe := filepath.Join(filepath.Dir(copied), ".probe.html")
	if err := os.WriteFile(probe, []byte(strings.Replace(string(b), "<head>", "<head>"+checker, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, log := headless(t, bin, probe)
	m := checkRe.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the check did not run; chromium log:\n%s", log)
	}
	if res := strings.ReplaceAll(m[1], "&quot;", `"`); !strings.HasPrefix(res, "images=2 bad=[] errors=[]") {
		t.Errorf("the copied page in chromium: %s", res)
	}
}

// TestCompareDiffWithoutCommonTrials: the diff of runs with no trial in
// common says so instead of an empty table, one whose common trials agree
// says that, and a setting one run lacks reads "-" as in runner diff.
func TestCompareDiffWithoutCommonTrials(t *testing.T) {
	d := &runs.RunDiff{A: runs.RunInfo{ID: 1}, B: runs.RunInfo{ID: 2},
		Settings: []runs.SettingDiff{{Key: "grid.lambda.values", B: "[3,10]"}}, OnlyA: []string{"gd seed=1"}, OnlyB: []string{"gd lambda=3 seed=1"}}
	for _, c := range []struct {
		metrics []runs.MetricDiff
		want    string
	}{
		{nil, `<p class="diff-none">No trial is in both runs`},
		{[]runs.MetricDiff{{Trial: "gd seed=1", Metric: "final_psi", A: 1, B: 1, InA: true, InB: true}}, `<p class="diff-none">Every metric value (1) of the trials in both runs is equal`},
	} {
		d.Metrics = c.metrics
		dir := t.TempDir()
		path, err := WriteCompare(dir, &ComparePage{Diffs: []CompareDiff{NewCompareDiff(d)}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		html := string(b)
		for _, want := range []string{c.want, "<td><code>grid.lambda.values</code></td><td><code>-</code></td><td><code>[3,10]</code></td>",
			`<summary>1 trial only in run 2</summary>`} {
			if !strings.Contains(html, want) {
				t.Errorf("compare page lacks %q", want)
			}
		}
		if strings.Contains(html, `class="diff-metrics`) {
			t.Error("an empty metrics table is drawn")
		}
	}
}

// TestFixedDiffer: the settings every run fixes to values that are not all
// equal, not the seed, the name or the variant (columns of their own or
// what the rows aggregate over), nor a setting one run does not fix.
func TestFixedDiffer(t *testing.T) {
	fixed := []map[string]string{
		{"lr": "1", "steps": "100", "seed": "1", "variant": "gd", "name": "gd seed=1", "dim": "3"},
		{"lr": "0.5", "steps": "100", "seed": "2", "variant": "goldstone", "name": "goldstone seed=2"},
		{"lr": "1", "steps": "200", "seed": "2", "variant": "gd", "name": "gd seed=2", "dim": "5"},
	}
	if got := fixedDiffer(fixed); !reflect.DeepEqual(got, []string{"lr", "steps"}) {
		t.Errorf("fixedDiffer = %v, want [lr steps]", got)
	}
	if got := fixedDiffer(fixed[:1]); got != nil {
		t.Errorf("one run: %v", got)
	}
}

// TestPageDivergedTrials: a diverged trial is a result: its row is marked,
// it is listed with where it diverged, and the aggregates count its
// threshold as never (not leave it out, as a failed trial's).
func TestPageDivergedTrials(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st, err := runs.Open(ctx, filepath.Join(root, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.CreateRun(ctx, runs.RunInfo{Experiment: "demo", ConfigJSON: `{"name":"demo","pipeline":"artificial"}`, ConfigHash: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	for i, status := range []string{runs.StatusDone, runs.StatusDiverged} {
		tid := fmt.Sprintf("t%d", i)
		tr := runs.Trial{RunID: id, ID: tid, Status: status, Params: map[string]string{"name": fmt.Sprintf(`"gd seed=%d"`, i+1), "variant": `"gd"`, "seed": fmt.Sprint(i + 1)}}
		steps := 40.0
		if status == runs.StatusDiverged {
			tr.Error, steps = "diverged at step 912: psi 3.8e+200 past its bound 1.8e+08", runs.Never
		}
		if err := st.UpsertTrial(ctx, tr); err != nil {
			t.Fatal(err)
		}
		st.Summary(id, tid, "steps_to_x", steps)
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "reports", "demo", "run-1")
	os.MkdirAll(dir, 0o755)
	p, err := Build(ctx, st, id, dir, Options{Headline: testHeadline("artificial")})
	if err != nil {
		t.Fatal(err)
	}
	page, err := Write(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{
		"<h2>Diverged trials</h2>", `<tr class="diverged"><td title="t1">gd seed=2</td><td>diverged at step 912: psi 3.8e&#43;200 past its bound 1.8e&#43;08</td></tr>`,
		`<td class="num" data-v="2">2</td><td class="num never" data-v="1">1</td>`, // n = 2, 1 never
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(html, "<h2>Failed trials</h2>") {
		t.Error("a diverged trial is listed as failed")
	}
}
