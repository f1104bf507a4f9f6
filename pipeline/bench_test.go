package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var sinkDigest string

func BenchmarkDigestFile(b *testing.B) {
	for _, size := range []int{1 << 16, 1 << 24} {
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			p := filepath.Join(b.TempDir(), "f")
			if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.SetBytes(int64(size))
			b.ResetTimer()
			for range b.N {
				d, err := Digest(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
				sinkDigest = d
			}
		})
	}
}

// BenchmarkRunCached measures the per-node overhead of a fully cached run:
// validation, external digests from the memo, manifest reads, state writes,
// on a chain of nodes (each waits for the one before) and on nodes side by
// side (their cache entries are verified in parallel, Jobs at a time).
func BenchmarkRunCached(b *testing.B) {
	for _, shape := range []string{"chain", "wide"} {
		for _, n := range []int{10, 100} {
			b.Run(fmt.Sprintf("%s/nodes=%d", shape, n), func(b *testing.B) { benchRunCached(b, shape, n) })
		}
	}
}

func benchRunCached(b *testing.B, shape string, n int) {
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	os.WriteFile(src, []byte("x"), 0o644)
	g := &Graph{}
	prev := File(src)
	for i := range n {
		id := fmt.Sprint("n", i)
		g.Add(&Node{ID: id, Stage: &catStage{suffix: id, ins: []string{"in"}}, Inputs: map[string]Ref{"in": prev}, Outputs: []string{"out"}})
		if shape == "chain" {
			prev = Out(id, "out")
		}
	}
	o := Options{WorkDir: filepath.Join(dir, "work"), Jobs: 2}
	if _, err := Run(context.Background(), g, o); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := Run(context.Background(), g, o)
		if err != nil || res.Nodes["n0"].Status != Cached {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "nodes/s")
}
