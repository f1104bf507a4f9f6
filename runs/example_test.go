package runs_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"goldstone/runs"
)

func Example() {
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

	run, err := s.CreateRun(ctx, runs.RunInfo{Experiment: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	trial := runs.Trial{RunID: run, ID: "t0", Params: map[string]string{"lr": "0.1"}, Status: runs.StatusDone}
	if err := s.UpsertTrial(ctx, trial); err != nil {
		log.Fatal(err)
	}
	for step, loss := range []float64{1, 0.5, math.Inf(1)} {
		s.Metric(run, "t0", "loss", step, loss)
	}
	s.Summary(run, "t0", "final", math.NaN())
	if err := s.Flush(ctx); err != nil {
		log.Fatal(err)
	}

	series, err := s.Series(ctx, run, "t0", "loss")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(series)
	sums, err := s.Summaries(ctx, run)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sums)

	// Plain SQL over the views: NaN is NULL there.
	rows, err := s.DB().QueryContext(ctx, `SELECT trial, metric, value IS NULL FROM summary WHERE experiment = 'demo'`)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var trial, metric string
		var isNull bool
		if err := rows.Scan(&trial, &metric, &isNull); err != nil {
			log.Fatal(err)
		}
		fmt.Println(trial, metric, isNull)
	}
	if err := rows.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// [{0 1} {1 0.5} {2 +Inf}]
	// map[t0:map[final:NaN]]
	// t0 final true
}
