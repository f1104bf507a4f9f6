package pipeline

import (
	"fmt"
	"sort"

	"goldstone/internal/fault"
)

// IO is a running stage's view of its node: where its inputs are, where its
// outputs go, how many cores it may use, and where its log lines go.
type IO struct {
	node, stage string
	key         CacheKey
	inputs      map[string]string
	outputs     map[string]string
	workers     int
	emit        func(Event)
	failed      map[string]string // Tolerant node: input name -> upstream error
	ckpt        Checkpoint
}

// NewIO returns an IO outside of a runner, for testing a Stage on its own:
// inputs and outputs map names to paths, workers is the core hint (values
// below 1 mean 1), and Log and Progress events go to obs (nil discards them).
func NewIO(inputs, outputs map[string]string, workers int, obs Observer) *IO {
	io := &IO{inputs: inputs, outputs: outputs, workers: max(1, workers)}
	if obs != nil {
		io.emit = obs.Event
	}
	return io
}

// Input returns the path of input name: a file or directory the stage must
// only read. It panics if the node has no such input.
func (io *IO) Input(name string) string {
	p, ok := io.inputs[name]
	if !ok {
		panic(fmt.Sprintf("pipeline: node %q has no input %q (have %v)", io.node, name, keys(io.inputs)))
	}
	return p
}

// InputFailure reports whether input name of a Tolerant node is missing
// because the upstream node that makes it failed, and gives that node's
// error text.
func (io *IO) InputFailure(name string) (msg string, failed bool) {
	msg, failed = io.failed[name]
	return msg, failed
}

// HasInput reports whether the node has input name; for optional inputs.
// For a Tolerant node it is false for inputs whose upstream failed.
func (io *IO) HasInput(name string) bool {
	_, ok := io.inputs[name]
	return ok
}

// Output returns the path where the stage must write output name, as a file
// or as a directory it creates itself. The parent directory exists. It
// panics if the node declares no such output.
func (io *IO) Output(name string) string {
	p, ok := io.outputs[name]
	if !ok {
		panic(fmt.Sprintf("pipeline: node %q declares no output %q (have %v)", io.node, name, keys(io.outputs)))
	}
	return p
}

// Workers is the number of goroutines the stage should use.
func (io *IO) Workers() int { return io.workers }

// Node returns the ID of the running node ("" outside a runner).
func (io *IO) Node() string { return io.node }

// Logf sends a Log event with the formatted message to the observer.
func (io *IO) Logf(format string, args ...any) {
	if io.emit == nil {
		return
	}
	io.emit(Event{Kind: Log, Node: io.node, Stage: io.stage, Key: io.key, Msg: fmt.Sprintf(format, args...)})
}

// Progress sends a Progress event (count of total units done) to the
// observer. Events are serialised, so call it at most a few times a second.
func (io *IO) Progress(count, total int64) {
	io.ProgressValues(count, total, nil)
}

// ProgressValues is Progress with the stage's latest figures (a loss, for
// example) for progress displays; the same rate rules apply.
func (io *IO) ProgressValues(count, total int64, values map[string]float64) {
	fault.Point("progress:" + io.stage)
	if io.emit == nil {
		return
	}
	io.emit(Event{Kind: Progress, Node: io.node, Stage: io.stage, Key: io.key, Count: count, Total: total, Values: values})
}

func keys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
