package main

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const searchE2EHead = `[experiments.s]
pipeline = "artificial"

[experiments.s.settings]
time_steps = 4
rows = 5
cols = 4
steps = 40
clip = 0.01
lr_s0 = 100.0
snapshots = [0, 40]

[experiments.s.grid]
seed = [1, 2]

[experiments.s.search]
`

// searchE2E is a search of 4 random points in waves of 2, two seeds each.
const searchE2E = searchE2EHead + `sampler = "random"
trials = 4
wave = 2
seed = 9
objective = "final_loss"
direction = "minimize"

[experiments.s.search.space]
lr = { log_uniform = [0.05, 1.0] }
gauge = { choice = ["none", "goldstone"] }
k1 = { int = [5, 20], when = { gauge = ["goldstone"] } }
`

func writeConfig(t *testing.T, e *env, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, "experiments.toml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSearchBadTablesStopAtPlan: an unknown sampler, an empty range, a log
// range through 0, a test objective and bad pruners (unknown, eta < 2,
// min_steps past the steps) stop plan and run with exit 2 and
// one line naming experiments.toml and the line, and no run is recorded.
func TestSearchBadTablesStopAtPlan(t *testing.T) {
	table := func(sampler, objective, space string) string {
		return searchE2EHead + fmt.Sprintf("sampler = %q\ntrials = 4\nobjective = %q\ndirection = \"minimize\"\n\n[experiments.s.search.space]\n%s\n", sampler, objective, space)
	}
	lr := `lr = { log_uniform = [0.05, 1.0] }`
	for _, c := range []struct{ name, doc, want string }{
		{"unknown sampler", table("hyperband", "final_loss", lr), `experiments.toml:17: experiments.s.search.sampler: unknown sampler "hyperband"`},
		{"empty range", table("random", "final_loss", `lr = { uniform = [0.3, 0.1] }`), "experiments.toml:23: experiments.s.search.space.lr: empty uniform range [0.3, 0.1]"},
		{"log range through 0", table("random", "final_loss", `lr = { log_uniform = [0.0, 1.0] }`), "experiments.toml:23: experiments.s.search.space.lr: log range [0, 1] reaches 0 or below"},
		{"test objective", table("random", "test_ll", lr), `experiments.toml:19: experiments.s.search.objective: "test_ll" is a test metric`},
		{"unknown pruner", strings.Replace(table("random", "final_loss", lr), "direction", "pruner = \"asha2\"\nmin_steps = 5\ndirection", 1),
			`experiments.toml:20: experiments.s.search.pruner: "asha2": want one of asha, successive_halving, hyperband, median, none`},
		{"eta below 2", strings.Replace(table("random", "final_loss", lr), "direction", "pruner = \"asha\"\nmin_steps = 5\neta = 1\ndirection", 1),
			"experiments.toml:22: experiments.s.search.eta: must be >= 2"},
		{"min_steps past steps", strings.Replace(table("random", "final_loss", lr), "direction", "pruner = \"median\"\nmin_steps = 50\ndirection", 1),
			"experiments.toml:21: experiments.s.search.min_steps: 50 is more than max_steps (the trials' steps, 40)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			writeConfig(t, e, c.doc)
			for _, args := range [][]string{{"plan", "--experiment", "s"}, {"--experiment", "s"}} {
				_, errs, code := e.run(args...)
				if code != exitUsage || !strings.Contains(errorLine(t, errs), c.want) {
					t.Fatalf("runner %s: exit %d, want 2 and %q:\n%s", strings.Join(args, " "), code, c.want, errs)
				}
			}
			if _, err := os.Stat(filepath.Join(e.dir, "results.db")); err == nil {
				var n int
				if err := e.db().QueryRow(`SELECT count(*) FROM runs`).Scan(&n); err != nil || n != 0 {
					t.Fatalf("%d runs recorded (%v)", n, err)
				}
			}
		})
	}
}

// searchSummaries are the summary metrics of run 1 but timings, by trial
// and name, as bits.
func searchSummaries(t *testing.T, db *sql.DB) map[string]uint64 {
	t.Helper()
	rows, err := db.Query(`SELECT trial, name, value FROM summaries WHERE run_id = 1 AND name NOT LIKE '%seconds'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var trial, name string
		var v sql.NullFloat64
		if err := rows.Scan(&trial, &name, &v); err != nil {
			t.Fatal(err)
		}
		out[trial+" "+name] = math.Float64bits(v.Float64)
	}
	return out
}

// TestSearchRunBestRerun: a search runs its 4 points x 2 seeds as one run,
// the same bits at --jobs 1 and 2; plan shows the space and the first
// wave; a second run is up to date; best prints the chosen point and its
// interval; --rerun-best runs it with 3 seeds as run 2 of s-best, tagged
// with the search's run.
func TestSearchRunBestRerun(t *testing.T) {
	e := newEnv(t)
	writeConfig(t, e, searchE2E)
	out := e.mustRun(0, "plan", "--experiment", "s")
	for _, want := range []string{"search: sampler random, 4 points in waves of 2", "k1: int [5, 20] when gauge in [goldstone]", "first wave (2 points):\n  s0 ", "5 stages: 0 cached, 5 to run"} {
		if !strings.Contains(out, want) {
			t.Fatalf("plan lacks %q:\n%s", want, out)
		}
	}
	out = e.mustRun(0, "--experiment", "s", "--jobs", "2", "--quiet")
	if !strings.Contains(out, "s: run 1 finished: 8 trials: 8 done, 0 failed") {
		t.Fatalf("search run:\n%s", out)
	}
	one := newEnv(t)
	writeConfig(t, one, searchE2E)
	one.mustRun(0, "--experiment", "s", "--jobs", "1", "--quiet")
	if a, b := searchSummaries(t, e.db()), searchSummaries(t, one.db()); len(a) == 0 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("the search at --jobs 2 and 1 differ:\n%v\n%v", a, b)
	}
	if out := e.mustRun(0, "--experiment", "s", "--quiet"); !strings.Contains(out, "up to date (run 1") {
		t.Fatalf("second run:\n%s", out)
	}
	out = e.mustRun(0, "best", "--experiment", "s")
	if !strings.Contains(out, "s: run 1 (finished), 4 points; best by final_loss") || !strings.Contains(out, "(mean of 2 trials; sd ") {
		t.Fatalf("best:\n%s", out)
	}
	out = e.mustRun(0, "best", "--experiment", "s", "--rerun-best", "--seeds", "3", "--quiet")
	if !strings.Contains(out, "s-best: run 2 (finished, 3 trials: 3 done, 0 failed), tagged search_run=1") || !strings.Contains(out, "over 3 seeds = ") {
		t.Fatalf("rerun-best:\n%s", out)
	}
	if out := e.mustRun(0, "runs", "--tag", "search_run=1", "--quiet"); !strings.Contains(out, "s-best") {
		t.Fatalf("runs --tag search_run=1:\n%s", out)
	}
}

// TestSearchRefusesSetAndSlurm: --set of a searched setting (the search
// would override it) and --detach on a batch executor (the search's loop
// runs on the submitting host) stop a search with exit 2 and no run.
func TestSearchRefusesSetAndSlurm(t *testing.T) {
	e := newEnv(t)
	writeConfig(t, e, searchE2E)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--experiment", "s", "--set", "lr=0.5"}, "--set lr=0.5: lr is searched by experiment s"},
		{[]string{"plan", "--experiment", "s", "--set", "gauge=none"}, "--set gauge=none: gauge is searched by experiment s"},
		{[]string{"--experiment", "s", "--executor", "slurm", "--detach"}, "experiment s is a search: it has no --detach"},
		{[]string{"--experiment", "s", "--set", "search.objective=test_ll"}, "--set: search.objective: --set takes search.sampler, search.seed and search.trials"},
		{[]string{"plan", "--experiment", "s", "--set", "search.sampler=bayes"}, "--set: search.sampler: "},
	} {
		_, errs, code := e.run(c.args...)
		if code != exitUsage || !strings.Contains(errorLine(t, errs), c.want) {
			t.Errorf("runner %s: exit %d, want 2 and %q:\n%s", strings.Join(c.args, " "), code, c.want, errs)
		}
	}
	var n int
	if err := e.db().QueryRow(`SELECT count(*) FROM runs`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d runs recorded (%v)", n, err)
	}
	// The search's own keys are set from the command line.
	out := e.mustRun(0, "plan", "--experiment", "s", "--set", "search.seed=11", "--set", "search.sampler=sobol", "--set", "search.trials=3")
	if !strings.Contains(out, "search: sampler sobol, 3 points in waves of 2, seed 11, minimize final_loss") {
		t.Fatalf("plan with --set search.*:\n%s", out)
	}
}

// TestSearchReproAndReport: a finished search run is reproduced from its
// record (its waves suggested again from the repro's own results: the same
// points and the same bits), and 'runner report --run' rebuilds its report
// (the waves replayed over its recorded results), with the search's views.
// Before, both refused a search run.
func TestSearchReproAndReport(t *testing.T) {
	e := newEnv(t)
	writeConfig(t, e, searchE2E)
	e.mustRun(0, "--experiment", "s", "--jobs", "2", "--quiet")
	out := e.mustRun(0, "repro", "--run", "1", "--quiet")
	if !strings.Contains(out, "repro of run 1 (repro run 2): all ") || !strings.Contains(out, " summary metrics of 8 trials match, and all ") || strings.Contains(out, "DRIFT") {
		t.Fatalf("repro of the search run:\n%s", out)
	}
	var n int
	if err := e.db().QueryRow(`SELECT count(*) FROM trials WHERE run_id = 2`).Scan(&n); err != nil || n != 8 {
		t.Fatalf("the repro run has %d trials (%v), want 8", n, err)
	}
	dir := filepath.Join(e.dir, "reports", "s", "run-1")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	out = e.mustRun(0, "report", "--run", "1")
	if !strings.Contains(out, "report of run 1 (s):") {
		t.Fatalf("report --run 1:\n%s", out)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"search-best.png", "search-curves.png", "search-settings.png", "search-parallel.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the rebuilt report lacks %s: %v", f, err)
		}
		if !strings.Contains(string(page), f) {
			t.Errorf("the page does not show %s", f)
		}
	}
}
