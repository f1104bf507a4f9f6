package pipeline

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// manifestName is the file in a cache entry that makes it complete.
const manifestName = "manifest.json"

// Validate checks that g is a well-formed DAG: every node has a unique
// non-empty ID and a stage with a valid name, output names are unique within
// a node and usable as file names, every input refers to an existing node's
// declared output or to an existing external file or directory, and there is
// no cycle. All problems found are joined into the error.
func (g *Graph) Validate() error {
	_, err := g.topo()
	return err
}

// topo validates g and returns its nodes in a deterministic topological
// order: depth-first from the nodes in graph order, inputs in sorted name
// order, post-order.
func (g *Graph) topo() ([]*Node, error) {
	if g == nil {
		return nil, errors.New("validate: nil graph")
	}
	var errs []error
	byID := make(map[string]*Node, len(g.Nodes))
	for i, n := range g.Nodes {
		switch {
		case n == nil:
			errs = append(errs, fmt.Errorf("validate: node #%d is nil", i))
			continue
		case n.ID == "":
			errs = append(errs, fmt.Errorf("validate: node #%d has an empty ID", i))
			continue
		}
		if _, dup := byID[n.ID]; dup {
			errs = append(errs, fmt.Errorf("validate: duplicate node ID %q", n.ID))
			continue
		}
		byID[n.ID] = n
		if n.Stage == nil {
			errs = append(errs, fmt.Errorf("validate: node %q has no stage", n.ID))
		} else if err := checkStageName(n.Stage.Name()); err != nil {
			errs = append(errs, fmt.Errorf("validate: node %q: %w", n.ID, err))
		}
		seen := make(map[string]bool, len(n.Outputs))
		for _, o := range n.Outputs {
			if err := checkOutputName(o); err != nil {
				errs = append(errs, fmt.Errorf("validate: node %q: %w", n.ID, err))
			}
			if seen[o] {
				errs = append(errs, fmt.Errorf("validate: node %q: duplicate output %q", n.ID, o))
			}
			seen[o] = true
		}
	}
	for _, n := range g.Nodes {
		if n == nil || byID[n.ID] != n {
			continue
		}
		for _, name := range keys(n.Inputs) {
			if err := checkRef(byID, n.Inputs[name]); err != nil {
				errs = append(errs, fmt.Errorf("validate: node %q input %q: %w", n.ID, name, err))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(g.Nodes))
	order := make([]*Node, 0, len(g.Nodes))
	var stack []string
	var visit func(n *Node) error
	visit = func(n *Node) error {
		switch color[n.ID] {
		case black:
			return nil
		case grey:
			i := len(stack) - 1
			for stack[i] != n.ID {
				i--
			}
			cyc := append(append([]string(nil), stack[i:]...), n.ID)
			return fmt.Errorf("validate: cycle %s", strings.Join(cyc, " -> "))
		}
		color[n.ID] = grey
		stack = append(stack, n.ID)
		for _, name := range keys(n.Inputs) {
			if r := n.Inputs[name]; !r.External() {
				if err := visit(byID[r.Node]); err != nil {
					return err
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n.ID] = black
		order = append(order, n)
		return nil
	}
	for _, n := range g.Nodes {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	return order, nil
}

func checkRef(byID map[string]*Node, r Ref) error {
	if r.External() {
		if r.Output != "" {
			return fmt.Errorf("ref has output %q but no node", r.Output)
		}
		if r.Path == "" {
			return errors.New("empty ref: neither node nor path")
		}
		if _, err := os.Stat(r.Path); err != nil {
			return fmt.Errorf("external input: %w", err)
		}
		return nil
	}
	if r.Path != "" {
		return fmt.Errorf("ref names both node %q and path %q", r.Node, r.Path)
	}
	up, ok := byID[r.Node]
	if !ok {
		return fmt.Errorf("no node %q", r.Node)
	}
	for _, o := range up.Outputs {
		if o == r.Output {
			return nil
		}
	}
	return fmt.Errorf("node %q has no output %q (has %q)", r.Node, r.Output, up.Outputs)
}

func checkStageName(s string) error {
	if s == "" || s == "." || s == ".." {
		return fmt.Errorf("invalid stage name %q", s)
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("invalid stage name %q: want [A-Za-z0-9._-]+", s)
		}
	}
	return nil
}

func checkOutputName(s string) error {
	if s == "" || s == "." || s == ".." || s == manifestName || strings.ContainsAny(s, "/\\\x00") {
		return fmt.Errorf("invalid output name %q", s)
	}
	return nil
}
