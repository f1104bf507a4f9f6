package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/internal/checkpoint"
)

// TestCheckpointLifetime: a stage's checkpoint directory is named by its
// stage and cache key and carries that key; it survives a cancelled run
// (the next run of the node reads it), and is removed once the node ends,
// done or failed, and before a forced run.
func TestCheckpointLifetime(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.txt")
	writeFile(t, src, "hello")
	var seen []string // what each run of the stage found
	var ckpt Checkpoint
	fail := false
	ctx, cancel := context.WithCancel(context.Background())
	s := &catStage{suffix: "-a", ins: []string{"in"}, hook: func(_ context.Context, io *IO) error {
		ckpt = io.Checkpoint()
		st, _, err := ckpt.Load()
		if err != nil {
			return err
		}
		if st == nil {
			seen = append(seen, "none")
		} else {
			seen = append(seen, st.Path())
		}
		w := checkpoint.NewState(7)
		w.Ints("step", 7)
		if _, err := ckpt.Save(w); err != nil {
			return err
		}
		if fail {
			return errors.New("boom")
		}
		if cancel != nil {
			cancel() // stopped after saving
			return context.Canceled
		}
		return nil
	}}
	g := addNode(nil, &Node{ID: "A", Stage: s, Inputs: map[string]Ref{"in": File(src)}, Outputs: []string{"out"}})
	opts := Options{WorkDir: filepath.Join(dir, "work"), Jobs: 1, Checkpoint: checkpoint.Policy{Every: 3}}

	Run(ctx, g, opts)
	if ckpt.Policy.Every != 3 || !strings.HasPrefix(ckpt.Key, "cat/") || ckpt.Path != filepath.Join(opts.WorkDir, "checkpoints", "cat", strings.TrimPrefix(ckpt.Key, "cat/")) {
		t.Fatalf("checkpoint of the node: %+v", ckpt)
	}
	if _, err := os.Stat(ckpt.Path); err != nil {
		t.Fatalf("a cancelled node's checkpoint is gone: %v", err)
	}
	cancel = nil
	if _, err := Run(context.Background(), g, opts); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != "none" || !strings.HasSuffix(seen[1], "000000000007.ckpt") {
		t.Fatalf("the runs found %v", seen)
	}
	if _, err := os.Stat(ckpt.Path); !os.IsNotExist(err) {
		t.Fatalf("a done node's checkpoint is left: %v", err)
	}

	// Failed: removed. Forced: removed before the stage runs.
	s.suffix, fail = "-b", true
	if _, err := Run(context.Background(), g, opts); err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(ckpt.Path); !os.IsNotExist(err) {
		t.Fatalf("a failed node's checkpoint is left: %v", err)
	}
	fail, seen = false, nil
	(&ckpt).Save(checkpoint.NewState(1))
	opts.Force = true
	if _, err := Run(context.Background(), g, opts); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != "none" {
		t.Fatalf("a forced run found %v", seen)
	}
	if io := NewIO(nil, nil, 1, nil); !io.Checkpoint().Policy.Off {
		t.Error("NewIO's checkpoint policy is on")
	}
}
