package runs

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// BenchmarkWriter measures rows/s from Metric calls to committed rows.
func BenchmarkWriter(b *testing.B) {
	for _, producers := range []int{1, 8} {
		b.Run(fmt.Sprintf("producers=%d", producers), func(b *testing.B) {
			s, _ := openTemp(b)
			run := mustRun(b, s, "bench")
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			per := (b.N + producers - 1) / producers
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					trial := fmt.Sprint(p)
					for i := range per {
						s.Metric(run, trial, "loss", i, float64(i))
					}
				})
			}
			wg.Wait()
			if err := s.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(per*producers)/time.Since(start).Seconds(), "rows/s")
		})
	}
}
