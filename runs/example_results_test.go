package runs_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"goldstone/runs"
)

// Two runs of one experiment: the wide trials view answers "best trial per
// variant" in one SELECT, and Diff compares the runs setting by setting
// and trial by trial.
func ExampleStore_Diff() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "runs-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	var ids []int64
	for i, lr := range []string{"0.1", "0.05"} {
		id, err := s.CreateRun(ctx, runs.RunInfo{Experiment: "demo", Status: runs.StatusFinished,
			ConfigJSON: `{"settings":{"lr":` + lr + `}}`})
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, id)
		for j, v := range []string{"adam", "gd"} {
			trial := fmt.Sprintf("t%d%d", i, j)
			if err := s.UpsertTrial(ctx, runs.Trial{RunID: id, ID: trial, Status: runs.StatusDone,
				Params: map[string]string{"name": `"` + v + `"`, "variant": `"` + v + `"`, "lr": lr}}); err != nil {
				log.Fatal(err)
			}
			s.Summary(id, trial, "test_ll", -1-float64(j)-float64(i)/10)
		}
	}
	if err := s.SetTags(ctx, ids[1], map[string]string{"goal": "smaller lr"}); err != nil {
		log.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		log.Fatal(err)
	}

	rows, err := s.DB().QueryContext(ctx, `SELECT variant, run_id, max(test_ll) FROM trials GROUP BY variant ORDER BY variant`)
	if err != nil {
		log.Fatal(err)
	}
	for rows.Next() {
		var v string
		var run int64
		var ll float64
		if err := rows.Scan(&v, &run, &ll); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("best %s: run %d, test_ll %g\n", v, run, ll)
	}
	rows.Close()

	d, err := s.Diff(ctx, ids[0], ids[1])
	if err != nil {
		log.Fatal(err)
	}
	for _, st := range d.Settings {
		fmt.Printf("setting %s: %s -> %s\n", st.Key, st.A, st.B)
	}
	for _, m := range d.Metrics {
		fmt.Printf("%s %s: %g -> %g (%+.2g)\n", m.Trial, m.Metric, m.A, m.B, m.Delta())
	}
	l, err := s.ListRuns(ctx, runs.RunFilter{Tags: map[string]string{"goal": "smaller lr"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("tagged: run %d with %d trials\n", l[0].ID, l[0].Trials)
	// Output:
	// best adam: run 1, test_ll -1
	// best gd: run 1, test_ll -2
	// setting settings.lr: 0.1 -> 0.05
	// adam test_ll: -1 -> -1.1 (-0.1)
	// gd test_ll: -2 -> -2.1 (-0.1)
	// tagged: run 2 with 2 trials
}
