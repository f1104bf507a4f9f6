package pipeline_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"goldstone/pipeline"
)

// upper writes its input "in" upper-cased, with a suffix, to output "out".
type upper struct{ Suffix string }

func (upper) Name() string    { return "upper" }
func (upper) Version() string { return "1" }
func (u upper) Params() any   { return u }
func (u upper) Run(ctx context.Context, io *pipeline.IO) error {
	b, err := os.ReadFile(io.Input("in"))
	if err != nil {
		return err
	}
	return os.WriteFile(io.Output("out"), []byte(strings.ToUpper(string(b))+u.Suffix), 0o644)
}

func Example() {
	dir, err := os.MkdirTemp("", "pipeline-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "greeting.txt")
	if err := os.WriteFile(src, []byte("hello"), 0o644); err != nil {
		log.Fatal(err)
	}

	g := &pipeline.Graph{}
	g.Add(&pipeline.Node{ID: "shout", Stage: upper{"!"}, Inputs: map[string]pipeline.Ref{"in": pipeline.File(src)}, Outputs: []string{"out"}})
	g.Add(&pipeline.Node{ID: "again", Stage: upper{"?"}, Inputs: map[string]pipeline.Ref{"in": pipeline.Out("shout", "out")}, Outputs: []string{"out"}})

	opts := pipeline.Options{
		WorkDir: filepath.Join(dir, "work"),
		Jobs:    1,
		Observer: pipeline.ObserverFunc(func(e pipeline.Event) {
			fmt.Println(strings.TrimSpace(fmt.Sprintf("%-7s %-5s %s", e.Kind, e.Node, e.Reason)))
		}),
	}
	for run := 1; run <= 2; run++ {
		fmt.Println("run", run)
		res, err := pipeline.Run(context.Background(), g, opts)
		if err != nil {
			log.Fatal(err)
		}
		out, _ := os.ReadFile(res.Nodes["again"].Outputs["out"])
		fmt.Println(string(out))
	}

	g.Nodes[0].Stage = upper{"!!"}
	items, err := pipeline.Plan(context.Background(), g, opts)
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range items {
		fmt.Printf("plan %s: %s\n", it.Node, it.Reason)
	}
	// Output:
	// run 1
	// planned shout no cache entry
	// planned again upstream shout will run
	// started shout no cache entry
	// done    shout
	// started again no cache entry
	// done    again
	// HELLO!?
	// run 2
	// planned shout cached
	// planned again cached
	// cached  shout cached
	// cached  again cached
	// HELLO!?
	// plan shout: params changed: Suffix
	// plan again: upstream shout will run
}
