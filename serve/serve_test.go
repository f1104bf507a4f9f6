package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"goldstone/runs"
)

// fixture writes a results database: run 1 of an experiment whose name and
// note carry markup and a control character, with a done trial (series and
// summary) and a running one whose series has reached step 5; run 2, the
// same experiment finished with another lr. It returns a server over the
// database opened read-only, and the writing store (still open).
func fixture(t *testing.T) (*httptest.Server, *runs.Store, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "results.db")
	w, err := runs.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	exp := `<script>alert(1)</script>`
	info := runs.RunInfo{Experiment: exp, ConfigJSON: `{"pipeline":"p","settings":{"lr":0.1}}`, Note: "note \x1b[31mred", Started: time.Now()}
	info.SetOwner(runs.Self())
	id, err := w.CreateRun(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	done := runs.Trial{RunID: id, ID: "t1", Params: map[string]string{"name": `"gd seed=1"`, "variant": `"gd"`, "seed": "1"}, Seed: 1, Status: runs.StatusDone}
	series := []runs.MetricPoint{{Name: "loss", Step: 0, Value: 3}, {Name: "loss", Step: 10, Value: 1}, {Name: "loss", Step: 20, Value: 0.5}}
	if err := w.RecordTrial(ctx, done, series, map[string]float64{"final_loss": 0.5}); err != nil {
		t.Fatal(err)
	}
	running := runs.Trial{RunID: id, ID: "t2", Params: map[string]string{"name": `"gd seed=2"`, "variant": `"gd"`, "seed": "2"}, Seed: 2, Status: runs.StatusRunning}
	if err := w.UpsertTrial(ctx, running); err != nil {
		t.Fatal(err)
	}
	for step := range 6 {
		w.Metric(id, "t2", "loss", step, float64(5-step))
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	id2, err := w.CreateRun(ctx, runs.RunInfo{Experiment: exp, ConfigJSON: `{"pipeline":"p","settings":{"lr":0.5}}`, Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, id2, runs.StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	ro, err := runs.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	reports := filepath.Join(dir, "reports")
	if err := os.MkdirAll(filepath.Join(reports, exp[:7], "run-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := New(ro, Options{Reports: reports, Headline: func(string) []runs.Headline {
		return []runs.Headline{{Metric: "final_loss", Lower: true}}
	}})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, w, reports
}

func get(t *testing.T, url string, want int) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %s", url, resp.StatusCode, want, b)
	}
	return string(b)
}

func TestRunsPageShowsLiveStatusEscaped(t *testing.T) {
	ts, _, _ := fixture(t)
	page := get(t, ts.URL+"/", http.StatusOK)
	for _, want := range []string{
		`&lt;script&gt;alert(1)&lt;/script&gt;`, // the experiment, escaped
		`data-run="1" data-status="running"`,
		`data-run="2" data-status="finished"`,
		`1 done, 1 running`,
		`alive (pid `, // this process owns run 1
		`note \x1b[31mred`,
		`data-live="yes"`,
		`<script src="/static/live.js">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("runs page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "\x1b") {
		t.Errorf("runs page shows database text unescaped:\n%s", page)
	}
	if i, j := strings.Index(page, `data-run="2"`), strings.Index(page, `data-run="1"`); i > j {
		t.Errorf("runs not newest first")
	}
}

func TestRunPageShowsTrialsStepsCurvesAndUpdates(t *testing.T) {
	ts, w, _ := fixture(t)
	page := get(t, ts.URL+"/run/1", http.StatusOK)
	for _, want := range []string{
		`<tr data-trial="t1" data-status="done"><td class="num">1</td><td>gd seed=1</td><td class="done">done</td><td class="num">20</td><td class="num">0.5</td>`,
		`<tr data-trial="t2" data-status="running"><td class="num">2</td><td>gd seed=2</td><td class="running">running</td><td class="num">5</td><td class="num">—</td>`,
		`<th>final_loss</th>`,
		`data-src="/run/1/live" data-live="yes"`,
		`<figcaption>loss by step</figcaption>`,
		`<option value="2">run 2`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q:\n%s", want, page)
		}
	}
	if n := strings.Count(page, "<polyline"); n != 2 {
		t.Errorf("%d curves drawn, want 2 (one per trial)", n)
	}
	// The run goes on: the running trial records more steps, then ends.
	ctx := context.Background()
	series := []runs.MetricPoint{{Name: "loss", Step: 0, Value: 5}, {Name: "loss", Step: 9, Value: 0.25}}
	if err := w.RecordTrial(ctx, runs.Trial{RunID: 1, ID: "t2", Params: map[string]string{"name": `"gd seed=2"`, "variant": `"gd"`, "seed": "2"}, Seed: 2, Status: runs.StatusDone},
		series, map[string]float64{"final_loss": 0.25}); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, 1, runs.StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	live := get(t, ts.URL+"/run/1/live", http.StatusOK)
	for _, want := range []string{`data-live="no"`, `data-status="finished"`, `<td class="num">9</td><td class="num">0.25</td>`, `2 done`, `<h2>Over seeds</h2>`} {
		if !strings.Contains(live, want) {
			t.Errorf("live part after the run ended lacks %q:\n%s", want, live)
		}
	}
	if strings.Contains(live, "<html") {
		t.Errorf("the live part is a whole page")
	}
}

func TestAPIRun(t *testing.T) {
	ts, _, _ := fixture(t)
	var p struct {
		Run struct {
			Status string         `json:"status"`
			Counts map[string]int `json:"counts"`
		} `json:"run"`
		Live   bool `json:"live"`
		Trials []struct {
			ID   string `json:"id"`
			Step *int   `json:"step"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(get(t, ts.URL+"/api/run/1", http.StatusOK)), &p); err != nil {
		t.Fatal(err)
	}
	if p.Run.Status != "running" || !p.Live || p.Run.Counts["running"] != 1 || len(p.Trials) != 2 || p.Trials[1].Step == nil || *p.Trials[1].Step != 5 {
		t.Fatalf("api/run/1: %+v", p)
	}
	var l RunsPage
	if err := json.Unmarshal([]byte(get(t, ts.URL+"/api/runs", http.StatusOK)), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 2 || l.Runs[0].ID != 2 || !l.Live {
		t.Fatalf("api/runs: %+v", l)
	}
}

func TestCompareAndReports(t *testing.T) {
	ts, _, reports := fixture(t)
	page := get(t, ts.URL+"/compare?a=1&b=2", http.StatusOK)
	if !strings.Contains(page, `<tr><td>settings.lr</td><td>0.1</td><td>0.5</td></tr>`) {
		t.Errorf("compare page lacks the lr difference:\n%s", page)
	}
	// Run 2's report directory holds no index.html: no link. With one, a link that serves it.
	if strings.Contains(get(t, ts.URL+"/", http.StatusOK), "/reports/%3Cscript") {
		t.Errorf("a report link without a report")
	}
	dir := filepath.Join(reports, "<script", "run-2")
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("the static report"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The experiment holds a '/', so its report path is not trusted: no link.
	if strings.Contains(get(t, ts.URL+"/", http.StatusOK), `>report</a>`) {
		t.Errorf("a report link for an experiment name with a slash")
	}
	if got := get(t, ts.URL+"/reports/%3Cscript/run-2/", http.StatusOK); got != "the static report" {
		t.Errorf("static report: %q", got)
	}
}

func TestRefusesWritesAndBadRequests(t *testing.T) {
	ts, _, _ := fixture(t)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		req, _ := http.NewRequest(m, ts.URL+"/run/1", strings.NewReader("x"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", m, resp.StatusCode)
		}
	}
	if got := get(t, ts.URL+"/run/x%1b", http.StatusBadRequest); got != "run id \"x\\x1b\": want a positive integer\n" {
		t.Errorf("bad id: %q", got)
	}
	get(t, ts.URL+"/run/99", http.StatusNotFound)
	get(t, ts.URL+"/compare?a=1", http.StatusBadRequest)
	get(t, ts.URL+"/reports/../results.db", http.StatusNotFound)
}

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr   string
		public bool
		ok     bool
		warn   bool
	}{
		{"127.0.0.1:8080", false, true, false},
		{"127.0.0.2:0", false, true, false},
		{"[::1]:8080", false, true, false},
		{"localhost:8080", false, true, false},
		{":8080", false, false, false},
		{"0.0.0.0:8080", false, false, false},
		{"192.168.1.5:80", false, false, false},
		{"0.0.0.0:8080", true, true, true},
		{"8080", true, false, false},
	} {
		warn, err := CheckAddr(c.addr, c.public)
		if (err == nil) != c.ok || (warn != "") != c.warn {
			t.Errorf("CheckAddr(%q, %v) = %q, %v", c.addr, c.public, warn, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("CheckAddr(%q): error of more than one line: %v", c.addr, err)
		}
	}
}
