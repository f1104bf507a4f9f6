package runs

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkTrialsView measures a "best trial per variant" query over the
// wide trials view (one correlated lookup per parameter and metric column)
// for a run of many trials with 20 parameters and 10 summary metrics.
func BenchmarkTrialsView(b *testing.B) {
	for _, trials := range []int{100, 1000} {
		b.Run(fmt.Sprintf("trials=%d", trials), func(b *testing.B) {
			ctx := context.Background()
			s, _ := openTemp(b)
			run := mustRun(b, s, "bench")
			for i := range trials {
				id := fmt.Sprintf("t%05d", i)
				p := map[string]string{"variant": fmt.Sprintf(`"v%d"`, i%4), "name": fmt.Sprintf(`"trial %d"`, i)}
				for k := range 18 {
					p[fmt.Sprintf("p%02d", k)] = fmt.Sprint(i * k)
				}
				if err := s.UpsertTrial(ctx, Trial{RunID: run, ID: id, Status: StatusDone, Params: p}); err != nil {
					b.Fatal(err)
				}
				for m := range 10 {
					s.Summary(run, id, fmt.Sprintf("m%d", m), float64(i*m))
				}
			}
			mustFlush(b, s)
			b.Run("ordered", func(b *testing.B) {
				for range b.N {
					rows, err := s.DB().QueryContext(ctx, `SELECT name, seq FROM trials WHERE run_id = ? ORDER BY seq`, run)
					if err != nil {
						b.Fatal(err)
					}
					for rows.Next() {
					}
					rows.Close()
				}
			})
			b.Run("best", func(b *testing.B) {
				start := time.Now()
				for range b.N {
					rows, err := s.DB().QueryContext(ctx, `SELECT variant, name, max(m3) FROM trials WHERE run_id = ? GROUP BY variant`, run)
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for rows.Next() {
						n++
					}
					rows.Close()
					if n != 4 {
						b.Fatalf("%d variants", n)
					}
				}
				b.ReportMetric(float64(trials*b.N)/time.Since(start).Seconds(), "trials/s")
			})
		})
	}
}
