package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/runs"
)

// TestCompareSettingDiffs: compare of two runs whose trials differ in one
// setting (lr) prints, per headline metric, the difference paired by seed
// with its 95% t interval, a star and the better value where the interval
// excludes 0, and "tie" where it holds 0.
func TestCompareSettingDiffs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	st, err := runs.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	excess := map[string][]float64{"1": {1.0, 1.1, 1.2, 1.3}, "0.5": {0.9, 0.9, 0.9, 0.9}} // B - A: -0.1 .. -0.4
	steps := map[string][]float64{"1": {100, 100, 100, 100}, "0.5": {105, 95, 103, 97}}    // B - A: 5, -5, 3, -3
	for _, lr := range []string{"1", "0.5"} {
		id, err := st.CreateRun(ctx, runs.RunInfo{Experiment: "a", ConfigJSON: `{"pipeline":"artificial"}`})
		if err != nil {
			t.Fatal(err)
		}
		for s := 1; s <= 4; s++ {
			tr := runs.Trial{RunID: id, ID: fmt.Sprintf("lr%s-s%d", lr, s), Seed: int64(s), Status: runs.StatusDone,
				Params: map[string]string{"variant": `"gd"`, "lr": lr, "seed": fmt.Sprint(s), "name": fmt.Sprintf(`"gd seed=%d"`, s)}}
			sum := map[string]float64{"final_excess": excess[lr][s-1], "steps_to_excess_1": steps[lr][s-1]}
			if err := st.RecordTrial(ctx, tr, nil, sum); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.FinishRun(ctx, id, runs.StatusFinished, ""); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	out, errs, code := runCLI(t, "--db", db, "compare", "1", "2", "--out", filepath.Join(dir, "cmp"))
	if code != 0 {
		t.Fatalf("compare 1 2: exit %d\n%s", code, errs)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 5 && f[0] == "lr" {
			rows[f[4]] = l
		}
	}
	// final_excess: mean -0.25, sd 0.1291, t(3) 3.182: [-0.4554, -0.04457]; lower is better: lr 0.5.
	if r := rows["final_excess"]; !strings.Contains(r, "[-0.4554, -0.04457]") || !strings.HasSuffix(strings.TrimSpace(r), "* 0.5") {
		t.Errorf("final_excess row %q\n%s", r, out)
	}
	// steps: mean 0, the interval holds 0: a tie, no star.
	if r := rows["steps_to_excess_1"]; !strings.HasSuffix(strings.TrimSpace(r), "tie") || strings.Contains(r, "*") {
		t.Errorf("steps_to_excess_1 row %q\n%s", r, out)
	}
}
