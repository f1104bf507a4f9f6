package main

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/sweep/batch"

	"github.com/parquet-go/parquet-go"
)

// TestResultsWorkflow runs two runs of one experiment and works with them
// as a user would: runs, notes and tags, results in enumeration order with
// NaN as an empty CSV field, outputs and logs, diff, export, the HTML
// report and gc.
func TestResultsWorkflow(t *testing.T) {
	e := newEnv(t)
	out := e.mustRun(0, "run", "--experiment", "small", "--note", "baseline run", "--tag", "goal=base", "--tag", "owner=h5")
	if !strings.Contains(out, "html report: reports/small/run-1/index.html") {
		t.Errorf("run output lacks the html report:\n%s", out)
	}
	e.mustRun(0, "run", "--experiment", "small", "--set", "lr=0.5", "--tag", "goal=lower-lr")

	// runs: table, filters, json
	out = e.mustRun(0, "runs")
	for _, want := range []string{"RUN  KIND  EXPERIMENT", "baseline run", "goal=base owner=h5", "goal=lower-lr", "6/6"} {
		if !strings.Contains(out, want) {
			t.Errorf("runs lacks %q:\n%s", want, out)
		}
	}
	var rr []runRow
	if err := json.Unmarshal([]byte(e.mustRun(0, "runs", "--format", "json", "--tag", "goal=lower-lr")), &rr); err != nil {
		t.Fatal(err)
	}
	if len(rr) != 1 || rr[0].ID != 2 || rr[0].Trials != 6 || rr[0].TrialCounts["done"] != 6 || rr[0].Note != "" || rr[0].Started == nil || rr[0].Seconds <= 0 {
		t.Errorf("runs --tag goal=lower-lr = %+v", rr)
	}
	if out := e.mustRun(0, "runs", "--experiment", "nope", "--format", "csv"); strings.Count(out, "\n") != 1 {
		t.Errorf("runs of an unknown experiment: %q", out)
	}

	// results: enumeration order (variants in file order, then seeds), NaN empty
	recs, err := csv.NewReader(strings.NewReader(e.mustRun(0, "results", "--run", "2", "--format", "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	col := func(name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %q in %v", name, head)
		return -1
	}
	var names []string
	never := 0
	for _, r := range recs[1:] {
		names = append(names, r[col("name")])
		if r[col("steps_to_excess_1")] == "inf" {
			never++
		}
		for _, f := range r {
			if f == "null" || f == "NaN" {
				t.Errorf("CSV field %q: NaN must be an empty field", f)
			}
		}
	}
	if got := strings.Join(names, ","); got != "gd seed=1,gd seed=2,goldstone seed=1,goldstone seed=2,procrustes seed=1,procrustes seed=2" {
		t.Errorf("results order = %s", got)
	}
	if never == 0 {
		t.Error("no never (inf) steps_to_excess_1 in run 2 (lr=0.5 never reaches excess 1): the test lost its censored case")
	}

	// results json: each trial's outputs and log file
	var res []resultRow
	if err := json.Unmarshal([]byte(e.mustRun(0, "results", "--run", "1", "--format", "json")), &res); err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if len(r.Outputs) == 0 || r.Log == "" {
			t.Fatalf("trial %s: outputs %v, log %q", r.Name, r.Outputs, r.Log)
		}
		for _, o := range r.Outputs {
			if fi, err := os.Stat(o.Path); err != nil || fi.Size() != o.Bytes || len(o.SHA256) != 64 {
				t.Errorf("output %+v: %v", o, err)
			}
		}
		b, err := os.ReadFile(r.Log)
		if err != nil || !strings.Contains(string(b), "started ") || !strings.Contains(string(b), "done ") {
			t.Errorf("log %s: %v\n%s", r.Log, err, b)
		}
	}
	// the wide trials view: best trial per variant in one SELECT
	db := e.db()
	rows, err := db.Query(`SELECT variant, name, max(final_psi), typeof(lr) FROM trials WHERE run_id = 1 GROUP BY variant ORDER BY variant`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var v, name, typ string
		var psi float64
		if err := rows.Scan(&v, &name, &psi, &typ); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, v+" ") || (typ != "real" && typ != "integer") {
			t.Errorf("best of %s: %s (lr is %s)", v, name, typ)
		}
		n++
	}
	rows.Close()
	if n != 3 {
		t.Errorf("%d variants in the trials view, want 3", n)
	}

	// diff
	out = e.mustRun(0, "diff", "1", "2")
	for _, want := range []string{"run 1 (small, finished) vs run 2 (small, finished)", "settings.lr  1      0.5", "gd seed=1", "final_psi"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff lacks %q:\n%s", want, out)
		}
	}
	var dj diffJSON
	if err := json.Unmarshal([]byte(e.mustRun(0, "diff", "--format", "json", "1", "2")), &dj); err != nil {
		t.Fatal(err)
	}
	if len(dj.Settings) != 1 || dj.Settings[0].Key != "settings.lr" || len(dj.Metrics) == 0 || len(dj.OnlyA)+len(dj.OnlyB) != 0 {
		t.Errorf("diff json = %+v", dj)
	}
	if out := e.mustRun(0, "diff", "2", "2"); !strings.Contains(out, "settings: identical") {
		t.Errorf("diff of a run with itself:\n%s", out)
	}

	// export
	exp := filepath.Join(e.dir, "exp")
	e.mustRun(0, "export", "--run", "1", "--out", exp)
	var metricRows int
	db.QueryRow(`SELECT count(*) FROM metrics WHERE run_id = 1`).Scan(&metricRows)
	for name, want := range map[string]int64{"trials.parquet": 6, "series.parquet": int64(metricRows)} {
		f, err := os.Open(filepath.Join(exp, name))
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		pf, err := parquet.OpenFile(f, fi.Size())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if pf.NumRows() != want {
			t.Errorf("%s: %d rows, want %d", name, pf.NumRows(), want)
		}
		f.Close()
	}
	for _, name := range []string{"params.parquet", "summaries.parquet", "outputs.parquet"} {
		if _, err := os.Stat(filepath.Join(exp, name)); err != nil {
			t.Error(err)
		}
	}

	// HTML report and index
	page, err := os.ReadFile(filepath.Join(e.dir, "reports", "small", "run-1", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"small · run 1", `<img src="curves.png"`, "baseline run", `href="summary.md"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report page lacks %q", want)
		}
	}
	md, err := os.ReadFile(filepath.Join(e.dir, "reports", "small", "run-1", "summary.md"))
	if err != nil || !strings.Contains(string(md), "# small, run 1") || !strings.Contains(string(md), "![curves.png](curves.png)") ||
		!strings.Contains(string(md), "- note: baseline run") {
		t.Errorf("summary.md does not name the run and link the figures: %v\n%s", err, md)
	}
	index, err := os.ReadFile(filepath.Join(e.dir, "reports", "index.html"))
	if err != nil || !strings.Contains(string(index), `href="small/run-2/index.html"`) {
		t.Errorf("reports/index.html: %v", err)
	}

	// gc: a dry run changes nothing; keeping the last run deletes run 1,
	// its own cache entries, report and logs, and keeps what run 2 uses.
	// A Slurm run's batch directory goes with its run (a stand-in for
	// each run here: gc knows it by its path only).
	batchDir := func(id int64) string { return string(batch.RunDir(filepath.Join(e.dir, "work"), "small", id)) }
	for _, id := range []int64{1, 2} {
		if err := os.MkdirAll(batchDir(id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(batchDir(id), "manifest.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out = e.mustRun(0, "gc", "--keep-last", "1", "--dry-run")
	if !strings.Contains(out, "would delete 1 runs: 1 (small)") || !strings.Contains(out, "1 Slurm batch directories") {
		t.Errorf("gc --dry-run:\n%s", out)
	}
	var nruns int
	db.QueryRow(`SELECT count(*) FROM runs`).Scan(&nruns)
	if nruns != 2 {
		t.Fatalf("dry run deleted runs: %d left", nruns)
	}
	out = e.mustRun(0, "gc", "--keep-last", "1")
	if !strings.Contains(out, "deleted 1 runs: 1 (small)") || strings.Contains(out, " 0 B freed") {
		t.Errorf("gc:\n%s", out)
	}
	db.QueryRow(`SELECT count(*) FROM runs`).Scan(&nruns)
	if nruns != 1 {
		t.Errorf("%d runs after gc, want 1", nruns)
	}
	for _, r := range res {
		for _, o := range r.Outputs {
			if _, err := os.Stat(o.Path); err == nil {
				var still int
				db.QueryRow(`SELECT count(*) FROM trial_outputs WHERE cache_dir = ?`, filepath.Dir(o.Path)).Scan(&still)
				if still == 0 {
					t.Errorf("gc kept %s, used by no remaining run", o.Path)
				}
			}
		}
		if _, err := os.Stat(r.Log); err == nil {
			t.Errorf("gc kept the log %s of a deleted run", r.Log)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dir, "reports", "small", "run-1")); err == nil {
		t.Error("gc kept the report of the deleted run")
	}
	if _, err := os.Stat(batchDir(1)); err == nil {
		t.Error("gc kept the batch directory of the deleted run")
	}
	if _, err := os.Stat(batchDir(2)); err != nil {
		t.Errorf("gc removed the batch directory of the kept run: %v", err)
	}
	// run 2's cache is intact: the same command has nothing to do
	if out := e.mustRun(0, "run", "--experiment", "small", "--set", "lr=0.5"); !strings.Contains(out, "up to date") {
		t.Errorf("after gc, run 2 is not up to date:\n%s", out)
	}
	if out := e.mustRun(0, "gc", "--keep-last", "1"); !strings.Contains(out, "nothing to delete") {
		t.Errorf("second gc:\n%s", out)
	}
}

func TestResultsCommandsUsageErrors(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "run", "--experiment", "small", "--set", "steps=50", "--set", "snapshots=[0,50]")
	for _, args := range [][]string{
		{"diff", "1"},
		{"diff", "1", "x"},
		{"diff", "1", "99"},
		{"diff", "1", "1", "1"},
		{"gc"},
		{"runs", "--format", "xml"},
		{"runs", "--tag", "novalue"},
		{"export"},
		{"export", "--run", "42"},
		{"run", "--experiment", "small", "--tag", "=x"},
	} {
		_, errs, code := e.run(args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("runner %s: exit %d, want 2 with a one-line error; stderr:\n%s", strings.Join(args, " "), code, errs)
		}
	}
	// a missing database is not created by the reading commands
	for _, args := range [][]string{{"runs"}, {"diff", "1", "2"}, {"gc", "--keep-last", "1"}, {"export", "--run", "1"}} {
		_, errs, code := e.run(append(args, "--db", "missing.db")...)
		if code != 2 || !strings.Contains(errs, "no such results database") {
			t.Errorf("runner %s on a missing db: exit %d: %s", strings.Join(args, " "), code, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dir, "missing.db")); err == nil {
		t.Error("a reading command created the database")
	}
}

// TestJSONLogOnly: with --log-format json the runner prints JSON only, every
// stage event carries the run id, the node and its trial, and the outcome
// (with the report paths) is the last event.
func TestJSONLogOnly(t *testing.T) {
	e := newEnv(t)
	out, errs, code := e.run("run", "--experiment", "small", "--set", "steps=50", "--set", "snapshots=[0,50]", "--log-format", "json")
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q (want nothing)\nstderr:\n%s", code, out, errs)
	}
	var last map[string]any
	stages, progressed := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if ev["msg"] == "stage done" {
			stages++
			if ev["run"] != float64(1) || ev["node"] == nil {
				t.Errorf("stage event without run id or node: %s", line)
			}
			if n, _ := ev["node"].(string); strings.Contains(n, "train") && (ev["trial"] == nil || ev["trial_name"] == nil) {
				t.Errorf("trial stage event without its trial: %s", line)
			}
		}
		if ev["msg"] == "progress" {
			if _, ok := ev["loss"].(float64); !ok || ev["trial"] == nil {
				t.Errorf("progress event without the loss or trial: %s", line)
			}
			progressed++
		}
		last = ev
	}
	if progressed == 0 {
		t.Errorf("no progress events:\n%s", errs)
	}
	if stages == 0 {
		t.Fatalf("no stage events:\n%s", errs)
	}
	if last["msg"] != "result" || last["run"] != float64(1) || last["done"] != float64(6) || last["html_report"] != "reports/small/run-1/index.html" || last["report"] != "reports/small/run-1" {
		t.Errorf("last event = %v", last)
	}
}

func TestFitWidth(t *testing.T) {
	for _, tt := range []struct {
		in    string
		width int
		want  string
	}{
		{"trials 1/2", 20, "trials 1/2"},
		{"trials 1/2  elapsed 3s", 10, "trials 1/…"},
		{"λ=0.1 trials", 5, "λ=0.…"},
	} {
		if got := fitWidth(tt.in, tt.width); got != tt.want {
			t.Errorf("fitWidth(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}

// TestSweepPlotsAndUnquotedGrid: --set lr=0.5,1 (no brackets) sweeps lr;
// the report then has a sweep figure per summary metric, on its page and
// linked from the Markdown summary.
func TestSweepPlotsAndUnquotedGrid(t *testing.T) {
	e := newEnv(t)
	out := e.mustRun(0, "run", "--experiment", "small", "--set", "lr=0.5,1", "--set", "steps=60", "--set", "snapshots=0,60")
	if !strings.Contains(out, "12 trials: 12 done") {
		t.Fatalf("lr=0.5,1 x 3 variants x 2 seeds should be 12 trials:\n%s", out)
	}
	dir := filepath.Join(e.dir, "reports", "small", "run-1")
	for _, f := range []string{"sweep-final_psi.png", "sweep-final_loss.png"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(page), `<img src="sweep-final_psi.png"`) || !strings.Contains(string(md), "(sweep-final_psi.png)") {
		t.Error("the sweep figure is not on the page or in the summary")
	}
	if n := strings.Count(string(md), "<!-- goldstone run header -->"); n != 2 {
		t.Errorf("summary header markers: %d, want 2", n)
	}
	// Figures fit for a paper (issue 21, item 4): every figure has an SVG
	// twin and a caption naming its trials; a constant (l_star depends on
	// the seed only) gets no sweep figure; lines of the two lr differ.
	for _, f := range []string{"curves", "figure2", "trajectories", "sweep-final_psi"} {
		if fi, err := os.Stat(filepath.Join(dir, f+".svg")); err != nil || fi.Size() < 1000 {
			t.Errorf("%s.svg: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "sweep-l_star.png")); err == nil {
		t.Error("sweep-l_star.png: a constant is plotted")
	}
	for _, want := range []string{`(<a href="curves.svg">SVG</a>): L - L*`, "seeds 1, 2; lr = 0.5, 1).</figcaption>",
		`<b>sweep-final_psi.png</b> (<a href="sweep-final_psi.svg">SVG</a>): final_psi against each swept setting (lr; one panel each)`,
		"each seed&#39;s value is a hollow dot"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks the caption text %q", want)
		}
	}
	if !strings.Contains(string(md), "*curves.png* ([SVG](curves.svg)): L - L*") || !strings.Contains(string(md), "## Aggregates over seeds") ||
		!strings.Contains(string(md), "| variant | lr | n | never | mean | sd | 95% CI | median |") {
		t.Errorf("summary.md lacks a caption or the aggregates:\n%s", md)
	}
}

// TestInputDigestsAndEnvironment: a run records the content digest of its
// input data file, its command line and the module versions.
func TestInputDigestsAndEnvironment(t *testing.T) {
	e := newEnv(t)
	data := t.TempDir()
	ratings := syntheticRatings(300)
	if err := os.MkdirAll(filepath.Join(data, "ml-latest-small"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "ml-latest-small", "ratings.csv"), ratings, 0o644); err != nil {
		t.Fatal(err)
	}
	e.writeConfig(strings.ReplaceAll(fetchConfig, "fetch = true", "fetch = false"))
	e.mustRun(0, "--data-dir", data, "--experiment", "fetched", "--jobs", "1", "--quiet")
	env := map[string]string{}
	rows, err := e.db().Query(`SELECT key, value FROM run_env WHERE run_id = 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k, v string
		rows.Scan(&k, &v)
		env[k] = v
	}
	rows.Close()
	sum := sha256.Sum256(ratings)
	found := false
	for k, v := range env {
		if strings.HasPrefix(k, "input ") && strings.HasSuffix(k, "ratings.csv") {
			found = true
			if v != hex.EncodeToString(sum[:]) {
				t.Errorf("%s = %s, want the sha256 of the file %x", k, v, sum)
			}
		}
	}
	if !found {
		t.Errorf("no input digest of ratings.csv in %v", env)
	}
	if !strings.Contains(env["command"], "--experiment fetched") || env["dep github.com/mattn/go-sqlite3"] == "" {
		t.Errorf("command %q, go-sqlite3 %q", env["command"], env["dep github.com/mattn/go-sqlite3"])
	}
}
