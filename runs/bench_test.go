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

// BenchmarkRecordTrial measures rows/s of a finished trial's series
// recorded in one transaction (RecordTrial), against the same rows queued
// through Metric and flushed, as trials were recorded before.
func BenchmarkRecordTrial(b *testing.B) {
	const points = 20000
	series := make([]MetricPoint, points)
	for i := range series {
		series[i] = MetricPoint{Name: "loss", Step: i, Value: float64(i)}
	}
	b.Run("RecordTrial", func(b *testing.B) {
		s, _ := openTemp(b)
		run := mustRun(b, s, "bench")
		b.ReportAllocs()
		start := time.Now()
		for i := range b.N {
			t := Trial{RunID: run, ID: fmt.Sprint(i), Status: StatusDone}
			if err := s.RecordTrial(context.Background(), t, series, map[string]float64{"final": 1}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*points)/time.Since(start).Seconds(), "rows/s")
	})
	b.Run("Metric+Flush", func(b *testing.B) {
		s, _ := openTemp(b)
		run := mustRun(b, s, "bench")
		b.ReportAllocs()
		start := time.Now()
		for i := range b.N {
			trial := fmt.Sprint(i)
			for _, p := range series {
				s.Metric(run, trial, p.Name, p.Step, p.Value)
			}
			s.Summary(run, trial, "final", 1)
			if err := s.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			if err := s.UpsertTrial(context.Background(), Trial{RunID: run, ID: trial, Status: StatusDone}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*points)/time.Since(start).Seconds(), "rows/s")
	})
}
