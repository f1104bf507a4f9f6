package optim

import "slices"

// adjacency returns the incident half-edges of every node.
func adjacency(T int, edges []Edge) [][]halfEdge {
	adj := make([][]halfEdge, T)
	for k, e := range edges {
		adj[e.S] = append(adj[e.S], halfEdge{e: k, other: e.T, w: e.W, fwd: true})
		adj[e.T] = append(adj[e.T], halfEdge{e: k, other: e.S, w: e.W, fwd: false})
	}
	return adj
}

// bfsTree orders the nodes of a connected graph breadth-first from node 0
// and returns, reusing the given slices, the order, each node's parent (-1
// for the root) and the index of the edge to its parent (-1 for the root).
func bfsTree(adj [][]halfEdge, order, parent, pedge []int) ([]int, []int, []int) {
	T := len(adj)
	order = append(order[:0], 0)
	parent = slices.Grow(parent[:0], T)[:T]
	pedge = slices.Grow(pedge[:0], T)[:T]
	for i := range parent {
		parent[i] = -2
	}
	parent[0], pedge[0] = -1, -1
	for i := 0; i < len(order); i++ {
		u := order[i]
		for _, he := range adj[u] {
			if parent[he.other] != -2 {
				continue
			}
			parent[he.other] = u
			pedge[he.other] = he.e
			order = append(order, he.other)
		}
	}
	return order, parent, pedge
}

// initFlip prepares the BFS tree and buffers of the domain-wall flips.
func (g *Goldstone) initFlip(adj [][]halfEdge) {
	T, d, dd := g.b.T, g.d, g.dd
	g.order, g.parent, g.pedge = bfsTree(adj, g.order, g.parent, g.pedge)
	g.flipRot = slices.Grow(g.flipRot[:0], T*dd)[:T*dd]
	if cap(g.flipped) < T {
		g.flipped = make([]bool, T)
	}
	g.flipped = g.flipped[:T]
	g.fa = slices.Grow(g.fa[:0], dd)[:dd]
	g.fs = slices.Grow(g.fs[:0], d)[:d]
	g.fu = slices.Grow(g.fu[:0], dd)[:dd]
	g.fvt = slices.Grow(g.fvt[:0], dd)[:dd]
	if g.flipFn == nil {
		g.flipFn = g.flipChunk
	}
}

// flipWalls removes the reflection domain walls of a tree coupling (see
// Goldstone) using the overlaps of the current round, and returns the number
// of time steps it reflected. It needs g.m computed for the current x.
func (g *Goldstone) flipWalls() int {
	d, dd := g.d, g.dd
	walls := false
	for k := range g.edges {
		if detSign(g.m[k*dd:(k+1)*dd], d, g.fa) < 0 {
			walls = true
			break
		}
	}
	if !walls {
		return 0
	}
	n := 0
	root := g.order[0]
	setIdentity(g.flipRot[root*dd:(root+1)*dd], d)
	g.flipped[root] = false
	for _, c := range g.order[1:] {
		p, k := g.parent[c], g.pedge[c]
		rc, rp := g.flipRot[c*dd:(c+1)*dd], g.flipRot[p*dd:(p+1)*dd]
		m := g.m[k*dd : (k+1)*dd]
		if detSign(m, d, g.fa) >= 0 {
			copy(rc, rp)
			g.flipped[c] = g.flipped[p]
		} else {
			// M_pc = Z_p Z_c^T is M_e when p is the edge's S end, else M_e^T.
			if g.edges[k].S == p {
				copy(g.fa, m)
			} else {
				for i := 0; i < d; i++ {
					for j := 0; j < d; j++ {
						g.fa[i*d+j] = m[j*d+i]
					}
				}
			}
			if !SVD(g.fu, g.fs, g.fvt, g.fa, d, d) {
				copy(rc, rp) // leave this wall alone
				g.flipped[c] = g.flipped[p]
				continue
			}
			// Q = U V^T (fu holds U^T); R_c = R_p Q.
			gemm(true, false, d, d, d, 1, g.fu, d, g.fvt, d, 0, g.fa, d, nil)
			gemm(false, false, d, d, d, 1, rp, d, g.fa, d, 0, rc, d, nil)
			g.flipped[c] = true
		}
		if g.flipped[c] {
			n++
		}
	}
	g.Pool.Chunks(g.b.T, 1, g.flipFn)
	return n
}

func (g *Goldstone) flipChunk(t, _, _ int) {
	if !g.flipped[t] {
		return
	}
	g.rx.rotate(g.b, t, g.flipRot[t*g.dd:(t+1)*g.dd], g.scratch(t))
}
