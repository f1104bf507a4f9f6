package pipeline

import (
	"context"
	"fmt"
)

// Stage is one kind of computation. A Stage value with its Params is
// immutable: the runner may call Name, Version and Params several times and
// expects the same answers.
type Stage interface {
	// Name is the stage kind, e.g. "ingest". It names a cache directory and
	// must match [A-Za-z0-9._-]+.
	Name() string
	// Version changes whenever the stage's output for the same params and
	// inputs changes.
	Version() string
	// Params holds everything that affects the output. It is marshalled
	// with encoding/json and canonicalised by CanonicalJSON; fields tagged
	// `json:"-"` do not count.
	Params() any
	// Run reads its inputs from io.Input, writes every declared output at
	// io.Output and returns nil only if all of them are complete. It stops
	// early with ctx.Err() when ctx is done.
	Run(ctx context.Context, io *IO) error
}

// Ref names an input of a node: output Output of node Node, or, when Node is
// empty, the external file or directory at Path.
type Ref struct {
	Node, Output string
	Path         string
}

// Out returns a Ref to output output of node node.
func Out(node, output string) Ref { return Ref{Node: node, Output: output} }

// File returns a Ref to the external file or directory at path.
func File(path string) Ref { return Ref{Path: path} }

// External reports whether r names an external file or directory.
func (r Ref) External() bool { return r.Node == "" }

func (r Ref) String() string {
	if r.External() {
		return "file " + r.Path
	}
	return r.Node + "." + r.Output
}

// Node is one vertex of a Graph: a stage applied to named inputs, producing
// named outputs.
//
// A Tolerant node runs once every upstream node has ended, even when some
// failed: the inputs they would have provided are absent from its IO
// (HasInput is false, InputFailure gives the error), and its cache key
// counts each such input as failed with its error text. A report over
// trials that may fail is such a node. Cancellation still stops it.
type Node struct {
	ID       string
	Stage    Stage
	Inputs   map[string]Ref
	Outputs  []string
	Tolerant bool
}

// Graph is a set of nodes; edges are the Refs in the nodes' inputs.
type Graph struct {
	Nodes []*Node
}

// Add appends n to g and returns n.
func (g *Graph) Add(n *Node) *Node {
	g.Nodes = append(g.Nodes, n)
	return n
}

// PanicError is the error of a node whose stage panicked.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("stage panicked: %v", e.Value) }
