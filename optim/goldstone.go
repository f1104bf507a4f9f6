package optim

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Rotation selects how Goldstone applies the gauge fields to the parameters.
type Rotation int

const (
	// RotationExact applies R_t = exp(Gamma_t), an exact rotation (the default).
	RotationExact Rotation = iota
	// RotationLinear applies the paper's first-order form Z_t <- Z_t + Gamma_t Z_t.
	RotationLinear
)

// DefaultK2 is the number of natural-gradient gauge steps per round when Goldstone.K2 is zero.
const DefaultK2 = 10

// Search selects what a Goldstone round does when its step would raise psi.
type Search int

const (
	// SearchNone applies the step as it is: the guard rejects a round whose
	// step would raise psi (unless NoGuard).
	SearchNone Search = iota
	// SearchDirection is a backtracking line search along the gauge
	// direction: the applied maps are exp(alpha Gamma_t) (or I + alpha
	// Gamma_t), alpha = 1, 1/2, 1/4, ..., the first alpha whose predicted
	// change of psi is not positive is taken (at most MaxBacktracks halvings),
	// and the gauge fields kept for the next round are alpha G. The guard
	// rejects the round only when no alpha lowers psi.
	SearchDirection
	// SearchRate backtracks on the gauge learning rate: when the step
	// would raise psi, the round's K2 natural-gradient steps are taken
	// again from the fields the round started with, at rho'/2, rho'/4, ...
	// (at most MaxBacktracks halvings), and the first step whose predicted
	// change of psi is not positive is applied. Unlike SearchDirection it
	// also helps when the K2 steps diverge along stiff gauge modes at rho'
	// (their direction is then no descent direction at any length). The
	// guard rejects the round only when no rate lowers psi.
	SearchRate
)

// DefaultMaxBacktracks is the number of halvings a line search tries when
// Goldstone.MaxBacktracks is zero (alpha down to 2^-20, about 1e-6).
const DefaultMaxBacktracks = 20

// Goldstone is the symmetry step of Goldstone-GD (Bamler and Mandt, ICML
// 2018). A round
//
//  1. computes the overlaps M_st = Z_s Z_t^T for the edges of the graph;
//  2. takes K2 natural-gradient steps on the gauge fields G_t (d x d) of the
//     second-order model L2(G) (the paper's L with two primes) of
//     psi(exp(Gamma_1) Z_1, ...) - psi(Z), Gamma_t = G_t - G_t^T:
//     G_t <- G_t - rho' sum_t' (L^+)_tt' dL2/dG_t', with L^+ the
//     pseudoinverse of the graph Laplacian;
//  3. applies R_t = exp(Gamma_t) (RotationExact) or I + Gamma_t
//     (RotationLinear) to every Z_t.
//
// Interpretation of "G is kept between rounds" (the paper's momentum): the
// model L2 is always expanded around the current Z (M is recomputed every
// round, after the previous round's rotation was applied), and the K2 steps
// start from the G the previous round ended with instead of from zero; the
// rotation built from the final G is applied to the current Z. Reset starts
// every round from G = 0 instead.
//
// Guard (on unless NoGuard): before touching x, the round predicts psi after
// the rotation exactly from the overlaps (and, for RotationLinear, the Gram
// matrices C_t = Z_t Z_t^T): psi(RZ) - psi(Z) = sum over edges (s,t) of
// w [1/2 (q_s + q_t) - Tr(R_t^T R_s M_st) + Tr M_st], q_t = Tr(Gamma_t C_t
// Gamma_t^T) (zero for a rotation). If psi would rise, or an exp(Gamma_t) is
// not orthogonal to 1e-9 (huge Gamma), x is left untouched, G is reset to
// zero and the round reports Rejected. This needs no copy of the parameters.
// The prediction is made (and reported in RoundStats.Predicted) with or
// without the guard.
//
// Line search (Search): instead of rejecting a step that would raise psi,
// SearchDirection shortens it along the gauge direction (exp(alpha
// Gamma_t)), SearchRate takes the K2 natural-gradient steps again at half
// the gauge rate; both halve until the predicted change of psi is not
// positive. Measured on ml-latest-small (d = 30, lambda = 10, bias terms,
// AdaGrad lr 1, movielens-rounds): at the paper's rate the K2 steps predict
// a rise of psi (up to 21 times the gauge gap the round starts from) and
// the guard rejected 5 of 6 rounds; at half the rate every round lowers
// psi, while the shortened direction needs 5-20 halvings and lowers it by
// 3e-4 at most (README, "Gauge rounds on MovieLens").
//
// Domain walls (unless NoFlip; tree couplings only): the local loss is
// invariant under O(d), but exp(Gamma) only reaches rotations, SO(d). When
// neighbouring steps converge to fits that differ by a reflection, no rotation
// can remove the psi stored in that "domain wall", and gradient descent and
// the natural-gradient steps stay stuck on it. An edge (p, c) of the tree is a
// wall when det M_pc < 0 (its best orthogonal map Z_c -> Z_p is a
// reflection). Each round first applies, to the whole subtree beyond every
// wall edge, that edge's optimal orthogonal map Q = U V^T (M_pc = U S V^T),
// composed along the path from the root. Edges inside a subtree keep their
// psi (both ends get the same map); each wall edge drops to its O(d)
// minimum; so psi never rises, the local loss is unchanged, and the gauge
// fields are reset (they were expressed in the old frames). Rounds without
// walls are the paper's algorithm unchanged.
//
// The zero value is ready for Init. Rounds run on Pool (the caller's; nil:
// inline), parallel over edges and time steps with fixed chunks, so results
// are bit-identical at any number of workers.
// After Init, Round does not allocate (for d <= 64).
type Goldstone struct {
	K2   int     // natural-gradient steps per round; 0 means DefaultK2
	Rate float64 // rho'; <= 0 means automatic 1/(T N <Z^2>), <Z^2> the mean squared block entry
	// RateScale multiplies rho' (automatic or given); 0 means 1. The
	// stability map of issue 27 runs the paper's update at rho' times 1,
	// 1/2, 1/4, 1/8.
	RateScale float64
	// FlipsOnly makes a round the wall flips alone (tree couplings): no
	// natural-gradient steps, no rotation (an ablation: what the flips do).
	FlipsOnly bool
	// Concentration makes every round measure RoundStats.Concentration
	// (one more Gram matrix per time step: a pass over the blocks).
	Concentration bool
	Rotation      Rotation // RotationExact (default) or RotationLinear
	Reset         bool     // start every round from G = 0 (default: keep G, as the paper)
	NoGuard       bool     // apply rounds even if they raise psi
	NoFlip        bool     // on tree couplings, do not remove reflection domain walls (see Goldstone)
	Search        Search   // SearchNone (default), SearchDirection or SearchRate: a line search instead of rejecting
	// MaxBacktracks bounds the halvings of SearchBacktrack; 0 means DefaultMaxBacktracks.
	MaxBacktracks int
	Pool          *Pool // runs the parallel loops; nil runs them inline

	b     Blocks
	d, dd int
	edges []Edge
	adj   [][]halfEdge // incident edges per node
	pinv  []float64    // T x T
	spinv []float64    // T x T: -rho' L^+ of the current round
	ready bool         // Init succeeded

	m       []float64 // E x dd: M_e = Z_S Z_T^T
	gram    []float64 // T x dd: C_t = Z_t Z_t^T (linear rotation only)
	f       []float64 // T x dd: F_s = sum_t A_st M_st
	gf      []float64 // T x dd: gauge fields G_t
	gf0     []float64 // T x dd: the fields a round started from (SearchRate)
	gam     []float64 // T x dd: Gamma_t
	h       []float64 // T x dd: H_s
	grad    []float64 // T x dd: dL''/dG_s
	rot     []float64 // T x dd: applied map R_t
	work    []float64 // T x 3dd: expm and gemm scratch
	rowBuf  []float64 // (T+E) x scratchLen(d): overlap/rotate scratch per chunk
	sqEdge  []int     // T: edge whose overlap chunk computes ||Z_t||^2, or -1
	edgePsi []float64 // E
	edgeDel []float64 // E: predicted psi change
	nodeSq  []float64 // T: ||Z_t||^2
	nodeQ   []float64 // T: Tr(Gamma_t C_t Gamma_t^T)
	cgram   []float64 // T x dd: Z_t Z_t^T for Concentration when gram is not computed
	eigBuf  []float64 // 2d: power iteration vectors

	rx  roundX  // parameters during a Round
	rho float64 // rho' during a Round

	// Domain-wall flips (tree couplings).
	tree                 bool
	order, parent, pedge []int
	flipRot              []float64 // T x dd: map applied to each node
	flipped              []bool
	fa, fs, fu, fvt      []float64
	flipFn               func(c, lo, hi int)
	needC                bool // the Gram matrices are computed (linear rotation: the prediction's q_t)
	gramSq               bool // ||Z_t||^2 comes from the Gram matrices (linear rotation with guard)
	ovFn                 func(c, lo, hi int)
	hFn                  func(c, lo, hi int)
	natFn                func(c, lo, hi int)
	rotFn                func(c, lo, hi int)
	delFn                func(c, lo, hi int)
	appFn                func(c, lo, hi int)
	psiFn                func(c, lo, hi int)
	skewFn               func(c, lo, hi int)
}

var _ Gauge = (*Goldstone)(nil)

// halfEdge is an edge seen from one of its nodes.
type halfEdge struct {
	e     int     // edge index
	other int     // the other node
	w     float64 // weight
	fwd   bool    // this node is Edges[e].S, so M_{this,other} = M_e (else M_e^T)
}

// Init implements Gauge. It computes the Laplacian pseudoinverse and
// allocates all per-round buffers; it zeroes the gauge fields.
func (g *Goldstone) Init(b Blocks, gr *Graph) error {
	g.ready = false
	if gr == nil {
		return errors.New("goldstone: nil graph")
	}
	if gr.N != b.T {
		return fmt.Errorf("goldstone: graph has %d nodes, blocks have T=%d", gr.N, b.T)
	}
	if b.T <= 0 || b.N < 0 || b.D <= 0 {
		return fmt.Errorf("goldstone: bad blocks %+v", b)
	}
	if g.Rotation != RotationExact && g.Rotation != RotationLinear {
		return fmt.Errorf("goldstone: unknown rotation %d", g.Rotation)
	}
	T, d := b.T, b.D
	g.b, g.d, g.dd = b, d, d*d
	g.edges = append(g.edges[:0], gr.Edges...)
	g.adj = make([][]halfEdge, T)
	for k, e := range g.edges {
		g.adj[e.S] = append(g.adj[e.S], halfEdge{e: k, other: e.T, w: e.W, fwd: true})
		g.adj[e.T] = append(g.adj[e.T], halfEdge{e: k, other: e.S, w: e.W, fwd: false})
	}
	g.pinv = append(g.pinv[:0], gr.LaplacianPinv()...)
	g.spinv = slices.Grow(g.spinv[:0], T*T)[:T*T]
	if g.Search != SearchNone && g.Search != SearchDirection && g.Search != SearchRate {
		return fmt.Errorf("goldstone: unknown search %d", g.Search)
	}
	E, dd := len(g.edges), g.dd
	g.needC = g.Rotation == RotationLinear
	// With the guard, ||Z_t||^2 has always come from C_t for the linear
	// rotation, and from the first edge's overlap otherwise; keeping that
	// keeps the bits of every earlier result.
	g.gramSq = g.needC && !g.NoGuard
	g.m = slices.Grow(g.m[:0], E*dd)[:E*dd]
	if g.needC {
		g.gram = slices.Grow(g.gram[:0], T*dd)[:T*dd]
	}
	if g.Concentration && !g.needC {
		g.cgram = slices.Grow(g.cgram[:0], T*dd)[:T*dd]
	}
	g.eigBuf = slices.Grow(g.eigBuf[:0], 2*d)[:2*d]
	if !(g.RateScale >= 0) || math.IsInf(g.RateScale, 0) {
		return fmt.Errorf("goldstone: RateScale %v, want a finite value >= 0", g.RateScale)
	}
	g.f = slices.Grow(g.f[:0], T*dd)[:T*dd]
	g.gf = slices.Grow(g.gf[:0], T*dd)[:T*dd]
	clear(g.gf)
	if g.Search == SearchRate {
		g.gf0 = slices.Grow(g.gf0[:0], T*dd)[:T*dd]
	}
	g.gam = slices.Grow(g.gam[:0], T*dd)[:T*dd]
	g.h = slices.Grow(g.h[:0], T*dd)[:T*dd]
	g.grad = slices.Grow(g.grad[:0], T*dd)[:T*dd]
	g.rot = slices.Grow(g.rot[:0], T*dd)[:T*dd]
	g.work = slices.Grow(g.work[:0], T*3*dd)[:T*3*dd]
	n := (T + E) * scratchLen(d)
	g.rowBuf = slices.Grow(g.rowBuf[:0], n)[:n] // node t: [t], edge k: [T+k]
	g.edgePsi = slices.Grow(g.edgePsi[:0], E)[:E]
	g.edgeDel = slices.Grow(g.edgeDel[:0], E)[:E]
	g.nodeSq = slices.Grow(g.nodeSq[:0], T)[:T]
	g.nodeQ = slices.Grow(g.nodeQ[:0], T)[:T]
	g.sqEdge = g.sqEdge[:0]
	for t := 0; t < T; t++ {
		k := -1 // the edge whose overlap also computes ||Z_t||^2
		if len(g.adj[t]) > 0 && !g.gramSq {
			k = g.adj[t][0].e
		}
		g.sqEdge = append(g.sqEdge, k)
	}
	clear(g.nodeQ)
	g.tree = gr.IsTree() && !g.NoFlip
	if g.tree {
		g.initFlip(adjacency(T, g.edges))
	}
	if g.ovFn == nil {
		g.ovFn, g.hFn, g.natFn, g.rotFn = g.overlapChunk, g.hChunk, g.natChunk, g.rotChunk
		g.delFn, g.appFn, g.psiFn, g.skewFn = g.deltaChunk, g.applyChunk, g.psiChunk, g.skewChunk
	}
	g.ready = true
	return nil
}

// Round implements Gauge.
func (g *Goldstone) Round(x []float64) RoundStats {
	g.begin(len(x))
	g.rx.x = x
	defer g.rx.release()
	return g.round()
}

// Round32 implements Gauge32: the round on float32 parameters (see
// gauge32.go).
func (g *Goldstone) Round32(x []float32) RoundStats {
	g.begin(len(x))
	g.rx.x32 = x
	defer g.rx.release()
	return g.round()
}

func (g *Goldstone) begin(n int) {
	if !g.ready {
		panic("optim: Goldstone.Round before Init")
	}
	if g.b.Offset+g.b.Len() > n {
		panic(fmt.Sprintf("optim: blocks %+v do not fit in len(x)=%d", g.b, n))
	}
}

// round is Round on g.rx.
func (g *Goldstone) round() RoundStats {
	T, E := g.b.T, len(g.edges)

	g.Pool.Chunks(E+T, 1, g.ovFn)
	st := RoundStats{Predicted: math.NaN(), Rate: math.NaN()}
	for _, v := range g.edgePsi {
		st.PsiBefore += v
	}
	st.PsiAfter = st.PsiBefore
	if g.tree && !g.NoFlip {
		if n := g.flipWalls(); n > 0 {
			st.Flips = n
			clear(g.gf)
			g.Pool.Chunks(E+T, 1, g.ovFn)
			st.PsiAfter = 0
			for _, v := range g.edgePsi {
				st.PsiAfter += v
			}
		}
	}
	st.PsiStep = st.PsiAfter
	var sz float64
	for _, v := range g.nodeSq {
		sz += v
	}
	st.Concentration = math.NaN()
	if g.Concentration && sz > 0 {
		st.Concentration = g.concentration(sz)
	}
	if E == 0 || sz == 0 || g.FlipsOnly {
		return st
	}
	g.rho = g.Rate
	if g.rho <= 0 {
		// 1/(T N <Z^2>) with <Z^2> = sz/(T N d).
		g.rho = float64(g.d) / sz
	}
	if g.RateScale > 0 {
		g.rho *= g.RateScale
	}
	st.Rate = g.rho
	if g.Reset {
		clear(g.gf)
	}
	g.buildF()
	if g.Search == SearchRate {
		copy(g.gf0, g.gf)
	}
	// The predicted change of psi (exact for orthogonal maps and for
	// I + Gamma: see edgeDelta) costs O(E d^3), nothing next to the round.
	del := g.lineSearch(&st, g.fieldSteps())
	st.Predicted = del
	if !g.NoGuard && !(del <= 0) { // also rejects NaN
		clear(g.gf)
		st.Rejected = true
		st.Scale = 0
		return st // PsiAfter: after the wall flips, if any
	}
	if st.Scale != 1 {
		for i := range g.gf { // the fields of the applied maps, for the next round
			g.gf[i] *= st.Scale
		}
	}
	g.Pool.Chunks(T, 1, g.appFn)
	g.Pool.Chunks(E, 1, g.psiFn)
	st.PsiAfter = 0
	for _, v := range g.edgePsi {
		st.PsiAfter += v
	}
	return st
}

// lineSearch halves the step (Search) while the predicted change del of
// psi is not negative, at most MaxBacktracks times, recording the factor,
// the halvings and the rate in st; it returns the last prediction.
func (g *Goldstone) lineSearch(st *RoundStats, del float64) float64 {
	maxB := g.MaxBacktracks
	if maxB <= 0 {
		maxB = DefaultMaxBacktracks
	}
	T := g.b.T
	st.Scale = 1
	switch g.Search {
	case SearchDirection:
		for !(del <= 0) && st.Backtracks < maxB {
			// alpha Gamma with alpha a power of two: exact, so the maps
			// are those of the fields alpha G.
			for i := range g.gam {
				g.gam[i] *= 0.5
			}
			st.Scale *= 0.5
			st.Backtracks++
			g.Pool.Chunks(T, 1, g.rotFn)
			del = g.predict()
		}
	case SearchRate:
		for !(del <= 0) && st.Backtracks < maxB {
			g.rho *= 0.5
			st.Backtracks++
			copy(g.gf, g.gf0)
			del = g.fieldSteps()
		}
		st.Rate = g.rho
	}
	return del
}

// fieldSteps takes the round's K2 natural-gradient steps on the gauge
// fields at rate g.rho from g.gf, builds the maps and returns the predicted
// change of psi.
func (g *Goldstone) fieldSteps() float64 {
	T := g.b.T
	k2 := g.K2
	if k2 <= 0 {
		k2 = DefaultK2
	}
	for i, v := range g.pinv { // -rho' L^+ at this round's (or search step's) rate
		g.spinv[i] = -g.rho * v
	}
	g.Pool.Chunks(T, 1, g.skewFn)
	for k := 0; k < k2; k++ {
		g.Pool.Chunks(T, 1, g.hFn)
		g.Pool.Chunks(NumChunks(T, natRows), 1, g.natFn)
	}
	g.Pool.Chunks(T, 1, g.rotFn)
	return g.predict()
}

// predict returns the predicted change of psi under the maps in g.rot (and
// g.nodeQ); NaN when an exact map is not orthogonal to orthTol.
func (g *Goldstone) predict() float64 {
	g.Pool.Chunks(len(g.edges), 1, g.delFn)
	var del float64
	for _, v := range g.edgeDel {
		del += v
	}
	return del
}

// Fields returns the gauge fields G_t (T x d x d, row-major), for inspection.
func (g *Goldstone) Fields() []float64 { return g.gf }

// scratch returns the overlap/rotate scratch of chunk k (node t: k = t, edge
// e: k = T + e).
func (g *Goldstone) scratch(k int) []float64 {
	n := scratchLen(g.d)
	return g.rowBuf[k*n : (k+1)*n]
}

// overlapChunk: chunks [0,E) compute M_e and psi_e, and ||Z_t||^2 for the
// nodes whose first edge is e; chunks [E,E+T) compute ||Z_t||^2 for the
// other nodes and, if needed, the Gram matrix C_t (and ||Z_t||^2 with it).
func (g *Goldstone) overlapChunk(c, _, _ int) {
	dd := g.dd
	if c < len(g.edges) {
		e := g.edges[c]
		dist, ss, st := g.rx.overlap(g.b, g.m[c*dd:(c+1)*dd], e.S, e.T, g.scratch(g.b.T+c))
		g.edgePsi[c] = e.W * dist
		if g.sqEdge[e.S] == c {
			g.nodeSq[e.S] = ss
		}
		if g.sqEdge[e.T] == c {
			g.nodeSq[e.T] = st
		}
		return
	}
	t := c - len(g.edges)
	if g.needC {
		_, ss, _ := g.rx.overlap(g.b, g.gram[t*dd:(t+1)*dd], t, t, g.scratch(t))
		if g.gramSq {
			g.nodeSq[t] = ss
		}
	} else if g.Concentration {
		g.rx.overlap(g.b, g.cgram[t*dd:(t+1)*dd], t, t, g.scratch(t))
	}
	if !g.gramSq && g.sqEdge[t] < 0 {
		g.nodeSq[t] = g.rx.sumSq(g.b, t)
	}
}

// buildF sets F_s = sum_t A_st M_st.
func (g *Goldstone) buildF() {
	d, dd := g.d, g.dd
	for s, hs := range g.adj {
		f := g.f[s*dd : (s+1)*dd]
		clear(f)
		for _, he := range hs {
			m := g.m[he.e*dd : (he.e+1)*dd]
			if he.fwd {
				for i, v := range m {
					f[i] += float64(he.w * v)
				}
				continue
			}
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					f[i*d+j] += float64(he.w * m[j*d+i])
				}
			}
		}
	}
}

// skewChunk sets Gamma_t = G_t - G_t^T.
func (g *Goldstone) skewChunk(t, _, _ int) {
	d, dd := g.d, g.dd
	skew(g.gam[t*dd:(t+1)*dd], g.gf[t*dd:(t+1)*dd], d)
}

// skew sets dst = a - a^T.
func skew(dst, a []float64, d int) {
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			dst[i*d+j] = a[i*d+j] - a[j*d+i]
		}
	}
}

// hChunk computes, for node s,
//
//	H_s = sum_t A_st [ M_st + 1/2 (-M_st Gamma_t - Gamma_t M_ts + M_ts Gamma_s + Gamma_s M_ts) ]
//	    = F_s + 1/2 (F_s^T Gamma_s + Gamma_s F_s^T) - 1/2 sum_t A_st (M_st Gamma_t + Gamma_t M_st^T)
//
// and the gradient dL2/dG_s = H_s - H_s^T.
func (g *Goldstone) hChunk(s, _, _ int) {
	d, dd := g.d, g.dd
	h := g.h[s*dd : (s+1)*dd]
	f := g.f[s*dd : (s+1)*dd]
	gs := g.gam[s*dd : (s+1)*dd]
	w := g.work[s*3*dd : (s+1)*3*dd]
	copy(h, f)
	gemm(true, false, d, d, d, 0.5, f, d, gs, d, 1, h, d, w)
	gemm(false, true, d, d, d, 0.5, gs, d, f, d, 1, h, d, w)
	for _, he := range g.adj[s] {
		m := g.m[he.e*dd : (he.e+1)*dd]
		gt := g.gam[he.other*dd : (he.other+1)*dd]
		// M_st = m (fwd) or m^T; M_ts = M_st^T.
		gemm(!he.fwd, false, d, d, d, -0.5*he.w, m, d, gt, d, 1, h, d, w)
		gemm(false, he.fwd, d, d, d, -0.5*he.w, gt, d, m, d, 1, h, d, w)
	}
	skew(g.grad[s*dd:(s+1)*dd], h, d)
}

// natRows is the number of nodes per natural-gradient chunk: a multiple of
// GemmAcc's tile height, so the nodes of a full chunk run on its FMA tiles.
const natRows = 4

// natChunk takes the natural-gradient step for the nodes
// t in [natRows c, natRows (c+1)) (fewer in the last chunk),
// G_t -= rho' sum_t' (L^+)_tt' grad_t', and refreshes their Gamma_t. It reads
// every grad but writes only its nodes. The rows (-rho' L^+)_t of the
// product run on GemmAcc, so which nodes share a tile depends only on T.
func (g *Goldstone) natChunk(c, _, _ int) {
	T, d, dd := g.b.T, g.d, g.dd
	lo := c * natRows
	hi := min(lo+natRows, T)
	GemmAcc(g.gf[lo*dd:], dd, g.spinv[lo*T:], T, 1, g.grad[:T*dd], dd, hi-lo, dd, T)
	for t := lo; t < hi; t++ {
		skew(g.gam[t*dd:(t+1)*dd], g.gf[t*dd:(t+1)*dd], d)
	}
}

// rotChunk builds the applied map R_t and, when needed, q_t.
func (g *Goldstone) rotChunk(t, _, _ int) {
	d, dd := g.d, g.dd
	r := g.rot[t*dd : (t+1)*dd]
	gam := g.gam[t*dd : (t+1)*dd]
	if g.Rotation == RotationExact {
		w := g.work[t*3*dd : (t+1)*3*dd]
		expm(r, gam, d, w)
		// The prediction assumes R is orthogonal; exp of a huge Gamma loses
		// that to rounding, and such a step has no prediction (NaN): the
		// guard rejects it, a line search shortens it.
		g.nodeQ[t] = 0
		if orthErr(r, d, w[:dd]) > orthTol {
			g.nodeQ[t] = math.NaN()
		}
		return
	}
	copy(r, gam)
	for i := 0; i < d; i++ {
		r[i*d+i]++
	}
	if g.needC {
		// q_t = Tr(Gamma C Gamma^T) = sum_ij (Gamma C)_ij Gamma_ij.
		tmp := g.work[t*3*dd : t*3*dd+dd]
		gemm(false, false, d, d, d, 1, gam, d, g.gram[t*dd:(t+1)*dd], d, 0, tmp, d, nil)
		var q float64
		for i, v := range tmp {
			q += float64(v * gam[i])
		}
		g.nodeQ[t] = q
	}
}

// deltaChunk predicts the change of edge e's psi term under the maps R.
func (g *Goldstone) deltaChunk(k, _, _ int) {
	e := g.edges[k]
	g.edgeDel[k] = edgeDelta(g.m[k*g.dd:(k+1)*g.dd], g.rot[e.S*g.dd:(e.S+1)*g.dd],
		g.rot[e.T*g.dd:(e.T+1)*g.dd], g.d, e.W, g.nodeQ[e.S], g.nodeQ[e.T])
}

// edgeDelta returns w [1/2 (qs + qt) - Tr(Rt^T Rs M) + Tr M], the change of
// 1/2 w ||Z_s - Z_t||^2 when Z_s <- Rs Z_s and Z_t <- Rt Z_t, with M = Z_s Z_t^T
// and qs, qt the changes of ||Z_s||^2, ||Z_t||^2.
func edgeDelta(m, rs, rt []float64, d int, w, qs, qt float64) float64 {
	// Tr(Rt^T Rs M) - Tr M = sum_{i,j} (Rt_ij (Rs M)_ij) - sum_i M_ii.
	var tr float64
	for i := 0; i < d; i++ {
		rsi := rs[i*d : (i+1)*d]
		rti := rt[i*d : (i+1)*d]
		for j := 0; j < d; j++ {
			var v float64
			for k, r := range rsi {
				v += float64(r * m[k*d+j])
			}
			tr += float64(rti[j] * v)
		}
		tr -= m[i*d+i]
	}
	return w * (float64(0.5*(qs+qt)) - tr)
}

func (g *Goldstone) applyChunk(t, _, _ int) {
	g.rx.rotate(g.b, t, g.rot[t*g.dd:(t+1)*g.dd], g.scratch(t))
}

func (g *Goldstone) psiChunk(k, _, _ int) {
	e := g.edges[k]
	g.edgePsi[k] = e.W * g.rx.halfSqDist(g.b, e.S, e.T)
}

// orthTol bounds max |R^T R - I| for a map the guard treats as orthogonal.
const orthTol = 1e-9

// orthErr returns max |R^T R - I| for the d x d matrix r, using work (d*d).
func orthErr(r []float64, d int, work []float64) float64 {
	gemm(true, false, d, d, d, 1, r, d, r, d, 0, work, d, nil)
	for i := 0; i < d; i++ {
		work[i*d+i]--
	}
	var e float64
	for _, v := range work[:d*d] {
		e = max(e, math.Abs(v))
	}
	if math.IsNaN(e) {
		return math.Inf(1)
	}
	return e
}

// concentration returns max_t lambda_max(Z_t Z_t^T) / (sz / (T d)): the
// largest eigenvalue of any time step's Gram matrix against the mean
// eigenvalue over all time steps (sz = sum_t ||Z_t||^2); 1 when every step
// holds its energy isotropically and equally, large when one time step
// concentrates it in few directions (issue 27: does that explain the
// overshoot of the paper's rate rho' = d/sz?). Call after the overlaps
// (the Gram matrices) of this round; the wall flips map each d x d Gram
// matrix to Q C Q^T with Q orthogonal, which keeps its spectrum.
func (g *Goldstone) concentration(sz float64) float64 {
	T, d, dd := g.b.T, g.d, g.dd
	gram := g.cgram
	if g.needC {
		gram = g.gram
	}
	top := 0.0
	for t := 0; t < T; t++ {
		if l := lambdaMax(gram[t*dd:(t+1)*dd], d, g.eigBuf); l > top {
			top = l
		}
	}
	return top / (sz / float64(T*d))
}

// lambdaMax returns the largest eigenvalue of the symmetric positive
// semidefinite d x d matrix c by power iteration from a fixed start
// (deterministic: the same bits on every build), 200 iterations or until
// the Rayleigh quotient stops changing in its 12th digit.
func lambdaMax(c []float64, d int, buf []float64) float64 {
	v, w := buf[:d], buf[d:2*d]
	for i := range v {
		v[i] = 1 + float64(i)/float64(d)
	}
	lam := 0.0
	for it := 0; it < 200; it++ {
		var nv float64
		for _, x := range v {
			nv += float64(x * x)
		}
		if nv == 0 {
			return 0
		}
		var num float64
		for i := 0; i < d; i++ {
			var s float64
			row := c[i*d : (i+1)*d]
			for j, x := range row {
				s += float64(x * v[j])
			}
			w[i] = s
			num += float64(v[i] * s)
		}
		next := num / nv
		var nw float64
		for _, x := range w {
			nw += float64(x * x)
		}
		if nw == 0 {
			return 0
		}
		inv := 1 / math.Sqrt(nw)
		for i := range v {
			v[i] = w[i] * inv
		}
		if it > 10 && math.Abs(next-lam) <= 1e-12*next {
			return next
		}
		lam = next
	}
	return lam
}
