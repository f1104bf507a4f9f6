package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// prunedE2E is a TPE search with ASHA on a tiny artificial chain: 9
// points to step 3, the best third on to 9 and 27, one seed.
const prunedE2E = searchE2EHead + `sampler = "tpe"
trials = 9
wave = 3
seed = 3
objective = "final_loss"
direction = "minimize"
pruner = "asha"
min_steps = 3
eta = 3

[experiments.s.search.space]
lr = { log_uniform = [0.05, 1.0] }
gauge = { choice = ["none", "goldstone"] }
k1 = { int = [5, 20], when = { gauge = ["goldstone"] } }
`

// TestPrunedSearchRepro: repro of a pruned search reruns it with its
// pruner (the same waves, pruning decisions and promotions, from the
// repro's own checkpoints) and matches every value bit for bit; a
// recorded value of a pruned trial tampered with makes it fail, naming
// the trial. The run's report rebuilds from its record (the pruned
// search replayed over its results), with its rungs table.
func TestPrunedSearchRepro(t *testing.T) {
	e := newEnv(t)
	writeConfig(t, e, strings.Replace(prunedE2E, "steps = 40", "steps = 27", 1))
	e.mustRun(0, "--experiment", "s", "--jobs", "2", "--quiet")
	db := e.db()
	var n, pruned int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE status = 'pruned') FROM trial_rows WHERE run_id = 1`).Scan(&n, &pruned); err != nil || pruned == 0 || n <= 9 {
		t.Fatalf("the pruned search: %d trials, %d pruned (%v)", n, pruned, err)
	}
	out := e.mustRun(0, "repro", "--run", "1", "--quiet")
	if !strings.Contains(out, "repro of run 1 (repro run 2): all ") || !strings.Contains(out, " summary metrics of "+strconv.Itoa(n)+" trials match, and all ") || strings.Contains(out, "DRIFT") {
		t.Fatalf("repro of the pruned search (%d trials):\n%s", n, out)
	}
	var m, mp int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE status = 'pruned') FROM trial_rows WHERE run_id = 2`).Scan(&m, &mp); err != nil || m != n || mp != pruned {
		t.Fatalf("the repro run has %d trials, %d pruned (%v); want %d, %d", m, mp, err, n, pruned)
	}
	dir := filepath.Join(e.dir, "reports", "s", "run-1")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if out := e.mustRun(0, "report", "--run", "1"); !strings.Contains(out, "report of run 1 (s):") {
		t.Fatalf("report --run 1:\n%s", out)
	}
	// The rungs table: 9 points at step 3, on the page and in the summary.
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || !strings.Contains(string(page), `<table id="search-rungs">`) || !strings.Contains(string(page), `<td class="num">0</td><td class="num">3</td><td class="num">9</td>`) {
		t.Errorf("the page has no rungs table (%v)", err)
	}
	mds, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	found := false
	for _, m := range mds {
		b, _ := os.ReadFile(m)
		found = found || strings.Contains(string(b), "## Search rungs") && strings.Contains(string(b), "| 0 | 3 | 9 | ")
	}
	if !found {
		t.Errorf("no Markdown summary of %v has the rungs table", mds)
	}
	var trial, name string
	if err := db.QueryRow(`SELECT trial, json_extract(params_json, '$.name') FROM trial_rows WHERE run_id = 1 AND status = 'pruned' ORDER BY trial LIMIT 1`).Scan(&trial, &name); err != nil {
		t.Fatal(err)
	}
	name = strings.Trim(name, `"`)
	if _, err := db.Exec(`UPDATE summaries SET value = value * 1.5 WHERE name = 'final_loss' AND run_id = 1 AND trial = ?`, trial); err != nil {
		t.Fatal(err)
	}
	out = e.mustRun(1, "repro", "--run", "1", "--quiet", "--series=false")
	if !strings.Contains(out, "DRIFT trial \""+name+"\" final_loss: recorded ") {
		t.Fatalf("repro of the tampered pruned search (trial %s):\n%s", name, out)
	}
}

// TestPrunedSearchGCCheckpoints: a pruned search killed after its run
// ended but before it removed the checkpoints it kept leaves them to gc:
// `gc --keep-last N --dry-run` lists each with its run and size, and gc
// removes them and says how much it freed; the search run again is up to
// date and leaves none.
func TestPrunedSearchGCCheckpoints(t *testing.T) {
	e := newEnv(t)
	writeConfig(t, e, strings.Replace(prunedE2E, "steps = 40", "steps = 27", 1))
	e.runKilled("search:pruned@1", "--experiment", "s", "--jobs", "2", "--quiet")
	kept, _ := filepath.Glob(filepath.Join(e.dir, "work", "checkpoints", "*", "resume-*"))
	if len(kept) == 0 {
		t.Fatal("the killed search kept no checkpoints")
	}
	out := e.mustRun(0, "gc", "--keep-last", "5", "--dry-run")
	if !strings.Contains(out, "would delete "+strconv.Itoa(len(kept))+" of trials that have ended or of pruned searches that have") || strings.Count(out, "(run 1 of s finished; ") != len(kept) {
		t.Fatalf("gc --dry-run with %d kept checkpoints of an ended search:\n%s", len(kept), out)
	}
	out = e.mustRun(0, "gc", "--keep-last", "5")
	if !strings.Contains(out, "deleted "+strconv.Itoa(len(kept))+" of trials that have ended") || strings.Contains(out, "(run 1 of s finished; ") {
		t.Fatalf("gc:\n%s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(e.dir, "work", "checkpoints", "*", "resume-*")); len(left) > 0 {
		t.Fatalf("gc left %v", left)
	}
	e.mustRun(0, "--experiment", "s", "--jobs", "2", "--quiet")
}

// TestCheckpointResumeDWEEarlyStop: DWE trials with early stopping killed
// mid-trial resume from their checkpoints to the same best state, the same
// stopping step and the same values, bit for bit, in float64 and in the
// float32 mode (float32 parameters, Adam moments and best state in the
// checkpoints).
func TestCheckpointResumeDWEEarlyStop(t *testing.T) {
	corpus := writeDWECorpus(t)
	for _, dtype := range []string{"float64", "float32"} {
		t.Run(dtype, func(t *testing.T) {
			mk := func() *env {
				e := newEnv(t)
				e.writeConfig(fmt.Sprintf(dweConfig, corpus))
				return e
			}
			checkpointCase(t, mk(), mk(), "train-dwe", 4,
				[]string{"train:step@6", "train:step@13"},
				"--experiment", "words", "--jobs", "1", "--quiet", "--set", "early_stopping=true", "--set", "patience=4", "--set", "valid_every=3",
				"--set", "dtype="+dtype)
		})
	}
}
