package dwe_test

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/internal/checkpoint"
	"goldstone/pipeline"
	"goldstone/trialio"
)

// dweOut is what a run of esDoc's trial wrote: the evaluated summary, the
// trained means (means.npy), the series and the stage's log lines.
type dweOut struct {
	sum    trialio.Summary
	means  []byte
	series []byte
	logs   []string
}

// runDWEOpts runs esDoc's one trial plus extra under opts (WorkDir: a
// fresh one when empty); stop, when set, is called with every event and
// may cancel the run by returning true. It returns the pipeline's error
// or the trial's.
func runDWEOpts(t *testing.T, extra string, opts pipeline.Options, stop func(pipeline.Event) bool) (dweOut, error) {
	t.Helper()
	return runDWEDoc(t, esDoc+extra, opts, stop)
}

// runDWEDoc is runDWEOpts on the whole experiments file doc (experiment p).
func runDWEDoc(t *testing.T, doc string, opts pipeline.Options, stop func(pipeline.Event) bool) (dweOut, error) {
	t.Helper()
	c, err := experiment.ParseConfig("t.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["p"]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := experiment.Build(ctx, e, e.Trials(), experiment.Env{DataDir: "testdata"})
	if err != nil {
		t.Fatal(err)
	}
	if opts.WorkDir == "" {
		opts.WorkDir = t.TempDir()
	}
	var out dweOut
	opts.Observer = pipeline.ObserverFunc(func(ev pipeline.Event) {
		if ev.Kind == pipeline.Log && ev.Stage == "train-dwe" {
			out.logs = append(out.logs, ev.Msg)
		}
		if stop != nil && stop(ev) {
			cancel()
		}
	})
	res, err := pipeline.Run(ctx, b.Graph, opts)
	if err != nil {
		return out, err
	}
	tn := b.Trials[0]
	if err := res.Nodes[tn.Result].Err; err != nil {
		return out, err
	}
	for _, id := range tn.Nodes {
		nr := res.Nodes[id]
		if nr.Err != nil {
			return out, nr.Err
		}
		if dir, ok := nr.Outputs["model"]; ok {
			if out.means, err = os.ReadFile(filepath.Join(dir, "means.npy")); err != nil {
				t.Fatal(err)
			}
		}
		if dir, ok := nr.Outputs["result"]; ok {
			if out.sum, err = trialio.ReadSummary(filepath.Join(dir, "summary.json")); err != nil {
				t.Fatal(err)
			}
			if out.series, err = os.ReadFile(filepath.Join(dir, trialio.SeriesArrow)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if out.means == nil || out.sum == nil {
		t.Fatal("the trial wrote no means.npy or summary.json")
	}
	return out, nil
}

// mustRunDWE is runDWEOpts at jobs jobs and workers workers, failing the
// test on an error.
func mustRunDWE(t *testing.T, extra string, jobs, workers int) dweOut {
	t.Helper()
	out, err := runDWEOpts(t, extra, pipeline.Options{Jobs: jobs, Workers: workers}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameBits reports the summary metrics (timings left out) that differ
// between a and b, bit for bit.
func sameBits(t *testing.T, what string, a, b dweOut) {
	t.Helper()
	for k, v := range a.sum {
		if w, ok := b.sum[k]; !trialio.IsTiming(k) && (!ok || math.Float64bits(v) != math.Float64bits(w)) {
			t.Errorf("%s: summary %s: %v, %v", what, k, v, w)
		}
	}
	if len(a.sum) != len(b.sum) {
		t.Errorf("%s: %d summary metrics, %d", what, len(a.sum), len(b.sum))
	}
	if !bytes.Equal(a.means, b.means) {
		t.Errorf("%s: means.npy differs", what)
	}
	if !bytes.Equal(a.series, b.series) {
		t.Errorf("%s: the series differ", what)
	}
}

const dtype32 = "dtype = \"float32\"\n"

// TestFloat32PlanDWE: a dwe MAP trial with dtype = "float32" plans, with
// the gauge steps (goldstone, procrustes) and the minibatch phase, under a
// trial id of its own (dtype = "float64" keeps the default's id, so no
// float64 cache key changes); inference = "vi" with float32 is refused at
// plan in one line naming the trial and both keys.
func TestFloat32PlanDWE(t *testing.T) {
	build := func(extra string) (experiment.Trial, error) {
		c, err := experiment.ParseConfig("t.toml", []byte(esDoc+extra))
		if err != nil {
			t.Fatal(err)
		}
		e := c.Experiments["p"]
		_, err = experiment.Build(context.Background(), e, e.Trials(), experiment.Env{DataDir: "testdata"})
		return e.Trials()[0], err
	}
	for _, extra := range []string{"", "gauge = \"goldstone\"\n", "gauge = \"procrustes\"\n", "minibatch_words = 10\nminibatch_steps = 20\n",
		"early_stopping = true\n"} {
		if _, err := build(dtype32 + extra); err != nil {
			t.Errorf("dtype = float32 with %q: %v", extra, err)
		}
	}
	d, _ := build("")
	f64, _ := build("dtype = \"float64\"\n")
	f32, _ := build(dtype32)
	if d.ID != f64.ID || f32.ID == d.ID {
		t.Errorf("trial ids: default %s, dtype float64 %s, float32 %s: want the first two equal, the third other", d.ID, f64.ID, f32.ID)
	}
	vi, err := build(dtype32 + "inference = \"vi\"\n")
	if err == nil || !strings.Contains(err.Error(), "trial "+cmp.Or(vi.Name, vi.ID)+": ") ||
		!strings.Contains(err.Error(), `dtype = "float32"`) || !strings.Contains(err.Error(), `inference = "vi" has no float32 mode`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("dtype = float32 with inference = vi: %v, want a one-line refusal naming the trial, dtype and inference", err)
	}
	t.Log(err)
}

// TestFloat32DWE runs esDoc's trial (MAP, Adam at lr 0.3, 60 steps) in
// float32 and float64, plain, with Goldstone-GD and Procrustes rounds
// every 10 steps, and with a 20-step minibatch phase:
//   - the float32 trial agrees with the float64 one within 1e-8 relative
//     on test_ll and valid_ll, 1e-7 on final_loss and 1e-5 on final_psi.
//     The float32 mode rounds x, the gradient and Adam's moments to
//     float32 (6e-8 relative) at every step; the held-out likelihoods and
//     the loss are sums over many entries, in which those roundings
//     largely cancel, while psi is a sum of squared differences of
//     neighbouring time steps, a small share of ||Z||^2, so each entry's
//     rounding is a larger share of it. Measured (this test's log; the
//     same bits on every build): test_ll and valid_ll at most 3.8e-10
//     relative, final_loss 5.2e-9, final_psi 8.7e-7 (11x to 26x inside);
//     the final gauge gap within 1e-5 of psi (measured: 6.4e-8 at most);
//   - it ran its gauge rounds (6 of them) on the float32 parameters;
//   - its results are the same bits at --jobs 1 (1 worker) and --jobs 2
//     (2 workers): every summary metric but timings, means.npy and the
//     series.
func TestFloat32DWE(t *testing.T) {
	for _, v := range []struct{ name, extra string }{
		{"map", ""},
		{"goldstone", "gauge = \"goldstone\"\nk1 = 10\n"},
		{"procrustes", "gauge = \"procrustes\"\nk1 = 10\n"},
		{"minibatch", "minibatch_words = 10\nminibatch_steps = 20\n"},
	} {
		t.Run(v.name, func(t *testing.T) {
			s64 := mustRunDWE(t, v.extra, 1, 1).sum
			r32 := mustRunDWE(t, v.extra+dtype32, 1, 1)
			s32 := r32.sum
			if strings.Contains(v.extra, "gauge") && s32["gauge_rounds"] != 6 {
				t.Errorf("float32 trial: %v gauge rounds, want 6", s32["gauge_rounds"])
			}
			tol := map[string]float64{"test_ll": 1e-8, "valid_ll": 1e-8, "final_loss": 1e-7, "final_psi": 1e-5}
			for k, tl := range tol {
				a, b := s32[k], s64[k]
				if _, ok := s64[k]; !ok || math.IsNaN(a) || math.IsNaN(b) {
					t.Fatalf("%s: float32 %v, float64 %v", k, a, b)
				}
				e := math.Abs(a-b) / math.Abs(b)
				if !(e <= tl) {
					t.Errorf("%s: float32 %v, float64 %v: %.2g relative, tolerance %g", k, a, b, e, tl)
				} else {
					t.Logf("%s: float32 %v, float64 %v: %.2g relative", k, a, b, e)
				}
			}
			if a, b := s32["final_gauge_gap"], s64["final_gauge_gap"]; !(math.Abs(a-b) <= 1e-5*s64["final_psi"]) {
				t.Errorf("final_gauge_gap: float32 %v, float64 %v: want within 1e-5 of psi (%v)", a, b, s64["final_psi"])
			} else {
				t.Logf("final_gauge_gap: float32 %v, float64 %v (%.2g of psi)", a, b, math.Abs(a-b)/s64["final_psi"])
			}
			if a, b := s32["test_ll"], s64["test_ll"]; a == b {
				t.Errorf("test_ll %v in both modes: the float32 mode did not run in float32", a)
			}
			sameBits(t, "float32 at --jobs 1 and 2", r32, mustRunDWE(t, v.extra+dtype32, 2, 2))
		})
	}
}

// TestFloat32ResumeDWE: a float32 trial (Goldstone rounds, the minibatch
// phase, early stopping: Adam's float32 moments, the gauge fields, the
// minibatch source and the float32 best state all cross the checkpoint)
// cancelled just after its checkpoint of step 14 and run again resumes from
// its checkpoint to the same bits as an uninterrupted run: every summary
// metric but timings, means.npy and the series.
func TestFloat32ResumeDWE(t *testing.T) {
	extra := dtype32 + "gauge = \"goldstone\"\nk1 = 5\nminibatch_words = 10\nminibatch_steps = 20\nearly_stopping = true\npatience = 1000\nvalid_every = 5\n"
	policy := checkpoint.Policy{Every: 14}
	clean, err := runDWEOpts(t, extra, pipeline.Options{Jobs: 1, Workers: 1, Checkpoint: policy}, nil)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	opts := pipeline.Options{WorkDir: work, Jobs: 1, Workers: 1, Checkpoint: policy}
	_, err = runDWEOpts(t, extra, opts, func(ev pipeline.Event) bool {
		return ev.Kind == pipeline.Log && strings.HasPrefix(ev.Msg, "checkpoint at step 14 ")
	})
	if err == nil {
		t.Fatal("the cancelled run ended well")
	}
	resumed, err := runDWEOpts(t, extra, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := ""
	for _, l := range resumed.logs {
		if strings.HasPrefix(l, "resumed from the checkpoint of step ") {
			from = l
		}
	}
	if from == "" || strings.HasPrefix(from, "resumed from the checkpoint of step 0 ") {
		t.Fatalf("the second run did not resume mid-run: %q", resumed.logs)
	}
	t.Log(from)
	if !(resumed.sum["best_valid_step"] > 0) {
		t.Fatalf("best_valid_step %v", resumed.sum["best_valid_step"])
	}
	sameBits(t, "resumed and uninterrupted", clean, resumed)
}
