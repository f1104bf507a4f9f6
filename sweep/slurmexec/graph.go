package slurmexec

import (
	"goldstone/pipeline"
)

// subgraph returns the nodes of g that targets need: the targets and every
// node they depend on, in g's order.
func subgraph(g *pipeline.Graph, targets ...string) *pipeline.Graph {
	byID := make(map[string]*pipeline.Node, len(g.Nodes))
	for _, n := range g.Nodes {
		byID[n.ID] = n
	}
	keep := map[string]bool{}
	var visit func(id string)
	visit = func(id string) {
		if keep[id] {
			return
		}
		n, ok := byID[id]
		if !ok {
			return
		}
		keep[id] = true
		for _, r := range n.Inputs {
			if !r.External() {
				visit(r.Node)
			}
		}
	}
	for _, t := range targets {
		visit(t)
	}
	out := &pipeline.Graph{}
	for _, n := range g.Nodes {
		if keep[n.ID] {
			out.Add(n)
		}
	}
	return out
}

// without returns the nodes of g not in drop, and not depending on any.
func without(g *pipeline.Graph, drop map[string]bool) *pipeline.Graph {
	gone := map[string]bool{}
	changed := true
	for id := range drop {
		gone[id] = true
	}
	for changed {
		changed = false
		for _, n := range g.Nodes {
			if gone[n.ID] {
				continue
			}
			for _, r := range n.Inputs {
				if !r.External() && gone[r.Node] {
					gone[n.ID], changed = true, true
					break
				}
			}
		}
	}
	out := &pipeline.Graph{}
	for _, n := range g.Nodes {
		if !gone[n.ID] {
			out.Add(n)
		}
	}
	return out
}
