package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// searchBatchConfig holds the two searches the batch executors run:
// "s" (searchE2E: 4 random points in waves of 2, two seeds each) and "pr",
// a TPE search with ASHA on a tiny chain (9 points to step 3, the best
// third on to 9 and 27, in waves of 3), whose promoted trials go on from
// the checkpoints of the rung below.
const searchBatchConfig = searchE2E + `
[experiments.pr]
pipeline = "artificial"
[experiments.pr.settings]
time_steps = 4
rows = 5
cols = 4
steps = 27
clip = 0.01
lr_s0 = 100.0
gauge_gap_every = 2
snapshots = [0, 5]
[experiments.pr.grid]
seed = [1]
[experiments.pr.search]
sampler = "tpe"
trials = 9
wave = 3
seed = 3
objective = "final_loss"
direction = "minimize"
pruner = "asha"
min_steps = 3
eta = 3
[experiments.pr.search.space]
lr = { log_uniform = [0.1, 3.0] }
gauge = { choice = ["none", "goldstone"] }
k1 = { int = [2, 6], when = { gauge = ["goldstone"] } }
`

// searchRecord is what a search run recorded (recorded: statuses, params,
// summaries, series) with where its pruned trials stopped, and the run's
// status.
func searchRecord(t *testing.T, db *sql.DB) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(recorded(t, db))
	rows, err := db.Query(`SELECT trial, status, coalesce(rung, -1), coalesce(pruned_at_step, -1) FROM trial_rows ORDER BY trial`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, st string
		var rung, at int
		if err := rows.Scan(&id, &st, &rung, &at); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s|%s|%d|%d\n", id, st, rung, at)
	}
	return b.String()
}

// localSearch runs the experiment locally into local.db and returns what
// it recorded.
func localSearch(t *testing.T, e *env, name string) string {
	t.Helper()
	e.mustRun(0, "--experiment", name, "--db", "local.db", "--workdir", "localwork", "--quiet")
	return searchRecord(t, e.dbAt(filepath.Join(e.dir, "local.db")))
}

// sameSearch fails unless the batch run recorded what the local one did.
func sameSearch(t *testing.T, e *env, what, local string) {
	t.Helper()
	got := searchRecord(t, e.db())
	if got != local {
		t.Fatalf("%s: the search recorded other trials, pruning decisions or values than the local one:\n%s", what, lineDiff(local, got))
	}
}

// onceEach fails when a trial of the batch run ran more than once (a
// result file per execution: results/<index>.<attempt>.json).
func onceEach(t *testing.T, e *env, name string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.dir, "work", "batch", name, "run-1", "results", "*.json"))
	seen := map[string]string{}
	for _, f := range files {
		idx, _, _ := strings.Cut(filepath.Base(f), ".")
		if prev, dup := seen[idx]; dup {
			t.Fatalf("trial %s ran twice: %s and %s", idx, prev, f)
		}
		seen[idx] = f
	}
	if len(seen) == 0 {
		t.Fatalf("no result files under %s", filepath.Join(e.dir, "work", "batch", name, "run-1", "results"))
	}
}

// TestSearchOnBatchExecutorMatchesLocal: a search, unpruned (random) and
// pruned (TPE with ASHA), run with a batch executor (each wave an array
// job, the loop on this host) records the same trials, statuses,
// pruned_at_step and values, bit for bit, as the local search: the
// process back end always, Slurm when a cluster answers. Before, the
// runner refused a search on them.
func TestSearchOnBatchExecutorMatchesLocal(t *testing.T) {
	for _, exe := range []string{"process", "slurm"} {
		for _, name := range []string{"s", "pr"} {
			t.Run(exe+"/"+name, func(t *testing.T) {
				if exe == "slurm" {
					needSlurm(t)
				}
				e := newEnv(t)
				writeConfig(t, e, searchBatchConfig)
				local := localSearch(t, e, name)
				out := e.mustRun(0, "--experiment", name, "--executor", exe, "--slurm-poll", "200ms", "--workdir", "work", "--jobs", "2")
				if !strings.Contains(out, "status finished") || !strings.Contains(out, "html report:") {
					t.Fatalf("the search on %s:\n%s", exe, out)
				}
				if _, err := os.Stat(filepath.Join(e.dir, "reports", name, "run-1", "search-best.png")); err != nil {
					t.Fatalf("the search's report has no views: %v", err)
				}
				sameSearch(t, e, exe, local)
				onceEach(t, e, name)
				st := e.mustRun(0, "status", "--run", "1", "--workdir", "work")
				want := map[string]string{"s": "search wave: trials 4-7 (4 trials), 4 points suggested so far; the search's last",
					"pr": "rung jobs; the search's last: the run ends with it"}[name]
				if !strings.Contains(st, want) {
					t.Errorf("status, want %q:\n%s", want, st)
				}
				if name == "pr" {
					// Promoted trials went on from the kept checkpoints in the
					// shared workdir (no step redone).
					logs, _ := filepath.Glob(filepath.Join(e.dir, "work", "batch", name, "run-1", "logs", "*.out"))
					n := 0
					for _, l := range logs {
						b, _ := os.ReadFile(l)
						n += strings.Count(string(b), "resumed from the checkpoint of step")
					}
					if n == 0 {
						t.Fatalf("no promoted trial resumed from its checkpoint (task logs %v)", logs)
					}
					// The ended search removed what it kept: the tasks mark
					// their checkpoints with the run, as the local executor does.
					kept, _ := filepath.Glob(filepath.Join(e.dir, "work", "checkpoints", "*", "resume-*"))
					if len(kept) != 0 {
						t.Errorf("the ended search left its kept checkpoints: %v", kept)
					}
				}
			})
		}
	}
}

// TestSearchOnBatchExecutorResumesAfterKill: the submitting runner killed
// with SIGKILL between waves, right after a wave's sbatch (before it
// recorded the job: the next one adopts it by name), while it waited for
// a wave (the next one adopts its queued tasks) and before a pruned
// search's marks, then run again with the same command, ends with the
// same trials, pruning decisions and values as the local search, and no
// trial ran twice. The process back end always; Slurm when a cluster
// answers.
func TestSearchOnBatchExecutorResumesAfterKill(t *testing.T) {
	for _, exe := range []string{"process", "slurm"} {
		for _, c := range []struct {
			name, kill string
			all        bool // also on the process back end (else on Slurm only: the tests' time)
		}{
			{"s", "search:wave@1", true},
			{"pr", "search:wave@2", false},
			{"pr", "slurm:submitted@3", false},
			{"pr", "search:waiting@4", true},
			{"pr", "search:pruned@1", false},
		} {
			t.Run(exe+"/"+c.name+"/"+c.kill, func(t *testing.T) {
				if exe == "slurm" {
					needSlurm(t)
				} else if !c.all {
					t.Skip("on Slurm only")
				}
				e := newEnv(t)
				writeConfig(t, e, searchBatchConfig)
				local := localSearch(t, e, c.name)
				args := []string{"--experiment", c.name, "--executor", exe, "--slurm-poll", "200ms", "--workdir", "work", "--jobs", "2", "--quiet"}
				e.runKilled(c.kill, args...)
				if c.kill == "search:wave@1" {
					// Between its first two waves: the first's trials.
					st := e.mustRun(0, "status", "--run", "1", "--workdir", "work")
					if want := "search wave: trials 0-3 (4 trials), 2 points suggested so far; the search's loop on the submitting host submits the next wave when it ends"; !strings.Contains(st, want) {
						t.Errorf("status between waves, want %q:\n%s", want, st)
					}
					if out := e.mustRun(0, "collect", "--run", "1", "--workdir", "work"); !strings.Contains(out, "every trial of its search's wave has a result") {
						t.Errorf("collect between waves:\n%s", out)
					}
				}
				e.mustRun(0, args...)
				sameSearch(t, e, exe+" killed at "+c.kill, local)
				onceEach(t, e, c.name)
			})
		}
	}
}

// TestSearchPlanOnBatchExecutor: plan with a batch --executor shows a
// search's space, its first wave and that wave's array job as the run
// submits it; --detach and --set of a searched setting are refused with
// exit 2 and no run. Before, plan had no --executor and run refused a
// search on Slurm.
func TestSearchPlanOnBatchExecutor(t *testing.T) {
	e := newEnv(t)
	writeConfig(t, e, searchBatchConfig)
	out := e.mustRun(0, "plan", "--experiment", "s", "--executor", "slurm", "--slurm-max-parallel", "3")
	for _, want := range []string{"search: sampler random, 4 points in waves of 2", "first wave (2 points):",
		"on slurm: the first wave's trials (4) as 1 array job --array=0-3%3 (one trial per task)"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan, want %q:\n%s", want, out)
		}
	}
	out = e.mustRun(0, "plan", "--experiment", "pr", "--executor", "process", "--slurm-trials-per-task", "2")
	if want := "on process: the first wave's trials (3) as 1 array job --array=0-1 (up to 2 trials per task)"; !strings.Contains(out, want) {
		t.Errorf("plan, want %q:\n%s", want, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--experiment", "s", "--executor", "slurm", "--detach"}, "experiment s is a search: it has no --detach"},
		{[]string{"--experiment", "s", "--executor", "slurm", "--set", "lr=0.5"}, "--set lr=0.5: lr is searched by experiment s"},
		{[]string{"plan", "--experiment", "s", "--executor", "slurm", "--set", "gauge=none"}, "--set gauge=none: gauge is searched by experiment s"},
	} {
		_, errs, code := e.run(c.args...)
		if code != exitUsage || !strings.Contains(errorLine(t, errs), c.want) {
			t.Errorf("runner %s: exit %d, want 2 and %q:\n%s", strings.Join(c.args, " "), code, c.want, errs)
		}
	}
	if n := e.runCount(); n != 0 {
		t.Fatalf("%d runs recorded", n)
	}
}
