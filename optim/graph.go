package optim

import (
	"fmt"
	"math"
)

// Edge is an undirected edge between time steps S and T with weight W > 0.
type Edge struct {
	S, T int
	W    float64
}

// Graph is a sparse, weighted, undirected coupling graph over time steps.
// psi(Z) = 1/2 sum over edges of W ||Z_S - Z_T||_F^2 = 1/2 Tr(Z^T L Z).
type Graph struct {
	N     int    // number of time steps (nodes)
	Edges []Edge // each undirected edge once
}

// NewGraph validates and returns a graph over n nodes.
func NewGraph(n int, edges []Edge) (*Graph, error) {
	if n <= 0 {
		return nil, fmt.Errorf("graph: %d nodes", n)
	}
	seen := make(map[[2]int]bool, len(edges))
	for k, e := range edges {
		if e.S < 0 || e.S >= n || e.T < 0 || e.T >= n || e.S == e.T {
			return nil, fmt.Errorf("graph: edge %d (%d,%d) invalid for %d nodes", k, e.S, e.T, n)
		}
		if !(e.W > 0) || math.IsInf(e.W, 0) {
			return nil, fmt.Errorf("graph: edge %d (%d,%d) has weight %v, want finite > 0", k, e.S, e.T, e.W)
		}
		a, b := min(e.S, e.T), max(e.S, e.T)
		if seen[[2]int{a, b}] {
			return nil, fmt.Errorf("graph: duplicate edge (%d,%d)", a, b)
		}
		seen[[2]int{a, b}] = true
	}
	return &Graph{N: n, Edges: append([]Edge(nil), edges...)}, nil
}

// Chain is the Markov-chain coupling t -- t+1 with equal weight w on every edge.
func Chain(n int, w float64) *Graph {
	ws := make([]float64, max(n-1, 0))
	for i := range ws {
		ws[i] = w
	}
	return ChainWeights(ws)
}

// ChainWeights is a chain over len(w)+1 nodes whose edge t -- t+1 has weight w[t]
// (for example lambda / gap_t for unequal time gaps). It panics on a bad weight.
func ChainWeights(w []float64) *Graph {
	edges := make([]Edge, len(w))
	for t, v := range w {
		edges[t] = Edge{S: t, T: t + 1, W: v}
	}
	g, err := NewGraph(len(w)+1, edges)
	if err != nil {
		panic(err)
	}
	return g
}

// Connected reports whether the graph is connected.
func (g *Graph) Connected() bool {
	parent := make([]int, g.N)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	comps := g.N
	for _, e := range g.Edges {
		a, b := find(e.S), find(e.T)
		if a != b {
			parent[a] = b
			comps--
		}
	}
	return comps == 1
}

// IsTree reports whether the graph is connected and acyclic (a chain is a tree).
func (g *Graph) IsTree() bool { return len(g.Edges) == g.N-1 && g.Connected() }

// Psi returns psi(Z) = 1/2 sum over edges of W ||Z_S - Z_T||_F^2 for the blocks of x.
func Psi(x []float64, b Blocks, g *Graph) float64 { return PsiOf(x, b, g) }

// PsiOf is Psi on parameters of type F, summed in float64 (each
// difference taken between the entries widened to float64).
func PsiOf[F Float](x []F, b Blocks, g *Graph) float64 {
	checkGraph(b, g)
	var psi float64
	for _, e := range g.Edges {
		n := b.N * b.D
		zs := x[b.Offset+e.S*n : b.Offset+(e.S+1)*n]
		zt := x[b.Offset+e.T*n : b.Offset+(e.T+1)*n]
		var s float64
		for i, v := range zs {
			d := float64(v) - float64(zt[i])
			s += float64(d * d)
		}
		psi += float64(0.5 * e.W * s)
	}
	return psi
}

// AddPsiGrad adds the gradient of psi with respect to x into grad and returns psi.
func AddPsiGrad(grad, x []float64, b Blocks, g *Graph) float64 {
	checkGraph(b, g)
	if len(grad) != len(x) {
		panic(fmt.Sprintf("optim: len(grad)=%d != len(x)=%d", len(grad), len(x)))
	}
	var psi float64
	for _, e := range g.Edges {
		zs, zt := b.Block(x, e.S), b.Block(x, e.T)
		gs, gt := b.Block(grad, e.S), b.Block(grad, e.T)
		var s float64
		for i, v := range zs {
			d := v - zt[i]
			s += float64(d * d)
			gs[i] += float64(e.W * d)
			gt[i] -= float64(e.W * d)
		}
		psi += float64(0.5 * e.W * s)
	}
	return psi
}

func checkGraph(b Blocks, g *Graph) {
	if g.N != b.T {
		panic(fmt.Sprintf("optim: graph has %d nodes, blocks have T=%d", g.N, b.T))
	}
}
