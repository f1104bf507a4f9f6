package optim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Procrustes is exact gauge fixing on a tree-shaped coupling (a chain is a
// tree). Each edge term of psi depends only on the relative map
// Q = R_p^T R_c between parent p and child c, and on a tree those relative
// maps are independent, so setting each to its orthogonal-Procrustes optimum
// Q = argmin ||Q Z_c - Z_p||_F = U V^T, with Z_p Z_c^T = U S V^T, minimises psi
// globally over per-time-step orthogonal maps. The absolute maps are chained
// from a BFS root: R_root = I, R_c = R_p Q_c. Edge weights do not change the
// per-edge optimum.
//
// By default the maps range over O(d) (reflections allowed, which can undo a
// reflected time step that rotations cannot); SO restricts them to rotations
// (the sign of the last singular vector is flipped when det(U V^T) < 0).
//
// The SVDs are SVD's one-sided Jacobi (the same bits on every build).
//
// The zero value is ready for Init. After Init, Round does not allocate.
type Procrustes struct {
	SO   bool  // restrict to rotations, SO(d); default O(d)
	Pool *Pool // runs the per-edge and per-step loops; nil runs them inline

	b      Blocks
	d, dd  int
	edges  []Edge
	order  []int // BFS order, order[0] is the root
	parent []int // parent node, -1 for the root
	pedge  []int // edge to the parent
	ready  bool  // Init succeeded

	m       []float64 // E x dd: M_e = Z_S Z_T^T
	q       []float64 // E x dd: optimal relative map of the child edge
	rot     []float64 // T x dd: absolute maps
	svdA    []float64 // E x dd
	svdS    []float64 // E x d
	svdUT   []float64 // E x dd: U^T
	svdVT   []float64 // E x dd
	rowBuf  []float64 // max(T,E) x scratchLen(d): scratch of node t (rotate) or edge k (overlap)
	edgePsi []float64 // E
	edgeGap []float64 // E

	rx    roundX // parameters during a Round or Gap
	ovFn  func(c, lo, hi int)
	svdFn func(c, lo, hi int)
	appFn func(c, lo, hi int)
	psiFn func(c, lo, hi int)
}

var _ Gauge = (*Procrustes)(nil)

// Init implements Gauge. It returns an error unless the graph is a tree.
func (p *Procrustes) Init(b Blocks, g *Graph) error {
	p.ready = false
	if g == nil {
		return errors.New("procrustes: nil graph")
	}
	if g.N != b.T {
		return fmt.Errorf("procrustes: graph has %d nodes, blocks have T=%d", g.N, b.T)
	}
	if b.T <= 0 || b.N < 0 || b.D <= 0 {
		return fmt.Errorf("procrustes: bad blocks %+v", b)
	}
	if !g.IsTree() {
		return fmt.Errorf("procrustes: coupling graph (%d nodes, %d edges) is not a tree", g.N, len(g.Edges))
	}
	T, d := b.T, b.D
	p.b, p.d, p.dd = b, d, d*d
	p.edges = append(p.edges[:0], g.Edges...)
	p.order, p.parent, p.pedge = bfsTree(adjacency(T, p.edges), p.order, p.parent, p.pedge)
	E, dd := len(p.edges), p.dd
	p.m = slices.Grow(p.m[:0], E*dd)[:E*dd]
	p.q = slices.Grow(p.q[:0], E*dd)[:E*dd]
	p.rot = slices.Grow(p.rot[:0], T*dd)[:T*dd]
	p.svdA = slices.Grow(p.svdA[:0], E*dd)[:E*dd]
	p.svdS = slices.Grow(p.svdS[:0], E*d)[:E*d]
	p.svdUT = slices.Grow(p.svdUT[:0], E*dd)[:E*dd]
	p.svdVT = slices.Grow(p.svdVT[:0], E*dd)[:E*dd]
	nr := max(T, E) * scratchLen(d)
	p.rowBuf = slices.Grow(p.rowBuf[:0], nr)[:nr]
	p.edgePsi = slices.Grow(p.edgePsi[:0], E)[:E]
	p.edgeGap = slices.Grow(p.edgeGap[:0], E)[:E]
	if p.ovFn == nil {
		p.ovFn, p.svdFn, p.appFn, p.psiFn = p.overlapChunk, p.svdChunk, p.applyChunk, p.psiChunk
	}
	p.ready = true
	return nil
}

// Round implements Gauge: it applies the psi-minimising maps to x. It never
// rejects: the result is the global minimum of psi over the maps.
func (p *Procrustes) Round(x []float64) RoundStats {
	p.begin(len(x))
	p.rx.x = x
	defer p.rx.release()
	return p.round()
}

// Round32 implements Gauge32: the round on float32 parameters (see
// gauge32.go).
func (p *Procrustes) Round32(x []float32) RoundStats {
	p.begin(len(x))
	p.rx.x32 = x
	defer p.rx.release()
	return p.round()
}

// round is Round on p.rx.
func (p *Procrustes) round() RoundStats {
	st := p.solve()
	if len(p.edges) == 0 {
		return st
	}
	// The predicted change is minus the gauge gap (exact: no step size).
	var gap float64
	for _, v := range p.edgeGap {
		gap += v
	}
	st.Predicted, st.Scale = -gap, 1
	// Chain the relative maps from the root.
	d, dd := p.d, p.dd
	setIdentity(p.rot[p.order[0]*dd:(p.order[0]+1)*dd], d)
	for _, c := range p.order[1:] {
		par, k := p.parent[c], p.pedge[c]
		gemm(false, false, d, d, d, 1, p.rot[par*dd:(par+1)*dd], d, p.q[k*dd:(k+1)*dd], d, 0, p.rot[c*dd:(c+1)*dd], d, nil)
	}
	p.Pool.Chunks(p.b.T, 1, p.appFn)
	p.Pool.Chunks(len(p.edges), 1, p.psiFn)
	st.PsiAfter = 0
	for _, v := range p.edgePsi {
		st.PsiAfter += v
	}
	return st
}

// Gap returns the gauge gap psi(x) - min_R psi(R x) over the maps allowed by
// p (O(d), or SO(d) if p.SO), without changing x. It is computed per edge as
// w (sum of the (signed) singular values of M - Tr M). After Init it does not
// allocate.
func (p *Procrustes) Gap(x []float64) float64 {
	p.begin(len(x))
	p.rx.x = x
	defer p.rx.release()
	return p.gap()
}

// Gap32 is Gap on float32 parameters (the overlaps accumulated in float64
// from the widened entries, see gauge32.go).
func (p *Procrustes) Gap32(x []float32) float64 {
	p.begin(len(x))
	p.rx.x32 = x
	defer p.rx.release()
	return p.gap()
}

func (p *Procrustes) gap() float64 {
	p.solve()
	var gap float64
	for _, v := range p.edgeGap {
		gap += v
	}
	return gap
}

func (p *Procrustes) begin(n int) {
	if !p.ready {
		panic("optim: Procrustes used before Init")
	}
	if p.b.Offset+p.b.Len() > n {
		panic(fmt.Sprintf("optim: blocks %+v do not fit in len(x)=%d", p.b, n))
	}
}

// solve computes the overlaps, psi and the per-edge optima of p.rx.
func (p *Procrustes) solve() RoundStats {
	E := len(p.edges)
	p.Pool.Chunks(E, 1, p.ovFn)
	st := RoundStats{Predicted: math.NaN(), Rate: math.NaN(), Concentration: math.NaN()}
	for _, v := range p.edgePsi {
		st.PsiBefore += v
	}
	st.PsiAfter, st.PsiStep = st.PsiBefore, st.PsiBefore
	p.Pool.Chunks(E, 1, p.svdFn)
	return st
}

// scratch returns scratch buffer k: node k's in applyChunk, edge k's in
// overlapChunk (the two never run at the same time).
func (p *Procrustes) scratch(k int) []float64 {
	n := scratchLen(p.d)
	return p.rowBuf[k*n : (k+1)*n]
}

func (p *Procrustes) overlapChunk(k, _, _ int) {
	e := p.edges[k]
	dist, _, _ := p.rx.overlap(p.b, p.m[k*p.dd:(k+1)*p.dd], e.S, e.T, p.scratch(k))
	p.edgePsi[k] = e.W * dist
}

func (p *Procrustes) psiChunk(k, _, _ int) {
	e := p.edges[k]
	p.edgePsi[k] = e.W * p.rx.halfSqDist(p.b, e.S, e.T)
}

// svdChunk solves the Procrustes problem of edge k: with parent p and child
// c, M_pc = Z_p Z_c^T = U S V^T and Q = U V^T (U diag(1,..,1,-1) V^T for SO
// when det(U V^T) < 0). It also records the edge's gauge gap
// w (sum_i s_i sigma_i - Tr M).
func (p *Procrustes) svdChunk(k, _, _ int) {
	d, dd := p.d, p.dd
	e := p.edges[k]
	m := p.m[k*dd : (k+1)*dd]
	a := p.svdA[k*dd : (k+1)*dd]
	// The child is the endpoint whose parent edge is k.
	parentIsS := p.pedge[e.T] == k
	if parentIsS {
		copy(a, m) // M_pc = M_ST
	} else {
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				a[i*d+j] = m[j*d+i]
			}
		}
	}
	var tr float64
	for i := 0; i < d; i++ {
		tr += m[i*d+i]
	}
	s := p.svdS[k*d : (k+1)*d]
	ut := p.svdUT[k*dd : (k+1)*dd]
	vt := p.svdVT[k*dd : (k+1)*dd]
	q := p.q[k*dd : (k+1)*dd]
	if !SVD(ut, s, vt, a, d, d) {
		// The overlap is not finite, or its squares overflow: the iterate
		// has diverged. The map and the gap are NaN, so a round makes x
		// NaN and the driver stops with its "diverged" error, as for any
		// diverged step (a panic would hide that error).
		for i := range q {
			q[i] = math.NaN()
		}
		p.edgeGap[k] = math.NaN()
		return
	}
	gemm(true, false, d, d, d, 1, ut, d, vt, d, 0, q, d, nil) // U V^T
	var sum float64
	for _, v := range s {
		sum += v
	}
	if p.SO && detSign(q, d, a) < 0 {
		// Flip the last left singular vector: Q -= 2 u_d v_d^T.
		for i := 0; i < d; i++ {
			ui := ut[(d-1)*d+i]
			for j := 0; j < d; j++ {
				q[i*d+j] -= float64(2 * ui * vt[(d-1)*d+j])
			}
		}
		sum -= 2 * s[d-1]
	}
	p.edgeGap[k] = e.W * (sum - tr)
}

func (p *Procrustes) applyChunk(t, _, _ int) {
	p.rx.rotate(p.b, t, p.rot[t*p.dd:(t+1)*p.dd], p.scratch(t))
}

// gapCache keeps one inline (Pool nil) Procrustes per (blocks, graph) for
// GaugeGap so repeated calls do not allocate.
var gapCache = sync.Pool{New: func() any { return new(Procrustes) }}

// GaugeGap returns psi(x) - min psi(R_1 Z_1, ..., R_T Z_T) over orthogonal
// maps R_t in O(d): the energy stored in Goldstone modes. It is exact on
// trees and returns an error for any other graph. It runs serially and does
// not allocate in steady state for a fixed (b, g).
func GaugeGap(x []float64, b Blocks, g *Graph) (float64, error) {
	if g == nil {
		return 0, errors.New("gauge gap: nil graph")
	}
	p := gapCache.Get().(*Procrustes)
	defer gapCache.Put(p)
	if !p.ready || p.b != b || !slices.Equal(p.edges, g.Edges) {
		p.Pool, p.SO = nil, false
		if err := p.Init(b, g); err != nil {
			p.ready = false
			return 0, fmt.Errorf("gauge gap: %w", err)
		}
	}
	return p.Gap(x), nil
}
