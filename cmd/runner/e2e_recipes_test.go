package main

// Issue 32, item 7: Python and SQL.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docBlocks returns the fenced blocks of a Markdown file tagged lang.
func docBlocks(t *testing.T, path, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```")
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestOutputsRecipes: on a fresh run, the wide view's columns need no
// quoting (lambda_, mapped back by trials_columns), string settings are
// plain in trial_params, latest_finished_* leave a run in progress out,
// runner results --columns --sort picks and orders, and every SQL and
// Python recipe of docs/outputs.md runs (Python when pandas is there).
func TestOutputsRecipes(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(strings.Replace(e2eConfig, "[experiments.small", "[experiments.artificial]\npipeline = \"artificial\"\n[experiments.artificial.settings]\ntime_steps = 5\nsteps = 60\n"+
		"[experiments.artificial.grid]\nseed = [1, 2]\n[[experiments.artificial.variants]]\nname = \"gd\"\n[[experiments.artificial.variants]]\nname = \"procrustes\"\ngauge = \"procrustes\"\n\n[experiments.small", 1))
	e.mustRun(0, "--experiment", "artificial", "--quiet")
	db := e.db()
	var col, name string
	if err := db.QueryRow(`SELECT column_name, name FROM trials_columns WHERE name = 'lambda'`).Scan(&col, &name); err != nil || col != "lambda_" {
		t.Fatalf("trials_columns for lambda: %q %v", col, err)
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM latest_finished_trials WHERE lambda_ = 10 AND experiment = 'artificial'`).Scan(&n)
	if n != 4 {
		t.Errorf("latest_finished_trials: %d rows with lambda_ = 10, want 4", n)
	}
	db.QueryRow(`SELECT count(*) FROM trial_params WHERE key = 'variant' AND value = 'gd'`).Scan(&n)
	if n != 2 {
		t.Errorf("trial_params: %d plain 'gd' values, want 2", n)
	}
	// A run in progress: in latest, not in latest_finished_*.
	for _, q := range []string{
		`INSERT INTO runs (id, experiment, kind, status, started_at) VALUES (99, 'artificial', 'run', 'running', '2030-01-01T00:00:00Z')`,
		`INSERT INTO trial_rows (run_id, trial, params_json, seed, status) SELECT 99, trial, params_json, seed, 'running' FROM trial_rows WHERE run_id = 1`,
		`INSERT INTO metrics (run_id, trial, name, step, value) SELECT 99, trial, name, step, value FROM metrics WHERE run_id = 1`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for q, want := range map[string]int{
		`SELECT count(DISTINCT run_id) FROM latest_finished_trials WHERE run_id = 99`: 0,
		`SELECT count(*) FROM latest_finished_series WHERE run_id = 99`:               0,
		`SELECT count(*) FROM latest_series WHERE run_id = 99`:                        -1,
		`SELECT count(*) FROM latest_finished_trials WHERE run_id = 1`:                4,
	} {
		var got int
		if err := db.QueryRow(q).Scan(&got); err != nil || (want >= 0 && got != want) || (want < 0 && got == 0) {
			t.Errorf("%s: %d (%v), want %d", q, got, err, want)
		}
	}
	out := e.mustRun(0, "results", "--run", "1", "--columns", "name,lambda,final_psi", "--sort", "final_psi:desc", "--format", "csv")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "name,lambda,final_psi" || len(lines) != 5 || !strings.HasPrefix(lines[1], "gd ") {
		t.Errorf("results --columns --sort:\n%s", out)
	}
	if _, errs, code := e.run("results", "--run", "1", "--columns", "name,final_pis"); code != exitUsage || !strings.Contains(errs, `no column "final_pis" (did you mean final_psi?)`) {
		t.Errorf("results --columns final_pis: exit %d %s", code, errs)
	}
	if _, errs, code := e.run("results", "--run", "1", "--sort", "final_psi:up"); code != exitUsage || !strings.Contains(errs, "want COLUMN, COLUMN:asc or COLUMN:desc") {
		t.Errorf("results --sort final_psi:up: exit %d %s", code, errs)
	}

	// The recipes: every SQL block with the Go driver and the sqlite3 program.
	docs := filepath.Join(repoRoot, "docs", "outputs.md")
	blocks := docBlocks(t, docs, "sql")
	if len(blocks) < 3 {
		t.Fatalf("%d SQL recipes in outputs.md", len(blocks))
	}
	for _, q := range blocks {
		rows, err := db.Query(q)
		if err != nil {
			t.Errorf("recipe fails: %v\n%s", err, q)
			continue
		}
		got := 0
		for rows.Next() {
			got++
		}
		rows.Close()
		if got == 0 && !strings.Contains(q, "column_name <> name") {
			t.Errorf("recipe returns no rows:\n%s", q)
		}
		if sq, err := exec.LookPath("sqlite3"); err == nil {
			cmd := exec.Command(sq, filepath.Join(e.dir, "results.db"))
			cmd.Stdin = strings.NewReader(q + ";\n")
			if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "Error") || len(out) == 0 && !strings.Contains(q, "column_name <> name") {
				t.Errorf("sqlite3: %v %s\n%s", err, out, q)
			}
		}
	}
	pythons := pythonCandidates()
	if len(pythons) == 0 {
		t.Skip("no python3: the Python recipes were not run")
	}
	for i, code := range docBlocks(t, docs, "python") {
		mod := "pandas"
		if strings.Contains(code, "import polars") {
			mod = "polars"
		}
		parse := exec.Command(pythons[0], "-c", "import ast, sys; ast.parse(sys.stdin.read())")
		parse.Stdin = strings.NewReader(code)
		if out, err := parse.CombinedOutput(); err != nil {
			t.Errorf("Python recipe %d does not parse: %v\n%s", i+1, err, out)
		}
		py := pythonWith(pythons, mod)
		if py == "" {
			t.Logf("no python3 of %v has %s: Python recipe %d not run", pythons, mod, i+1)
			continue
		}
		cmd := exec.Command(py, "-c", code)
		cmd.Dir = e.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("Python recipe %d: %v\n%s\n%s", i+1, err, out, code)
		}
	}
}

// pythonCandidates lists the Python interpreters the recipes may run under:
// python3 on PATH (a pyenv shim, say) and the system's /usr/bin/python3,
// where Debian's python3-pandas installs (.ci/run installs it).
func pythonCandidates() []string {
	var out []string
	if p, err := exec.LookPath("python3"); err == nil {
		out = append(out, p)
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil && !slices.Contains(out, "/usr/bin/python3") {
		out = append(out, "/usr/bin/python3")
	}
	return out
}

// pythonWith returns the first interpreter that imports mod, or "".
func pythonWith(pythons []string, mod string) string {
	for _, py := range pythons {
		if exec.Command(py, "-c", "import "+mod).Run() == nil {
			return py
		}
	}
	return ""
}
