package pipelines_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"goldstone/pipeline"
	"goldstone/stages"
)

var update = flag.Bool("update", false, "rewrite the pipelines' golden files and the README settings table")

// golden is a pipeline's testdata/golden.json: the summary metrics of its
// golden experiment (timings left out), the SHA-256 of its trials' numeric
// outputs (parameters: .npy files and snapshots.json) and the pipeline
// version that made them.
type golden struct {
	Pipeline string                       `json:"pipeline"`
	Version  string                       `json:"version"`
	Trials   map[string]map[string]string `json:"trials"` // trial name -> metric -> exact float text, or "sha256 <file>" -> digest
}

// TestGolden runs every pipeline's tiny golden experiment
// (stages/<pipeline>/testdata/golden.toml) and compares its summary metrics
// with testdata/golden.json, bit for bit: the same golden files hold on
// every build (GOAMD64=v1, v3, v4, -tags purego, arm64; .ci/run runs them
// all), so a difference is a change of results, never the machine. A change
// of results must come with a bump of the pipeline's Version, so that no
// cached result outlives the code that made it: -update refuses to rewrite
// the file of a pipeline whose results changed while its version did not.
func TestGolden(t *testing.T) {
	for _, name := range stages.PipelineNames() {
		t.Run(name, func(t *testing.T) { checkGolden(t, name) })
	}
}

func checkGolden(t *testing.T, name string) {
	p, _ := stages.LookupPipeline(name)
	dir := filepath.Join("..", name, "testdata")
	cfg, err := stages.LoadConfig(filepath.Join(dir, "golden.toml"))
	if err != nil {
		t.Fatalf("pipeline %s has no golden experiment: %v", name, err)
	}
	e, ok := cfg.Experiments["golden"]
	if !ok || e.Pipeline != name {
		t.Fatalf("%s/golden.toml: want an experiment \"golden\" of pipeline %s", dir, name)
	}
	got := runGolden(t, e, dir)
	path := filepath.Join(dir, "golden.json")
	var want golden
	b, readErr := os.ReadFile(path)
	if readErr == nil {
		readErr = json.Unmarshal(b, &want)
	}
	diffs := compareGolden(want.Trials, got)
	regen := fmt.Sprintf("go test ./stages/pipelines -run TestGolden/%s -update", name)
	if *update {
		if readErr == nil && len(diffs) > 0 && want.Version == p.Version() {
			t.Fatalf("results of pipeline %s changed but its Version is still %q: bump Version in stages/%s first (cached results of the old code would be reused), then run %s\n%s",
				name, p.Version(), name, regen, strings.Join(diffs, "\n"))
		}
		out, err := json.MarshalIndent(golden{Pipeline: name, Version: p.Version(), Trials: got}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	switch {
	case readErr != nil:
		t.Fatalf("%s: %v; create it with %s", path, readErr, regen)
	case len(diffs) > 0 && want.Version == p.Version():
		t.Fatalf("results of pipeline %s changed: bump Version in stages/%s (now %q) in the same commit and run %s (or go test ./stages/pipelines -update)\n%s",
			name, name, p.Version(), regen, strings.Join(diffs, "\n"))
	case len(diffs) > 0:
		t.Fatalf("results of pipeline %s changed and its Version is now %q (golden.json has %q): regenerate with %s\n%s",
			name, p.Version(), want.Version, regen, strings.Join(diffs, "\n"))
	case want.Version != p.Version():
		t.Fatalf("pipeline %s: Version %q but golden.json records %q: run %s", name, p.Version(), want.Version, regen)
	}
}

// runGolden runs the experiment's graph (data directory dir) in a scratch
// work directory and returns each trial's non-timing summary metrics.
func runGolden(t *testing.T, e *stages.Experiment, dir string) map[string]map[string]string {
	t.Helper()
	ctx := context.Background()
	trials := e.Trials()
	b, err := stages.Build(ctx, e, trials, stages.Env{DataDir: dir, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	res, err := pipeline.Run(ctx, b.Graph, pipeline.Options{WorkDir: work, Jobs: 2, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, tn := range b.Trials {
		nr := res.Nodes[tn.Result]
		if nr.Err != nil {
			t.Fatalf("trial %s: %v", tn.Trial.Name, nr.Err)
		}
		sum, err := stages.ReadSummary(filepath.Join(nr.Outputs["result"], "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for k, v := range sum {
			if !stages.IsTiming(k) {
				m[k] = strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
		for _, id := range tn.Nodes {
			for _, dir := range res.Nodes[id].Outputs {
				digestOutputs(t, m, filepath.Join(work, "cache"), dir)
			}
		}
		out[tn.Trial.Name] = m
	}
	return out
}

// digestOutputs adds to m, for every parameter file under dir (.npy arrays,
// snapshots.json), "sha256 <stage>/<path>" (the path below the cache entry)
// -> its SHA-256: the golden comparison then covers every bit of the
// trained parameters, not only the summary metrics.
func digestOutputs(t *testing.T, m map[string]string, cache, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if filepath.Ext(path) != ".npy" && d.Name() != "snapshots.json" {
			return nil
		}
		rel, err := filepath.Rel(cache, path)
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/") // stage, key, path...
		if len(parts) < 3 {
			return fmt.Errorf("%s: not below a cache entry", path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m["sha256 "+parts[0]+"/"+strings.Join(parts[2:], "/")] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// compareGolden lists the differences between recorded and new metrics, in
// key order (the first line names the first differing value). Values must
// agree bit for bit (the text is strconv's shortest exact form); NaN equals
// NaN.
func compareGolden(want, got map[string]map[string]string) []string {
	var diffs []string
	names := slices.Sorted(maps.Keys(want))
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	for _, n := range names {
		w, g := want[n], got[n]
		keys := slices.AppendSeq(slices.Collect(maps.Keys(w)), maps.Keys(g))
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			ws, okw := w[k]
			gs, okg := g[k]
			if okw && okg && ws == gs {
				continue
			}
			diffs = append(diffs, fmt.Sprintf("  trial %q %s: golden %s, now %s", n, k, orNone(ws, okw), orNone(gs, okg)))
		}
	}
	return diffs
}

func orNone(s string, ok bool) string {
	if !ok {
		return "(none)"
	}
	return s
}
