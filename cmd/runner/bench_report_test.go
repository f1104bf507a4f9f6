package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reportBenchConfig is an experiment of n tiny trials (five steps each):
// its report phase is what BenchmarkReportPhase measures.
func reportBenchConfig(n int) string {
	seeds := make([]string, n)
	for i := range seeds {
		seeds[i] = fmt.Sprint(i + 1)
	}
	return `
[experiments.tiny]
pipeline = "artificial"
[experiments.tiny.settings]
time_steps = 5
steps = 5
[experiments.tiny.grid]
seed = [` + strings.Join(seeds, ", ") + `]
`
}

// benchSink keeps the benchmark's result alive.
var benchSink int

// BenchmarkReportPhase measures the report phase of a run of many tiny
// trials: 'runner report --run 1' after the report folder was removed
// (the report stage from the recorded results, the figures' copies, the
// HTML page, the index, the Markdown summary and their records), in
// trials per second. The trials run once, before the clock starts.
//
//	go test ./cmd/runner -run '^$' -bench ReportPhase -benchtime 1x
func BenchmarkReportPhase(b *testing.B) {
	for _, n := range []int{1000, 3000} {
		b.Run(fmt.Sprintf("trials=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "experiments.toml"), []byte(reportBenchConfig(n)), 0o644); err != nil {
				b.Fatal(err)
			}
			b.Chdir(dir)
			if code := run([]string{"--experiment", "tiny", "--quiet", "--max-trials", fmt.Sprint(n)}, io.Discard, os.Stderr); code != 0 {
				b.Fatalf("run: exit %d", code)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				if err := os.RemoveAll(filepath.Join(dir, "reports")); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if code := run([]string{"report", "--run", "1", "--quiet"}, io.Discard, os.Stderr); code != 0 {
					b.Fatalf("report: exit %d", code)
				}
				benchSink += n
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "trials/s")
		})
	}
}
