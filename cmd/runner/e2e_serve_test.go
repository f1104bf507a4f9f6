package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium is the headless browser of TestServeLiveInChromium.
const chromium = "/usr/bin/chromium"

// liveConfig is a run slow enough to be watched: one trial at a time
// (--jobs 1), each a couple of seconds.
const liveConfig = `
[experiments.live]
pipeline = "artificial"
[experiments.live.settings]
time_steps = 30
steps = 30000
log_every = 100
[experiments.live.grid]
seed = [1, 2, 3, 4, 5, 6, 7, 8]
`

// dumpDOM loads url in headless Chromium, lets its scripts run for 4 s of
// virtual time and returns the DOM.
func dumpDOM(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless=new", "--disable-gpu", "--no-sandbox", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=4000", "--dump-dom", url)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium --dump-dom %s: %v\n%s", url, err, errb.String())
	}
	return out.String()
}

var (
	trialRow    = regexp.MustCompile(`<tr data-trial="[0-9a-f]+" data-status="([a-z]+)">`)
	runStatusRE = regexp.MustCompile(`<p id="run-status" data-status="([a-z]+)">`)
)

// trialCounts counts the trial rows of a dumped run page by status.
func trialCounts(dom string) map[string]int {
	n := map[string]int{}
	for _, m := range trialRow.FindAllStringSubmatch(dom, -1) {
		n[m[1]]++
	}
	return n
}

// runner serve shows a run in progress in a browser: its running trials,
// then, once it has ended, more done trials and its final status; the
// runs page lists it with its live status.
func TestServeLiveInChromium(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no headless browser: %s is absent (apt-get install -y chromium): %v", chromium, err)
	}
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.dir, "live.toml"), []byte(liveConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(runnerBin, "--config", "live.toml", "--experiment", "live", "--jobs", "1", "--quiet")
	run.Dir = e.dir
	var runOut bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	waitForTrial(t, e.db(), run, "running")
	// The curve needs two recorded steps of the running trial: on a loaded
	// machine a trial can be "running" for many seconds before its first
	// log_every steps are recorded.
	waitForSteps(t, e.db(), run, 2)

	serve := exec.Command(runnerBin, "serve", "--addr", "127.0.0.1:0")
	serve.Dir = e.dir
	pipe, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { serve.Process.Signal(os.Interrupt); serve.Wait() }()
	line, err := bufio.NewReader(pipe).ReadString('\n')
	if err != nil {
		t.Fatalf("runner serve printed no address: %v", err)
	}
	base := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`).FindString(line)
	if base == "" {
		t.Fatalf("runner serve: no address in %q", line)
	}

	dom := dumpDOM(t, base+"/run/1")
	first := trialCounts(dom)
	if m := runStatusRE.FindStringSubmatch(dom); m == nil || m[1] != "running" {
		t.Fatalf("run page while the run runs: status %v, want running\n%s", m, dom)
	}
	if first["running"] < 1 || first["done"] >= 8 {
		t.Fatalf("run page while the run runs: trials %v, want a running one and fewer than 8 done\n%s", first, dom)
	}
	if !strings.Contains(dom, `data-live="yes"`) || !strings.Contains(dom, "<polyline") {
		t.Errorf("run page while the run runs: not live, or no curve of the running trial\n%s", dom)
	}

	if err := run.Wait(); err != nil {
		t.Fatalf("runner: %v\n%s", err, runOut.String())
	}
	dom = dumpDOM(t, base+"/run/1")
	last := trialCounts(dom)
	if m := runStatusRE.FindStringSubmatch(dom); m == nil || m[1] != "finished" {
		t.Fatalf("run page after the run: status %v, want finished\n%s", m, dom)
	}
	if last["done"] != 8 || last["done"] <= first["done"] || last["running"] != 0 {
		t.Fatalf("run page after the run: trials %v (before: %v), want 8 done\n%s", last, first, dom)
	}
	if !strings.Contains(dom, `data-live="no"`) || !strings.Contains(dom, "static report") {
		t.Errorf("run page after the run: still live, or no link to the static report\n%s", dom)
	}
	list := dumpDOM(t, base+"/")
	if !strings.Contains(list, `<tr data-run="1" data-status="finished">`) || !strings.Contains(list, "8 done") {
		t.Errorf("runs page after the run lacks run 1 finished with 8 done trials\n%s", list)
	}
}

// waitForSteps waits until some trial of run 1 has recorded metrics at n
// distinct steps, or fails after 2 minutes.
func waitForSteps(t *testing.T, db *sql.DB, cmd *exec.Cmd, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var got int
		db.QueryRow(`SELECT COALESCE(MAX(c), 0) FROM (SELECT count(DISTINCT step) AS c FROM metrics WHERE run_id = 1 GROUP BY trial)`).Scan(&got)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no trial recorded %d steps within 2 minutes (%d)", n, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
