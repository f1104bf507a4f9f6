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

	"goldstone/experiment"
	"goldstone/pipeline"
	"goldstone/trialio"
)

var update = flag.Bool("update", false, "rewrite the pipelines' golden files and the generated tables of docs/ (settings, layout)")

// golden is a pipeline's testdata/golden.json: for every stage of its
// golden experiment, the stage's cache version and, for every node, the
// digests of what it read and of what it wrote (Stages); and, for reading a
// diff, each trial's summary metrics (timings left out) and the SHA-256 of
// its numeric outputs (parameters: .npy files and snapshots.json).
type golden struct {
	Pipeline string                       `json:"pipeline"`
	Stages   map[string]goldenStage       `json:"stages"` // stage name -> its version and nodes
	Trials   map[string]map[string]string `json:"trials"` // trial name -> metric -> exact float text, or "sha256 <file>" -> digest
}

// goldenStage is one stage of a golden experiment.
type goldenStage struct {
	Version string                `json:"version"`
	Nodes   map[string]goldenNode `json:"nodes"`
}

// goldenNode is one node: the digest of its parameters and inputs, and of
// its outputs (canonicalDigest: timings left out).
type goldenNode struct {
	Inputs  string `json:"inputs"`
	Outputs string `json:"outputs"`
}

// TestGolden runs every pipeline's tiny golden experiment
// (stages/<pipeline>/testdata/golden.toml) and compares what each of its
// stages wrote with testdata/golden.json, bit for bit: the same golden
// files hold on every build (GOAMD64=v1, v3, v4, -tags purego, arm64;
// .ci/run runs them all), so a difference is a change of results, never
// the machine. A stage whose outputs changed for the same parameters and
// inputs must bump its own version (the pipeline's versions.go) in the same
// commit, so that no cached result outlives the code that made it; the
// test names it. Stages downstream of it need no bump (their inputs
// changed, and with them their cache keys), and the others keep their
// cache: a report-only change re-runs only the report. -update refuses to
// rewrite the file while a stage that must be bumped was not.
func TestGolden(t *testing.T) {
	for _, name := range experiment.PipelineNames() {
		t.Run(name, func(t *testing.T) { checkGolden(t, name) })
	}
}

func checkGolden(t *testing.T, name string) {
	dir := filepath.Join("..", name, "testdata")
	cfg, err := experiment.LoadConfig(filepath.Join(dir, "golden.toml"))
	if err != nil {
		t.Fatalf("pipeline %s has no golden experiment: %v", name, err)
	}
	e, ok := cfg.Experiments["golden"]
	if !ok || e.Pipeline != name {
		t.Fatalf("%s/golden.toml: want an experiment \"golden\" of pipeline %s", dir, name)
	}
	got := runGolden(t, e, dir)
	got.Pipeline = name
	path := filepath.Join(dir, "golden.json")
	var want golden
	b, readErr := os.ReadFile(path)
	if readErr == nil {
		readErr = json.Unmarshal(b, &want)
	}
	bump, stale := compareStages(want.Stages, got.Stages)
	diffs := compareGolden(want.Trials, got.Trials)
	regen := fmt.Sprintf("go test ./stages/pipelines -run TestGolden/%s -update", name)
	bumpText := func() string {
		var lines []string
		for _, st := range slices.Sorted(maps.Keys(bump)) {
			lines = append(lines, fmt.Sprintf("  stage %s (version %s): %s", st, got.Stages[st].Version, bump[st]))
		}
		return strings.Join(lines, "\n")
	}
	if *update {
		if readErr == nil && len(bump) > 0 {
			t.Fatalf("pipeline %s: these stages wrote other outputs for the same parameters and inputs but kept their version: bump each in stages/%s/versions.go first (cached results of the old code would be reused), then run %s\n%s\n%s",
				name, name, regen, bumpText(), strings.Join(diffs, "\n"))
		}
		out, err := json.MarshalIndent(got, "", "  ")
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
	case len(bump) > 0:
		t.Fatalf("pipeline %s: these stages wrote other outputs for the same parameters and inputs: bump each one's version in stages/%s/versions.go in the same commit and run %s (or go test ./stages/pipelines -update)\n%s\n%s",
			name, name, regen, bumpText(), strings.Join(diffs, "\n"))
	case len(stale) > 0 || len(diffs) > 0:
		t.Fatalf("pipeline %s: golden.json is not what the stages write now, though no stage needs a bump (a version was bumped, the golden experiment or its data changed, or a stage was added): regenerate it with %s\n%s\n%s",
			name, regen, strings.Join(stale, "\n"), strings.Join(diffs, "\n"))
	}
}

// compareStages returns the stages that must bump their version (a node
// of the same version read the same parameters and inputs and wrote other
// outputs; stage -> the first such node) and the other differences.
func compareStages(want, got map[string]goldenStage) (bump map[string]string, stale []string) {
	bump = map[string]string{}
	for _, st := range slices.Sorted(maps.Keys(got)) {
		g := got[st]
		w, ok := want[st]
		switch {
		case !ok:
			stale = append(stale, fmt.Sprintf("  stage %s: not in golden.json", st))
			continue
		case w.Version != g.Version:
			stale = append(stale, fmt.Sprintf("  stage %s: version %s, golden.json has %s", st, g.Version, w.Version))
			continue
		}
		for _, id := range slices.Sorted(maps.Keys(g.Nodes)) {
			gn, wn := g.Nodes[id], w.Nodes[id]
			switch {
			case wn == goldenNode{}:
				stale = append(stale, fmt.Sprintf("  node %s: not in golden.json", id))
			case wn.Inputs != gn.Inputs:
				stale = append(stale, fmt.Sprintf("  node %s: its parameters or inputs changed", id))
			case wn.Outputs != gn.Outputs:
				if _, seen := bump[st]; !seen {
					bump[st] = "node " + id + " wrote other outputs"
				}
			}
		}
		for id := range w.Nodes {
			if _, ok := g.Nodes[id]; !ok {
				stale = append(stale, fmt.Sprintf("  node %s: in golden.json, no longer in the graph", id))
			}
		}
	}
	for st := range want {
		if _, ok := got[st]; !ok {
			stale = append(stale, fmt.Sprintf("  stage %s: in golden.json, no longer in the graph", st))
		}
	}
	return bump, stale
}

// runGolden runs the experiment's graph (data directory dir) in a scratch
// work directory and returns what each stage's nodes read and wrote, and
// each trial's non-timing summary metrics.
func runGolden(t *testing.T, e *experiment.Experiment, dir string) golden {
	t.Helper()
	ctx := context.Background()
	trials := e.Trials()
	b, err := experiment.Build(ctx, e, trials, experiment.Env{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	res, err := pipeline.Run(ctx, b.Graph, pipeline.Options{WorkDir: work, Jobs: 2, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	out := golden{Stages: map[string]goldenStage{}, Trials: map[string]map[string]string{}}
	for _, tn := range b.Trials {
		nr := res.Nodes[tn.Result]
		if nr.Err != nil {
			t.Fatalf("trial %s: %v", tn.Trial.Name, nr.Err)
		}
		sum, err := trialio.ReadSummary(filepath.Join(nr.Outputs["result"], "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for k, v := range sum {
			if !trialio.IsTiming(k) {
				m[k] = strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
		for _, id := range tn.Nodes {
			for _, dir := range res.Nodes[id].Outputs {
				digestOutputs(t, m, filepath.Join(work, "cache"), dir)
			}
		}
		out.Trials[tn.Trial.Name] = m
	}
	digests := map[string]map[string]string{} // node -> output -> canonical digest
	for _, n := range b.Graph.Nodes {         // in the order nodes were added: upstream first
		outputs := res.Nodes[n.ID].Outputs
		if n.ID == b.Report {
			outputs = reportOnCanonicalInputs(t, n, b, res)
		}
		gn := goldenNode{Inputs: inputsDigest(t, n, digests), Outputs: outputsDigest(t, n.ID, outputs, digests)}
		st := out.Stages[n.Stage.Name()]
		if st.Nodes == nil {
			st = goldenStage{Version: n.Stage.Version(), Nodes: map[string]goldenNode{}}
		}
		st.Nodes[n.ID] = gn
		out.Stages[n.Stage.Name()] = st
	}
	return out
}

// inputsDigest is the digest of a node's stage parameters and of its
// inputs' canonical digests (upstream outputs from digests; external
// files digested here).
func inputsDigest(t *testing.T, n *pipeline.Node, digests map[string]map[string]string) string {
	t.Helper()
	params, err := pipeline.CanonicalJSON(n.Stage.Params())
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	h.Write(params)
	for _, name := range slices.Sorted(maps.Keys(n.Inputs)) {
		r := n.Inputs[name]
		d := ""
		if r.External() {
			d = canonicalDigest(t, r.Path)
		} else {
			d = digests[r.Node][r.Output]
		}
		fmt.Fprintf(h, "\x00%s\x00%s", name, d)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// outputsDigest digests a node's outputs (canonicalDigest), records each
// in digests for the nodes downstream, and returns their digest.
func outputsDigest(t *testing.T, id string, outputs map[string]string, digests map[string]map[string]string) string {
	t.Helper()
	h := sha256.New()
	digests[id] = map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(outputs)) {
		d := canonicalDigest(t, outputs[name])
		digests[id][name] = d
		fmt.Fprintf(h, "\x00%s\x00%s", name, d)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalDigest is the digest of a file or directory with what may
// differ between two runs of the same code left out: the timings of a
// summary.json (metrics ending in _seconds), and the pixels of figures
// (.png, .svg: drawn by gonum/plot, whose float arithmetic is not the same
// on every build; their names count, and their data is in the report's
// Markdown).
func canonicalDigest(t *testing.T, path string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(path, p)
		var content []byte
		switch ext := filepath.Ext(p); {
		case d.Name() == "summary.json":
			sum, err := trialio.ReadSummary(p)
			if err != nil {
				return err
			}
			for _, k := range sum.Keys() {
				if !trialio.IsTiming(k) {
					content = fmt.Appendf(content, "%s=%s\n", k, strconv.FormatFloat(sum[k], 'g', -1, 64))
				}
			}
		case ext == ".png" || ext == ".svg":
			content = []byte("figure")
		default:
			if content, err = os.ReadFile(p); err != nil {
				return err
			}
		}
		sum := sha256.Sum256(content)
		fmt.Fprintf(h, "%s\x00%x\n", filepath.ToSlash(rel), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// reportOnCanonicalInputs runs the report node again, in a scratch work
// directory, on copies of the trials' results whose timings are zero, so
// that what it writes (tables of every summary metric) is the same on
// every run; it returns its outputs.
func reportOnCanonicalInputs(t *testing.T, n *pipeline.Node, b *experiment.Built, res *pipeline.Result) map[string]string {
	t.Helper()
	rep := *n
	rep.Inputs = map[string]pipeline.Ref{}
	for name, r := range n.Inputs {
		path := r.Path
		if !r.External() {
			path = res.Nodes[r.Node].Outputs[r.Output]
		}
		if !r.External() && b.TrialOf(r.Node) >= 0 {
			path = zeroTimings(t, path)
		}
		rep.Inputs[name] = pipeline.File(path)
	}
	g := &pipeline.Graph{}
	g.Add(&rep)
	r, err := pipeline.Run(context.Background(), g, pipeline.Options{WorkDir: t.TempDir(), Jobs: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return r.Nodes[rep.ID].Outputs
}

// zeroTimings copies a trial's result directory with the timings of its
// summary.json set to 0.
func zeroTimings(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.Name() != "summary.json" {
			return trialio.CopyFile(p, to)
		}
		sum, err := trialio.ReadSummary(p)
		if err != nil {
			return err
		}
		for k := range sum {
			if trialio.IsTiming(k) {
				sum[k] = 0
			}
		}
		return trialio.WriteSummary(to, sum)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
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
