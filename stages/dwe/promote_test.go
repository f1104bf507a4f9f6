package dwe_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"goldstone/internal/checkpoint"
	"goldstone/pipeline"
)

// TestLongerRunContinuesDWE: the train stage is resumable (its checkpoints
// are keyed without the steps), and a longer run of a trial continues the
// checkpoint a shorter run of it left at its end to the bits of the longer
// run from step 0: with the checkpoint kept for a longer run (pruning:
// written before the draws of the step after the end) and with one written
// after them (a run cancelled once its last step was drawn for), while the
// minibatch phase, the variational noise and the float32 mode draw from the
// trial's source at every step.
func TestLongerRunContinuesDWE(t *testing.T) {
	const short, long = 25, 40
	doc := func(steps int, extra string) string {
		return strings.Replace(esDoc, "steps = 60", fmt.Sprintf("steps = %d", steps), 1) + extra
	}
	mb := "minibatch_words = 10\nminibatch_steps = 30\n"
	for _, c := range []struct{ name, extra string }{
		{"map", mb + "gauge = \"goldstone\"\nk1 = 4\n"},
		{"vi", mb + "inference = \"vi\"\n"},
		{"float32", mb + dtype32 + "gauge = \"goldstone\"\nk1 = 4\n"},
	} {
		for _, kept := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/kept=%v", c.name, kept), func(t *testing.T) {
				policy := checkpoint.Policy{Every: 1000}
				clean, err := runDWEDoc(t, doc(long, c.extra), pipeline.Options{Jobs: 1, Workers: 1, Checkpoint: policy}, nil)
				if err != nil {
					t.Fatal(err)
				}
				work := t.TempDir()
				opts := pipeline.Options{WorkDir: work, Jobs: 1, Workers: 1, Checkpoint: policy, KeepCheckpoints: kept}
				var stop func(pipeline.Event) bool
				if !kept { // cancelled after the last step and its draws
					stop = func(ev pipeline.Event) bool {
						return ev.Kind == pipeline.Progress && ev.Stage == "train-dwe" && ev.Count == short && ev.Total == short
					}
				}
				first, err := runDWEDoc(t, doc(short, c.extra), opts, stop)
				if kept != (err == nil) {
					t.Fatalf("the run of %d steps: %v", short, err)
				}
				at := fmt.Sprintf("checkpoint at step %d of %d: ", short, short)
				if !slices.ContainsFunc(first.logs, func(l string) bool { return strings.HasPrefix(l, at) }) {
					t.Fatalf("the run of %d steps left no checkpoint at its end: %q", short, first.logs)
				}
				resumed, err := runDWEDoc(t, doc(long, c.extra), opts, nil)
				if err != nil {
					t.Fatal(err)
				}
				from := fmt.Sprintf("resumed from the checkpoint of step %d of %d ", short, long)
				if !slices.ContainsFunc(resumed.logs, func(l string) bool { return strings.HasPrefix(l, from) }) {
					t.Fatalf("the run of %d steps did not continue the shorter one's: %q", long, resumed.logs)
				}
				sameBits(t, "continued and from step 0", clean, resumed)
			})
		}
	}
}
