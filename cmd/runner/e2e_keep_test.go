package main

// Issue 32, item 5 (what a trial keeps) and issue 30 (early stopping).

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const keepConfig = `
[experiments.keep]
pipeline = "movielens"
[experiments.keep.settings]
dataset = "planted"
planted_users = 60
planted_items = 30
planted_ratings = 3000
bins = 3
dim = 4
steps = 60
valid_every = 10
optimizer = "adagrad"
lr = 0.03
gamma = 0.3
likelihood = "gaussian"
[[experiments.keep.variants]]
name = "final"
[[experiments.keep.variants]]
name = "es"
early_stopping = true
patience = 2
[[experiments.keep.variants]]
name = "best"
early_stopping = true
patience = 2
keep = "best"
[[experiments.keep.variants]]
name = "none"
keep = "none"
`

// npyBytes sums the sizes of the .npy files of the trials' cache entries
// (train-movielens, trial-movielens) under work, and lists the params.npy
// files of trial-movielens entries.
func npyBytes(t *testing.T, work string) (total int64, trialParams []string) {
	t.Helper()
	for _, stage := range []string{"train-movielens", "trial-movielens"} {
		root := filepath.Join(work, "cache", stage)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".npy") {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
			if stage == "trial-movielens" && d.Name() == "params.npy" {
				trialParams = append(trialParams, p)
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return total, trialParams
}

// runner plan prints each trial's keep policy and the bytes it keeps, and
// the total, equal to what the run leaves; a keep = "none" trial leaves no
// parameters and its report builds; a rerun is up to date, and after gc
// has removed the cache a rerun gives the same results.
func TestKeepPolicyPlanAndRun(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(keepConfig)
	plan := e.mustRun(0, "plan", "--experiment", "keep")
	rows := regexp.MustCompile(`(?m)^\S+\s+(final|es|best|none)\s+(final|best|none)\s+.*?(\d+)$`).FindAllStringSubmatch(plan, -1)
	if len(rows) != 4 {
		t.Fatalf("plan: %d trial rows, want 4:\n%s", len(rows), plan)
	}
	wantKeep := map[string]string{"final": "final", "es": "final", "best": "best", "none": "none"}
	perTrial := map[string]int64{}
	for _, r := range rows {
		if wantKeep[r[1]] != r[2] {
			t.Errorf("plan: trial %s keeps %s, want %s", r[1], r[2], wantKeep[r[1]])
		}
		perTrial[r[1]], _ = strconv.ParseInt(r[3], 10, 64)
	}
	if perTrial["none"] != 0 || perTrial["es"] != 2*perTrial["final"] || perTrial["best"] != perTrial["final"] {
		t.Errorf("plan: bytes per trial %v: want none 0, es twice final, best as final", perTrial)
	}
	m := regexp.MustCompile(`disk kept: .* \((\d+) bytes\) in 4 trials; estimated as 8 bytes x \(T x \(users\+items\) x d`).FindStringSubmatch(plan)
	if m == nil {
		t.Fatalf("plan: no total line:\n%s", plan)
	}
	e.mustRun(0, "--experiment", "keep", "--quiet")
	got, trialParams := npyBytes(t, filepath.Join(e.dir, "work"))
	if want, _ := strconv.ParseInt(m[1], 10, 64); got != want {
		t.Errorf("the run keeps %d bytes of parameters, plan estimated %d", got, want)
	}
	if len(trialParams) != 1 { // keep = "best": one params.npy; keep = "none": none
		t.Errorf("trial-movielens entries hold %v", trialParams)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "reports", "keep", "run-1", "index.html")); err != nil {
		t.Errorf("report: %v", err)
	}
	before := e.results("keep")
	if out := e.mustRun(0, "--experiment", "keep"); !strings.Contains(out, "keep: up to date") {
		t.Errorf("rerun:\n%s", out)
	}
	e.mustRun(0, "verify")
	e.mustRun(0, "report", "--run", "1", "--quiet")
	e.mustRun(0, "gc", "--keep-last", "0")
	e.mustRun(0, "--experiment", "keep", "--quiet")
	if a, b := resultsWithoutTimings(t, before), resultsWithoutTimings(t, e.results("keep")); a != b {
		t.Errorf("after gc, the rerun's results differ:\n%s\n%s", a, b)
	}
	none, stopped := 0, 0
	for _, r := range before {
		if r.Params["keep"] == "none" {
			none++
			if r.Metrics["test_rmse"] == nil {
				t.Errorf("keep = none trial %s has no test_rmse", r.Trial)
			}
		}
		if r.Params["early_stopping"] == true {
			stopped++
			for _, k := range []string{"final_test_rmse", "best_valid_step", "trained_steps"} {
				if r.Metrics[k] == nil {
					t.Errorf("early-stopping trial %s has no %s", r.Trial, k)
				}
			}
		}
	}
	if none != 1 || stopped != 2 {
		t.Errorf("results: %d keep = none trials, %d with early stopping; want 1 and 2", none, stopped)
	}
}
