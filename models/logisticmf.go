package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"goldstone/optim"
)

// LogisticMF is sparse dynamic logistic matrix factorisation (model 2 of the
// paper). Z_t holds Users user vectors followed by Items item vectors, each
// of length D, and
//
//	l = -sum_{(t,i,j,x) in Train} log sigmoid(x u_{t,i}.v_{t,j}) + Gamma/2 sum_t ||Z_t||_F^2.
//
// With MinibatchSize > 0 each LocalLoss call uses a fresh minibatch: every
// training rating is kept independently with probability
// p = MinibatchSize/Train.Len() (decided by a hash of Seed, the batch number
// and the rating's (t, user, item)), and the likelihood term is scaled by 1/p,
// so the minibatch loss and gradient are unbiased. The regulariser is always
// exact. Batch numbers run 0, 1, 2, ... over the calls of LocalLoss.
//
// The gradient is computed in one pass over the ratings: each rating's score
// is computed once and its coefficient dl/ds is added, times the other side's
// vector, into both the user's and the item's gradient. The ratings of bin t
// are sorted by (user, item, input order) and cut into a grid of P_t x P_t
// blocks (user range i, item range j; P_t = 1 unless the bin is expensive
// next to the chunk target). Block (t, i, j) runs in phase i+j: the blocks of
// a phase share no column, so they run in parallel without atomics, and every
// gradient column receives its terms in the same order (users: by item;
// items: by user) whatever the grid and the worker count. Partial losses are
// kept per block and summed in block order. Within a block the ratings go in
// groups of eight: the columns of the next group are prefetched, then the
// group's scores are computed, then its coefficients, then its gradient
// terms (AVX2/FMA kernels on amd64, the same operations as the Go loops of
// kernels.go, bit for bit).
type LogisticMF struct {
	Train        *Ratings
	Users, Items int
	D            int // embedding dimension
	T            int // number of time bins

	Lambda   float64      // chain coupling weight when Coupling is nil; 0 means uncoupled
	Coupling *optim.Graph // explicit coupling over the T bins; overrides Lambda
	Gamma    float64      // local L2 weight

	MinibatchSize int    // expected minibatch size; 0 (or >= Train.Len()) means full batch
	Seed          uint64 // seed of the minibatch sequence

	InitStd float64 // std of the N(0, InitStd^2) initial entries; 0 means DefaultInitStd

	// Bias adds a bias per item, b_j, and a global bias per bin, c_t, to every
	// score: s = u_{t,i}.v_{t,j} + b_j + c_t. They follow the blocks in x
	// (Items item biases, then T bin biases; see BiasOffset), outside
	// Blocks(), so a gauge step never touches them; they get the local L2
	// prior Gamma/2 (sum b_j^2 + sum c_t^2) inside the local loss (the
	// Driver's L2 covers the blocks only). They start at 0.
	Bias bool

	Pool *optim.Pool // runs the blocks of each phase; nil runs inline

	prepared bool
	graph    *optim.Graph
	n        int // Users + Items

	// The ratings in (bin, block, user, item, input order) order: rating p has
	// the user column ucol[p] = t*N+user and the item column icol[p] =
	// t*N+Users+item, bit-complemented (^col) when x = -1.
	ucol, icol []int32
	blocks     []lmfBlock // in (t, i, j) order
	phases     [][]int32  // phases[s]: the indices of the blocks with i+j = s
	part       []float64  // loss of every block, summed in block order
	biasSum    []float64  // with Bias: sum of dl/ds per key t*Items+item
	chunkCost  int        // minimum target cost per block (tests lower it)
	cur        []int32    // blocks of the running phase

	// State of the current call.
	sparse   bool // add the likelihood gradient only (Problem's local loss)
	cx, cg   []float64
	thr      uint64 // keep a rating when its hash < thr (when sample is true)
	sample   bool
	scale    float64
	batchKey uint64
	next     uint64 // batch number of the next LocalLoss call
	blockFn  func(c, lo, hi int)
}

var _ Model = (*LogisticMF)(nil)

// Validate reports whether the fields describe a consistent model.
func (m *LogisticMF) Validate() error {
	if m.Users <= 0 || m.Items <= 0 || m.D <= 0 || m.T <= 0 {
		return fmt.Errorf("logisticmf: Users=%d Items=%d D=%d T=%d, want all > 0", m.Users, m.Items, m.D, m.T)
	}
	if int64(m.T)*int64(m.Users+m.Items) > math.MaxInt32 {
		return fmt.Errorf("logisticmf: T*(Users+Items) = %d exceeds %d", int64(m.T)*int64(m.Users+m.Items), math.MaxInt32)
	}
	if m.Train == nil {
		return fmt.Errorf("logisticmf: no training ratings")
	}
	if err := m.Train.Validate(m.T, m.Users, m.Items); err != nil {
		return fmt.Errorf("logisticmf: training %w", err)
	}
	if !m.Train.Has(Binary) {
		return fmt.Errorf("logisticmf: the training ratings have no binary labels (x = +1 or -1): binarize them")
	}
	if !(m.Lambda >= 0) || math.IsInf(m.Lambda, 0) || !(m.Gamma >= 0) || math.IsInf(m.Gamma, 0) || !(m.InitStd >= 0) {
		return fmt.Errorf("logisticmf: Lambda=%v Gamma=%v InitStd=%v, want finite >= 0", m.Lambda, m.Gamma, m.InitStd)
	}
	if m.MinibatchSize < 0 {
		return fmt.Errorf("logisticmf: MinibatchSize=%d, want >= 0", m.MinibatchSize)
	}
	if m.Coupling != nil && m.Coupling.N != m.T {
		return fmt.Errorf("logisticmf: coupling has %d nodes, want T=%d", m.Coupling.N, m.T)
	}
	return nil
}

func (m *LogisticMF) prepare() {
	if m.prepared {
		return
	}
	if err := m.Validate(); err != nil {
		panic(err)
	}
	m.graph = chainOrGraph(m.Coupling, m.T, m.Lambda)
	m.n = m.Users + m.Items
	if m.chunkCost <= 0 {
		m.chunkCost = defaultChunkCost
	}
	m.grid()
	m.part = make([]float64, len(m.blocks))
	if m.Bias {
		m.biasSum = make([]float64, m.T*m.Items)
	}
	m.blockFn = m.blockChunk
	m.prepared = true
}

// grid sorts the ratings into ucol and icol and cuts every bin into its
// blocks and phases (newRatingGrid, signed by x).
func (m *LogisticMF) grid() {
	g, _ := newRatingGrid(m.Train, m.T, m.Users, m.Items, m.chunkCost, true)
	m.ucol, m.icol, m.blocks, m.phases = g.ucol, g.icol, g.blocks, g.phases
}

// NumParams returns T*(Users+Items)*D, plus Items+T with Bias.
func (m *LogisticMF) NumParams() int {
	n := m.BiasOffset()
	if m.Bias {
		n += m.Items + m.T
	}
	return n
}

// BiasOffset is the index in x of the first item bias (with Bias): the
// number of block entries, T*(Users+Items)*D. The bias of item j is
// x[BiasOffset+j], that of bin t x[BiasOffset+Items+t].
func (m *LogisticMF) BiasOffset() int { return m.T * (m.Users + m.Items) * m.D }

// Blocks returns the layout: N = Users+Items columns of length D per bin.
func (m *LogisticMF) Blocks() optim.Blocks {
	return optim.Blocks{T: m.T, N: m.Users + m.Items, D: m.D}
}

// Graph returns Coupling, or a chain with weight Lambda, or nil if Lambda is 0.
func (m *LogisticMF) Graph() *optim.Graph {
	m.prepare()
	return m.graph
}

// Init fills the blocks of x with independent N(0, InitStd^2) entries and
// the biases, if any, with 0.
func (m *LogisticMF) Init(x []float64, rng *rand.Rand) {
	m.prepare()
	checkLen("x", x, m.NumParams())
	bo := m.BiasOffset()
	initNormal(x[:bo], rng, m.InitStd)
	clear(x[bo:])
}

// Batch returns the batch number the next LocalLoss call uses.
func (m *LogisticMF) Batch() uint64 { return m.next }

// SetBatch sets the batch number of the next LocalLoss call (to resume a run).
func (m *LogisticMF) SetBatch(b uint64) { m.next = b }

// LocalLoss returns the loss of the next minibatch (or the full batch) at x
// and overwrites grad with its gradient.
func (m *LogisticMF) LocalLoss(grad, x []float64) float64 {
	b := m.next
	m.next++
	return m.BatchLoss(grad, x, b)
}

// Problem is the training problem of m for optim.Driver: the local loss is
// the likelihood of the next minibatch alone, added into the Driver's zeroed
// gradient buffer (columns without ratings are not touched), and the L2 term
// Gamma/2 ||Z||^2 is Problem.L2, applied in the Driver's fused pass. Its loss
// and gradient equal LocalLoss's (up to rounding).
func (m *LogisticMF) Problem() optim.Problem {
	m.prepare()
	return optim.Problem{Local: m.likelihood, Blocks: m.Blocks(), Graph: m.graph, L2: m.Gamma}
}

// likelihood is LocalLoss without the regulariser, adding into grad.
func (m *LogisticMF) likelihood(grad, x []float64) float64 {
	b := m.next
	m.next++
	m.sparse = true
	defer func() { m.sparse = false }()
	return m.BatchLoss(grad, x, b)
}

// BatchLoss is LocalLoss on minibatch number batch; it does not advance the
// batch sequence. With full batch, batch is ignored.
func (m *LogisticMF) BatchLoss(grad, x []float64, batch uint64) float64 {
	m.prepare()
	checkLen("x", x, m.NumParams())
	checkLen("grad", grad, m.NumParams())
	total := m.Train.Len()
	m.sample = m.MinibatchSize > 0 && m.MinibatchSize < total
	m.scale = 1
	if m.sample {
		p := float64(m.MinibatchSize) / float64(total)
		m.thr = uint64(p * (1 << 64))
		m.scale = float64(total) / float64(m.MinibatchSize)
		m.batchKey = mix64(m.Seed ^ mix64(batch+0x9e3779b97f4a7c15))
	}
	m.cx, m.cg = x, grad
	for _, ph := range m.phases {
		m.cur = ph
		m.Pool.Chunks(len(ph), 1, m.blockFn)
	}
	m.cur = nil
	var loss float64
	for _, v := range m.part {
		loss += v
	}
	if m.Bias {
		loss += m.biasPass()
	}
	m.cx, m.cg = nil, nil
	return loss
}

// biasPass overwrites the bias gradients: the L2 term Gamma b plus, for
// every (t, item) key, the sum of its ratings' coefficients dl/ds (biasSum,
// written by the blocks; ratings outside the minibatch add nothing); it
// returns the biases' L2 loss. Serial: O(T*Items), deterministic.
func (m *LogisticMF) biasPass() float64 {
	bo, items := m.BiasOffset(), m.Items
	x, g := m.cx[bo:], m.cg[bo:bo+items+m.T]
	var reg float64
	for k, b := range x[:items+m.T] {
		g[k] = m.Gamma * b
		reg += float64(b * b)
	}
	for t := range m.T {
		for j, s := range m.biasSum[t*items : (t+1)*items] {
			g[j] += s
			g[items+t] += s
		}
	}
	return 0.5 * m.Gamma * reg
}

// keep reports whether the rating (ucol, icol) is in the current minibatch.
func (m *LogisticMF) keep(ucol, icol int32) bool {
	return mix64(m.batchKey^(uint64(uint32(ucol))<<32|uint64(uint32(icol)))) < m.thr
}

// group is the number of ratings whose scores a block computes before using
// them, so that the cache misses of their vectors overlap.
const group = 8

// blockChunk handles block m.cur[c]: for every rating it adds dl/ds times
// the item vector to the user's gradient and dl/ds times the user vector to
// the item's gradient (and dl/ds to biasSum), and it stores the block's
// likelihood and regulariser loss in part. Without sparse, the first block
// of a user range (j = 0) and of an item range (i = 0) first sets the
// gradients of all their columns to Gamma z.
func (m *LogisticMF) blockChunk(c, _, _ int) {
	bi := m.cur[c]
	blk := &m.blocks[bi]
	d, t := m.D, int(blk.t)
	x, grad := m.cx, m.cg
	gamma, sample, scale := m.Gamma, m.sample, m.scale
	var reg, lik float64
	if !m.sparse {
		if blk.j == 0 {
			c0 := t * m.n
			for col := c0 + int(blk.ulo); col < c0+int(blk.uhi); col++ {
				reg += scaleNorm(grad[col*d:col*d+d:col*d+d], gamma, x[col*d:col*d+d:col*d+d])
			}
		}
		if blk.i == 0 {
			c0 := t*m.n + m.Users
			for col := c0 + int(blk.ilo); col < c0+int(blk.ihi); col++ {
				reg += scaleNorm(grad[col*d:col*d+d:col*d+d], gamma, x[col*d:col*d+d:col*d+d])
			}
		}
	}
	var itemBias, bsum []float64 // with Bias: the item biases, biasSum of the bin's items
	var binBias float64
	itemCol0 := t*m.n + m.Users // column of item 0 in the bin
	if m.Bias {
		bo := m.BiasOffset()
		itemBias = x[bo : bo+m.Items]
		binBias = x[bo+m.Items+t]
		bsum = m.biasSum[t*m.Items : (t+1)*m.Items]
		if blk.i == 0 {
			clear(bsum[blk.ilo:blk.ihi])
		}
	}
	ucol, icol := m.ucol[blk.lo:blk.hi], m.icol[blk.lo:blk.hi]
	var ub, ib [group]int32 // the kept ratings of a group (minibatch)
	var sc, cf [group]float64
	for next := 0; next < len(ucol); {
		var us, is []int32
		if sample {
			n := 0
			for ; n < group && next < len(ucol); next++ {
				u, e := ucol[next], icol[next]
				if m.keep(u, e^(e>>31)) {
					ub[n], ib[n] = u, e
					n++
				}
			}
			us, is = ub[:n], ib[:n]
		} else {
			end := min(next+group, len(ucol))
			us, is = ucol[next:end], icol[next:end]
			next = end
		}
		if q := min(group, len(ucol)-next); q > 0 { // start the reads of the next group
			prefetchCols(&x[0], &grad[0], &ucol[next], &icol[next], q, d)
		}
		lmfDots(x, us, is, d, sc[:])
		prod := 1.0 // product of the (1+ex) of the group: one log per group
		for b, e := range is {
			// y = x s; loss = softplus(-y); dl/ds = -x sigmoid(-y).
			y := sc[b]
			if itemBias != nil {
				y += itemBias[int(e^(e>>31))-itemCol0] + binBias
			}
			if e < 0 {
				y = -y
			}
			// With a = |y| and ex = e^-a: softplus(-y) = log(1+ex) + max(-y, 0)
			// and sigmoid(-y) = (y >= 0 ? ex : 1) / (1+ex). The log terms of
			// a group are summed as the log of a product of factors in
			// (1, 2]: the error is a few 1e-16 absolute per rating.
			a, num, neg := y, 1.0, 0.0
			if y < 0 {
				a, neg = -y, -y
			}
			ex := optim.Exp(-a)
			if y >= 0 {
				num = ex
			}
			opx := 1 + ex
			prod *= opx
			lik += neg
			c := num / opx * scale
			if e >= 0 {
				c = -c
			}
			cf[b] = c
		}
		lmfAxpys(x, grad, us, is, d, cf[:])
		if bsum != nil {
			for b, e := range is {
				bsum[int(e^(e>>31))-itemCol0] += cf[b]
			}
		}
		lik += optim.Log(prod)
	}
	m.part[bi] = float64(0.5*gamma*reg) + float64(scale*lik)
}
