package main

// End-to-end tests of issue 21, "what a researcher sees": one meaning of
// "never", aggregates over seeds, runs compared on one plot, figures with
// captions, help that helps, self-contained reports, progress.

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestNeverIsOneValue: a threshold never reached is +Inf in every output
// (runs.Never): SQLite (sorts last, avg() is Inf instead of skipping it),
// Parquet, CSV ("inf"), JSON ("+Inf"), diff and summary.md ("never");
// latest_finished skips a run still running; trials taken whole from the
// cache have a start time.
func TestNeverIsOneValue(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "run", "--experiment", "small", "--quiet")
	db := e.db()
	var never, nulls int
	db.QueryRow(`SELECT count(*) FROM summary WHERE run_id = 1 AND metric = 'steps_to_excess_1' AND value = 9e999`).Scan(&never)
	db.QueryRow(`SELECT count(*) FROM summary WHERE run_id = 1 AND metric LIKE 'steps_to_%' AND value IS NULL`).Scan(&nulls)
	if never == 0 || never == 6 || nulls != 0 {
		t.Fatalf("steps_to_excess_1: %d trials at 9e999 (want some, not all), %d steps_to_* NULL (want none)", never, nulls)
	}
	var avg, fastest float64
	if err := db.QueryRow(`SELECT avg(value), min(value) FROM summary WHERE run_id = 1 AND metric = 'steps_to_excess_1'`).Scan(&avg, &fastest); err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(avg, 1) || math.IsInf(fastest, 0) {
		t.Errorf("avg %v (want +Inf: a censored mean is not a number), min %v (want the fastest trial)", avg, fastest)
	}
	var last float64
	db.QueryRow(`SELECT steps_to_excess_1 FROM trials WHERE run_id = 1 ORDER BY steps_to_excess_1 DESC LIMIT 1`).Scan(&last)
	if !math.IsInf(last, 1) {
		t.Errorf("the wide view's column: the slowest is %v, want +Inf", last)
	}

	recs, err := csv.NewReader(strings.NewReader(e.mustRun(0, "results", "--run", "1", "--format", "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if c := strings.Count(csvColumn(t, recs, "steps_to_excess_1"), "inf"); c != never {
		t.Errorf("CSV: %d 'inf' in steps_to_excess_1, want %d", c, never)
	}
	if js := e.mustRun(0, "results", "--run", "1", "--format", "json"); strings.Count(js, `"steps_to_excess_1": "+Inf"`) != never {
		t.Errorf("JSON: want %d \"+Inf\" steps_to_excess_1:\n%s", never, js)
	}
	md, err := os.ReadFile(filepath.Join(e.dir, "reports", "small", "run-1", "summary.md"))
	if err != nil || !strings.Contains(string(md), "| never |") || strings.Contains(string(md), "null") {
		t.Errorf("summary.md: want never, not null: %v\n%s", err, md)
	}
	if tbl := e.mustRun(0, "results", "--run", "1"); !strings.Contains(tbl, "never") || strings.Contains(tbl, "null") {
		t.Errorf("results table: want never, not null:\n%s", tbl)
	}

	// Parquet keeps +Inf.
	exp := filepath.Join(e.dir, "exp")
	e.mustRun(0, "export", "--run", "1", "--out", exp)
	type sumRow struct {
		Metric string  `parquet:"metric"`
		Value  float64 `parquet:"value"`
	}
	rows, err := parquet.ReadFile[sumRow](filepath.Join(exp, "summaries.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	inf := 0
	for _, r := range rows {
		if r.Metric == "steps_to_excess_1" && math.IsInf(r.Value, 1) {
			inf++
		}
	}
	if inf != never {
		t.Errorf("summaries.parquet: %d +Inf steps_to_excess_1, want %d", inf, never)
	}

	// A second run reuses the cache for seeds 1 and 2: those trials start too.
	e.mustRun(0, "run", "--experiment", "small", "--set", "seed=1,2,3", "--quiet")
	var unstarted int
	db.QueryRow(`SELECT count(*) FROM trials WHERE run_id = 2 AND (started_at IS NULL OR ended_at < started_at)`).Scan(&unstarted)
	if unstarted != 0 {
		t.Errorf("%d trials of run 2 (4 of them cached) without a start time before their end", unstarted)
	}
	diff := e.mustRun(0, "diff", "1", "2", "--all")
	if !strings.Contains(diff, "never") || strings.Contains(diff, "+Inf") || strings.Contains(diff, "NaN") {
		t.Errorf("diff: want never (and no delta to it):\n%s", diff)
	}
	if js := e.mustRun(0, "diff", "1", "2", "--format", "json"); !strings.Contains(js, `"a": "+Inf"`) {
		t.Errorf("diff JSON: never must be \"+Inf\":\n%s", js)
	}

	// While run 2 is (again) running, latest is run 2 and latest_finished run 1.
	if _, err := db.Exec(`UPDATE runs SET status = 'running' WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	var latest, finished int64
	db.QueryRow(`SELECT run_id FROM latest WHERE experiment = 'small'`).Scan(&latest)
	db.QueryRow(`SELECT run_id FROM latest_finished WHERE experiment = 'small'`).Scan(&finished)
	if latest != 2 || finished != 1 {
		t.Errorf("latest %d (want 2), latest_finished %d (want 1)", latest, finished)
	}
}

// csvColumn returns the fields of a column of recs (header first), joined by
// spaces.
func csvColumn(t *testing.T, recs [][]string, name string) string {
	t.Helper()
	for i, h := range recs[0] {
		if h == name {
			var out []string
			for _, r := range recs[1:] {
				out = append(out, r[i])
			}
			return strings.Join(out, " ")
		}
	}
	t.Fatalf("no column %q in %v", name, recs[0])
	return ""
}

// TestCompareRuns: runner compare A B writes a page with the runs' series
// overlaid (one figure per series, PNG and SVG, with a caption), their
// headline aggregates side by side and the diff; bad ids and metrics are
// usage errors that say what there is.
func TestCompareRuns(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "run", "--experiment", "small", "--quiet", "--note", "baseline")
	e.mustRun(0, "run", "--experiment", "small", "--set", "lr=0.5", "--quiet")
	out := e.mustRun(0, "compare", "1", "2", "--metric", "psi", "--metric", "excess")
	dir := filepath.Join(e.dir, "reports", "compare", "run-1-vs-2")
	for _, want := range []string{"run 1: small, finished, 6 trials: baseline", "run 1 vs run 2: 1 settings differ", "2 series overlaid",
		"compare page: " + filepath.Join("reports", "compare", "run-1-vs-2", "index.html")} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"compare-psi.png", "compare-psi.svg", "compare-excess.png", "compare-excess.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<img src="compare-psi.png"`, "psi against the training step", "colour = run and variant",
		`data-metric="steps_to_excess_1"`, "<h3>run 1 vs run 2</h3>", "<td><code>settings.lr</code></td>",
		// lr is fixed in each run but differs: its column says how the rows differ
		"<th>lr</th>", `<td class="num" data-v="2">2</td><td>goldstone</td><td>0.5</td>`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("compare page lacks %q", want)
		}
	}
	// By default every series the runs share, but not the sparse event counts.
	out = e.mustRun(0, "compare", "2", "1", "--out", filepath.Join(e.dir, "cmp"))
	if !strings.Contains(out, "series overlaid") {
		t.Errorf("compare: %s", out)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "cmp", "compare-loss.png")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "cmp", "compare-gauge_rejected.png")); err == nil {
		t.Error("the sparse gauge_rejected events are overlaid")
	}
	// gc --dry-run alone: what each --keep-last would free, nothing deleted.
	out = e.mustRun(0, "gc", "--dry-run")
	for _, want := range []string{"--keep-last 0:\n  would delete 2 runs: 1 (small), 2 (small)", "--keep-last 1:\n  would delete 1 runs: 1 (small)", "--keep-last 2 or more: nothing"} {
		if !strings.Contains(out, want) {
			t.Errorf("gc --dry-run lacks %q:\n%s", want, out)
		}
	}
	if out := e.mustRun(0, "runs"); !strings.Contains(out, "\n1 ") || !strings.Contains(out, "\n2 ") {
		t.Errorf("gc --dry-run deleted runs:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "1"}, "want RUN_A RUN_B [RUN_C...]"},
		{[]string{"compare", "1", "9"}, "no run 9"},
		{[]string{"compare", "1", "1"}, "run 1 given twice"},
		{[]string{"compare", "1", "2", "--metric", "exces"}, `did you mean excess?`},
	} {
		_, errs, code := e.run(c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, errs)
		}
	}
}

// TestFailedIngestLeavesNoRunFolder (issue 21, item 7): a run whose data
// stage fails (a line truncated past the rows plan checks) leaves no report
// folder behind: no page of a run that has nothing to show.
func TestFailedIngestLeavesNoRunFolder(t *testing.T) {
	ratings := filepath.Join(t.TempDir(), "ratings.csv")
	lines := bytes.SplitAfter(syntheticRatings(10000), []byte("\n"))
	bad := bytes.Join(lines[:7999], nil)
	bad = append(bad, lines[7999][:4]...)
	bad = append(bad, '\n')
	bad = append(bad, bytes.Join(lines[8000:], nil)...)
	if err := os.WriteFile(ratings, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	e := mlDataEnv(t, ratings)
	_, errs, code := e.run("--experiment", "mlbad", "--quiet")
	if code != 2 || !strings.Contains(errs, ratings+":8000") {
		t.Fatalf("truncated line: exit %d, want 2 naming %s:8000\n%s", code, ratings, errs)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "reports", "mlbad")); err == nil {
		ents, _ := os.ReadDir(filepath.Join(e.dir, "reports", "mlbad"))
		t.Errorf("a failed ingest left a report folder: %v", ents)
	}
}

// TestReportsFolderIsSelfContained (issue 21, item 7): after a run, the
// reports folder copied elsewhere with the workdir removed has every file
// its pages link (logs and small outputs copied in), and the page shows
// summary.md rendered.
func TestReportsFolderIsSelfContained(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "run", "--experiment", "small", "--set", "lr=0.5,1", "--set", "steps=60", "--set", "snapshots=0,60", "--quiet")
	copyDir := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.CopyFS(copyDir, os.DirFS(filepath.Join(e.dir, "reports"))); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(e.dir, "work")); err != nil {
		t.Fatal(err)
	}
	linkRe := regexp.MustCompile(`(?:href|src)="([^"#]*)"`)
	page := filepath.Join(copyDir, "small", "run-1", "index.html")
	for _, f := range []string{page, filepath.Join(copyDir, "index.html")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRe.FindAllStringSubmatch(string(b), -1) {
			target := filepath.Join(filepath.Dir(f), filepath.FromSlash(m[1]))
			if r, err := filepath.Rel(copyDir, target); err != nil || strings.HasPrefix(r, "..") {
				t.Errorf("%s links %s, outside the reports folder", f, m[1])
			} else if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links %s, missing in the copy", f, m[1])
			}
		}
	}
	b, _ := os.ReadFile(page)
	for _, want := range []string{`href="logs/`, `href="outputs/`, `<h2 id="summary">Summary`, "<h2>Paper figures</h2>"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
