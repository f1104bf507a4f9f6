package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"unsafe"

	"goldstone/optim"
)

// SparseMF is the core of the sparse dynamic matrix factorisations of
// ratings (LogisticMF, GaussianMF, PoissonMF): the layout, the prior, the
// minibatches and the blocked one-pass gradient. A likelihood is a model
// type that embeds it and is its link (linkOf): what one rating's linear
// predictor
//
//	eta = u_{t,i}.v_{t,j} [+ offsets]
//
// costs and its derivative, plus the likelihood's held-out metrics. Z_t
// holds Users user vectors followed by Items item vectors, each of length
// D; the local loss is
//
//	l = sum_{(t,i,j,y) in Train} loss(eta; y) + Gamma/2 (sum_t ||Z_t||_F^2 + ||offsets but the mean||^2).
//
// The offsets (offsetKind) are none, or a bias per item b_j, per bin c_t
// and per user a_i, or those and a global mean mu (flat prior). They follow
// the blocks in x (Items item biases, T bin biases, Users user biases,
// then mu; see BiasOffset), outside Blocks(), so no gauge step touches
// them; the biases start at 0, mu at the link's intercept of the training
// data.
//
// With MinibatchSize > 0 each LocalLoss call uses a fresh minibatch: every
// training rating is kept independently with probability
// p = MinibatchSize/Train.Len() (decided by a hash of Seed, the batch number
// and the rating's (t, user, item)), and the likelihood term is scaled by 1/p,
// so the minibatch loss and gradient are unbiased. The regulariser is always
// exact. Batch numbers run 0, 1, 2, ... over the calls of LocalLoss.
//
// The gradient is computed in one pass over the ratings: each rating's
// predictor is computed once and its coefficient dl/deta is added, times the
// other side's vector, into both the user's and the item's gradient. The
// ratings of bin t are sorted by (user, item, input order) and cut into a
// grid of P_t x P_t blocks (user range i, item range j; P_t = 1 unless the
// bin is expensive next to the chunk target; see newRatingGrid). Block
// (t, i, j) runs in phase i+j: the blocks of a phase share no column, so
// they run in parallel without atomics, and every gradient column receives
// its terms in the same order (users: by item; items: by user) whatever the
// grid and the worker count. Partial losses are kept per block and summed in
// block order. Within a block the ratings go in groups of eight: the columns
// of the next group are prefetched, then the group's dot products are
// computed, then (by the link) its coefficients, then its gradient terms
// (AVX2/FMA kernels on amd64, the same operations as the Go loops of
// kernels.go, bit for bit).
type SparseMF struct {
	RatingsSpec // the data, layout, prior and training; MinibatchSize >= Train.Len() is full batch, InitStd 0 DefaultInitStd

	link      ratingLink // the likelihood (the model that embeds this core)
	prepared  bool
	off       offsetKind
	graph     *optim.Graph
	n         int // Users + Items
	grid      ratingGrid
	val       []float32 // the labels in grid order (binary: +1 or -1; float32 holds every value exactly)
	part      []float64 // loss of every block, summed in block order
	scratch   []blockScratch
	itemSum   []float64 // with offsets: sum of dl/deta per key t*Items+item
	userSum   []float64 // with offsets: sum of dl/deta per key t*Users+user
	chunkCost int       // minimum target cost per block (tests lower it)
	cur       []int32   // blocks of the running phase

	// State of the current call.
	sparse  bool // add the likelihood gradient only (Problem's local loss)
	cx, cg  []float64
	cx32    []float32 // the float32 mode's x and grad (cx, cg nil then)
	cg32    []float32
	smp     sampler
	next    uint64 // batch number of the next LocalLoss call
	blockFn func(c, lo, hi int)
}

// ratingLink is a likelihood of the SparseMF core: its name, labels,
// offsets and checks, and what a rating costs as a function of its linear
// predictor.
type ratingLink interface {
	// info is the link's name, labels and offsets.
	info() linkInfo
	// check validates the link's own settings and the training labels
	// beyond Ratings.Validate.
	check(train *Ratings) error
	// group sets cf[b] = scale * dl/deta for the ratings of one group
	// (predictors eta[b], labels y[b]) and adds their loss, unscaled, to
	// acc.
	group(acc *linkSum, eta, y, cf []float64, scale float64)
	// blockLoss is the likelihood of a block's kept ratings from its
	// accumulator, unscaled.
	blockLoss(acc *linkSum) float64
}

// linkInfo describes a link.
type linkInfo struct {
	name    string     // prefixes the model's errors ("logisticmf")
	labels  Labels     // the labels the link reads (Binary: y = x, +1 or -1)
	offsets offsetKind // the terms of eta beyond the dot product
	// intercept is mu's start on the training ratings (offsets withMean).
	intercept func(train *Ratings) float64
}

// core returns the model's SparseMF (promoted to the models that embed it).
func (m *SparseMF) core() *SparseMF { return m }

// bind makes model m the link of its core and returns it: the likelihoods'
// constructors end with it.
func bind[M interface {
	ratingLink
	core() *SparseMF
}](m M) M {
	m.core().link = m
	return m
}

// linkSum is what a link accumulates over the ratings of a block: the
// sums it needs and the number of ratings kept.
type linkSum struct {
	a    float64
	kept int
}

// offsetKind says which terms the linear predictor has beyond the dot
// product.
type offsetKind uint8

const (
	noOffsets offsetKind = iota // eta = u.v
	// withBiases: eta = u.v + (b_j + c_t + a_i), the biases summed first
	// (LogisticMF's order).
	withBiases
	// withMean: eta = u.v + b_j + c_t + a_i + mu, summed left to right.
	withMean
)

// Validate reports whether the fields describe a consistent model.
func (m *SparseMF) Validate() error {
	if m.link == nil {
		return fmt.Errorf("models: a SparseMF without a likelihood: build it with NewLogisticMF, NewGaussianMF or NewPoissonMF")
	}
	name := m.link.info().name
	if m.Users <= 0 || m.Items <= 0 || m.D <= 0 || m.T <= 0 {
		return fmt.Errorf("%s: Users=%d Items=%d D=%d T=%d, want all > 0", name, m.Users, m.Items, m.D, m.T)
	}
	if int64(m.T)*int64(m.Users+m.Items) > math.MaxInt32 {
		return fmt.Errorf("%s: T*(Users+Items) = %d exceeds %d", name, int64(m.T)*int64(m.Users+m.Items), math.MaxInt32)
	}
	if m.Train == nil {
		return fmt.Errorf("%s: no training ratings", name)
	}
	if err := m.Train.Validate(m.T, m.Users, m.Items); err != nil {
		return fmt.Errorf("%s: training %w", name, err)
	}
	if err := m.link.check(m.Train); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if !(m.Lambda >= 0) || math.IsInf(m.Lambda, 0) || !(m.Gamma >= 0) || math.IsInf(m.Gamma, 0) || !(m.InitStd >= 0) {
		return fmt.Errorf("%s: Lambda=%v Gamma=%v InitStd=%v, want finite >= 0", name, m.Lambda, m.Gamma, m.InitStd)
	}
	if m.MinibatchSize < 0 {
		return fmt.Errorf("%s: MinibatchSize=%d, want >= 0", name, m.MinibatchSize)
	}
	if m.Coupling != nil && m.Coupling.N != m.T {
		return fmt.Errorf("%s: coupling has %d nodes, want T=%d", name, m.Coupling.N, m.T)
	}
	return nil
}

func (m *SparseMF) prepare() {
	if m.prepared {
		return
	}
	if err := m.Validate(); err != nil {
		panic(err)
	}
	m.off = m.link.info().offsets
	m.graph = chainOrGraph(m.Coupling, m.T, m.Lambda)
	m.n = m.Users + m.Items
	if m.chunkCost <= 0 {
		m.chunkCost = defaultChunkCost
	}
	var order []int32
	m.grid, order = newRatingGrid(m.Train, m.T, m.Users, m.Items, m.chunkCost)
	m.val = make([]float32, len(order))
	binary := m.link.info().labels == Binary
	for p, k := range order {
		if binary {
			m.val[p] = float32(m.Train.X[k])
		} else {
			m.val[p] = m.Train.Value[k]
		}
	}
	m.part = make([]float64, len(m.grid.blocks))
	m.scratch = make([]blockScratch, len(m.grid.blocks))
	if m.off != noOffsets {
		m.itemSum = make([]float64, m.T*m.Items)
		m.userSum = make([]float64, m.T*m.Users)
	}
	m.blockFn = m.blockChunk
	m.prepared = true
}

// offsetKind is the model's offsets (before prepare too).
func (m *SparseMF) offsetKind() offsetKind {
	if m.prepared {
		return m.off
	}
	return m.link.info().offsets
}

// NumParams returns T*(Users+Items)*D, plus Items+T+Users with biases,
// plus 1 with a mean.
func (m *SparseMF) NumParams() int {
	n := m.BiasOffset()
	switch m.offsetKind() {
	case withBiases:
		n += m.Items + m.T + m.Users
	case withMean:
		n += m.Items + m.T + m.Users + 1
	}
	return n
}

// BiasOffset is the index in x of the first item bias (with offsets): the
// number of block entries, T*(Users+Items)*D. The bias of item j is
// x[BiasOffset+j], that of bin t x[BiasOffset+Items+t], that of user i
// x[BiasOffset+Items+T+i], and mu (withMean) is the last entry.
func (m *SparseMF) BiasOffset() int { return m.T * (m.Users + m.Items) * m.D }

// Arrays implements RatingsModel: the item, bin and user biases and the
// mean, those the model has.
func (m *SparseMF) Arrays() []Array {
	switch m.offsetKind() {
	case withBiases:
		return []Array{{"item_bias", m.Items}, {"bin_bias", m.T}, {"user_bias", m.Users}}
	case withMean:
		return []Array{{"item_bias", m.Items}, {"bin_bias", m.T}, {"user_bias", m.Users}, {"mean", 1}}
	}
	return nil
}

// Blocks returns the layout: N = Users+Items columns of length D per bin.
func (m *SparseMF) Blocks() optim.Blocks {
	return optim.Blocks{T: m.T, N: m.Users + m.Items, D: m.D}
}

// Graph returns Coupling, or a chain with weight Lambda, or nil if Lambda is 0.
func (m *SparseMF) Graph() *optim.Graph {
	m.prepare()
	return m.graph
}

// Init fills the blocks of x with independent N(0, InitStd^2) entries, the
// biases with 0 and mu with the link's intercept.
func (m *SparseMF) Init(x []float64, rng *rand.Rand) {
	m.prepare()
	checkLen("x", x, m.NumParams())
	bo := m.BiasOffset()
	initNormal(x[:bo], rng, m.InitStd)
	clear(x[bo:])
	if m.off == withMean {
		x[len(x)-1] = m.link.info().intercept(m.Train)
	}
}

// Batch returns the batch number the next LocalLoss call uses.
func (m *SparseMF) Batch() uint64 { return m.next }

// SetBatch sets the batch number of the next LocalLoss call (to resume a run).
func (m *SparseMF) SetBatch(b uint64) { m.next = b }

// LocalLoss returns the loss of the next minibatch (or the full batch) at x
// and overwrites grad with its gradient.
func (m *SparseMF) LocalLoss(grad, x []float64) float64 {
	b := m.next
	m.next++
	return m.BatchLoss(grad, x, b)
}

// Problem is the training problem of m for optim.Driver: the local loss is
// the likelihood of the next minibatch and the offsets' prior, added into
// the Driver's zeroed gradient buffer (embedding columns without ratings
// are not touched), and the embeddings' L2 term Gamma/2 ||Z||^2 is
// Problem.L2, applied in the Driver's fused pass. Its loss and gradient
// equal LocalLoss's (up to rounding).
func (m *SparseMF) Problem() optim.Problem {
	m.prepare()
	return optim.Problem{Local: m.likelihood, Blocks: m.Blocks(), Graph: m.graph, L2: m.Gamma}
}

// The float32 mode: the parameters x, their gradient and (in the Driver)
// the optimizer state are float32; every rating's linear predictor, its
// coefficient dl/deta, the losses and the offsets' sums are computed in
// float64 from the float32 values (a product of two float32 is exact in
// float64), and each gradient entry is accumulated as the float64 FMA of
// its float32 value, rounded back to float32. The ratings, grid and
// minibatches are those of the float64 mode; the results do not depend on
// the build or the number of workers (the float32 FMA kernels of
// lmf_amd64.s widen the entries with VCVTPS2PD and round back with
// VCVTPD2PS: the operations of lmfDotsGo and lmfAxpysGo on float32).

// Init32 is Init in the float32 mode: the same draws, rounded to float32.
func (m *SparseMF) Init32(x []float32, rng *rand.Rand) {
	m.prepare()
	checkLen("x", x, m.NumParams())
	bo := m.BiasOffset()
	initNormal(x[:bo], rng, m.InitStd)
	clear(x[bo:])
	if m.off == withMean {
		x[len(x)-1] = float32(m.link.info().intercept(m.Train))
	}
}

// Problem32 is Problem in the float32 mode (for optim.DriverOf[float32]).
func (m *SparseMF) Problem32() optim.ProblemOf[float32] {
	m.prepare()
	return optim.ProblemOf[float32]{Local: m.likelihood32, Blocks: m.Blocks(), Graph: m.graph, L2: m.Gamma}
}

// LocalLoss32 is LocalLoss in the float32 mode: the loss of the next
// minibatch at x (in float64), its gradient overwriting grad.
func (m *SparseMF) LocalLoss32(grad, x []float32) float64 {
	b := m.next
	m.next++
	return m.batchLoss32(grad, x, b, false)
}

// FullLoss32 is FullLoss in the float32 mode.
func (m *SparseMF) FullLoss32(grad, x []float32) float64 {
	return m.batchLoss32(grad, x, 0, true)
}

func (m *SparseMF) likelihood32(grad, x []float32) float64 {
	b := m.next
	m.next++
	m.sparse = true
	defer func() { m.sparse = false }()
	return m.batchLoss32(grad, x, b, false)
}

func (m *SparseMF) batchLoss32(grad, x []float32, batch uint64, full bool) float64 {
	m.cx32, m.cg32 = x, grad
	defer func() { m.cx32, m.cg32 = nil, nil }()
	return batchLossOf(m, grad, x, batch, full)
}

// Widen returns the float32 parameters x as float64 (what the held-out
// metrics and the outputs of a float32 trial read).
func Widen(x []float32) []float64 {
	w := make([]float64, len(x))
	for i, v := range x {
		w[i] = float64(v)
	}
	return w
}

// likelihood is LocalLoss without the embeddings' regulariser, adding into grad.
func (m *SparseMF) likelihood(grad, x []float64) float64 {
	b := m.next
	m.next++
	m.sparse = true
	defer func() { m.sparse = false }()
	return m.BatchLoss(grad, x, b)
}

// BatchLoss is LocalLoss on minibatch number batch; it does not advance the
// batch sequence. With full batch, batch is ignored.
func (m *SparseMF) BatchLoss(grad, x []float64, batch uint64) float64 {
	return m.batchLoss(grad, x, batch, false)
}

// FullLoss is LocalLoss on every training rating, whatever MinibatchSize:
// the full-batch local loss and its gradient (overwriting grad). It does not
// advance the batch sequence, so evaluating it between steps changes no
// training state.
func (m *SparseMF) FullLoss(grad, x []float64) float64 {
	return m.batchLoss(grad, x, 0, true)
}

func (m *SparseMF) batchLoss(grad, x []float64, batch uint64, full bool) float64 {
	m.cx, m.cg = x, grad
	defer func() { m.cx, m.cg = nil, nil }()
	return batchLossOf(m, grad, x, batch, full)
}

// batchLossOf is batchLoss on parameters of type F (m.cx, m.cg or m.cx32,
// m.cg32 hold x and grad).
func batchLossOf[F optim.Float](m *SparseMF, grad, x []F, batch uint64, full bool) float64 {
	m.prepare()
	checkLen("x", x, m.NumParams())
	checkLen("grad", grad, m.NumParams())
	size := m.MinibatchSize
	if full {
		size = 0
	}
	m.smp = newSampler(size, m.Train.Len(), m.Seed, batch)
	for _, ph := range m.grid.phases {
		m.cur = ph
		m.Pool.Chunks(len(ph), 1, m.blockFn)
	}
	m.cur = nil
	var loss float64
	for _, v := range m.part {
		loss += v
	}
	if m.off != noOffsets {
		loss += biasPass(m, x, grad)
	}
	return loss
}

// biasPass overwrites the gradients of the offsets: the L2 term Gamma b
// plus, for every (t, item) and (t, user) key, the sum of its ratings'
// coefficients dl/deta (itemSum, userSum, written by the blocks; ratings
// outside the minibatch add nothing), and for mu the sum of all of them; it
// returns the biases' L2 loss. Serial: O(T*(Items+Users)), deterministic.
func biasPass[F optim.Float](m *SparseMF, cx, cg []F) float64 {
	bo, items, users := m.BiasOffset(), m.Items, m.Users
	n := items + m.T + users
	x, g := cx[bo:bo+n], cg[bo:]
	var reg float64
	for k, b := range x {
		w := float64(b)
		g[k] = F(m.Gamma * w)
		reg += float64(w * w)
	}
	ug := g[items+m.T : n]
	var all float64
	for t := range m.T {
		for j, s := range m.itemSum[t*items : (t+1)*items] {
			g[j] = F(float64(g[j]) + s)
			g[items+t] = F(float64(g[items+t]) + s)
			all += s
		}
		for i, s := range m.userSum[t*users : (t+1)*users] {
			ug[i] = F(float64(ug[i]) + s)
		}
	}
	if m.off == withMean {
		g[n] = F(all)
	}
	return 0.5 * m.Gamma * reg
}

// startCols sets the gradients of a block's columns to Gamma z where the
// block is the first of its user range (j = 0) or of its item range
// (i = 0), and returns the sum of ||z||^2 over those columns.
func startCols[F optim.Float](m *SparseMF, blk *lmfBlock, x, grad []F) float64 {
	d, t, gamma := m.D, int(blk.t), F(m.Gamma)
	var reg float64
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
	return reg
}

// blockOffsets are the offsets of one bin as a block reads them.
type blockOffsets[F optim.Float] struct {
	kind               offsetKind
	item, user         []F // the item and user biases
	bin, mu            F
	isum, usum         []float64 // itemSum and userSum of the bin
	itemCol0, userCol0 int       // the columns of item 0 and user 0 in the bin
}

// offsetsOf returns the offsets of block blk's bin, clearing the sums of
// its columns where it is the first block of their range.
func offsetsOf[F optim.Float](m *SparseMF, blk *lmfBlock, x []F) blockOffsets[F] {
	t := int(blk.t)
	o := blockOffsets[F]{kind: m.off, userCol0: t * m.n}
	o.itemCol0 = o.userCol0 + m.Users
	if m.off == noOffsets {
		return o
	}
	bo, items, users := m.BiasOffset(), m.Items, m.Users
	o.item = x[bo : bo+items]
	o.bin = x[bo+items+t]
	o.user = x[bo+items+m.T : bo+items+m.T+users]
	if m.off == withMean {
		o.mu = x[bo+items+m.T+users]
	}
	o.isum = m.itemSum[t*items : (t+1)*items]
	o.usum = m.userSum[t*users : (t+1)*users]
	if blk.i == 0 {
		clear(o.isum[blk.ilo:blk.ihi])
	}
	if blk.j == 0 {
		clear(o.usum[blk.ulo:blk.uhi])
	}
	return o
}

// add adds the offsets of the group's ratings (columns us, is) to their dot
// products sc (in float64).
func (o *blockOffsets[F]) add(sc []float64, us, is []int32) {
	bin, mu := float64(o.bin), float64(o.mu)
	switch o.kind {
	case withBiases:
		for b, e := range is {
			sc[b] += float64(o.item[int(e)-o.itemCol0]) + bin + float64(o.user[int(us[b])-o.userCol0])
		}
	case withMean:
		for b, e := range is {
			sc[b] = sc[b] + float64(o.item[int(e)-o.itemCol0]) + bin + float64(o.user[int(us[b])-o.userCol0]) + mu
		}
	}
}

// sums adds the group's coefficients to the sums of their items and users.
func (o *blockOffsets[F]) sums(cf []float64, us, is []int32) {
	if o.kind == noOffsets {
		return
	}
	for b, e := range is {
		o.isum[int(e)-o.itemCol0] += cf[b]
		o.usum[int(us[b])-o.userCol0] += cf[b]
	}
}

// blockChunk handles block m.cur[c]: for every rating it adds dl/deta times
// the item vector to the user's gradient and dl/deta times the user vector
// to the item's gradient (and dl/deta to itemSum and userSum), and it
// stores the block's likelihood and regulariser loss in part. Without
// sparse, the first block of a user range (j = 0) and of an item range
// (i = 0) first sets the gradients of all their columns to Gamma z.
func (m *SparseMF) blockChunk(c, _, _ int) {
	if m.cx32 != nil {
		blockPass(m, c, m.cx32, m.cg32)
		return
	}
	blockPass(m, c, m.cx, m.cg)
}

// blockPass is blockChunk on parameters of type F.
func blockPass[F optim.Float](m *SparseMF, c int, x, grad []F) {
	bi := m.cur[c]
	blk := &m.grid.blocks[bi]
	d := m.D
	gamma, smp, link := m.Gamma, &m.smp, m.link
	var reg float64
	if !m.sparse {
		reg = startCols(m, blk, x, grad)
	}
	off := offsetsOf(m, blk, x)
	ucol, icol := m.grid.ucol[blk.lo:blk.hi], m.grid.icol[blk.lo:blk.hi]
	val := m.val[blk.lo:blk.hi]
	var ub, ib [group]int32 // the kept ratings of a group (minibatch)
	scr := &m.scratch[bi]   // what the link reads and writes
	yb, sc, cf, acc := &scr.y, &scr.eta, &scr.cf, &scr.acc
	*acc = linkSum{}
	for next := 0; next < len(ucol); {
		var us, is []int32
		var ys []float64
		if smp.on {
			n := 0
			for ; n < group && next < len(ucol); next++ {
				if smp.keep(ucol[next], icol[next]) {
					ub[n], ib[n], yb[n] = ucol[next], icol[next], float64(val[next])
					n++
				}
			}
			us, is, ys = ub[:n], ib[:n], yb[:n]
		} else {
			end := min(next+group, len(ucol))
			us, is = ucol[next:end], icol[next:end]
			for b, v := range val[next:end] {
				yb[b] = float64(v)
			}
			ys = yb[:end-next]
			next = end
		}
		if q := min(group, len(ucol)-next); q > 0 { // start the reads of the next group
			prefetchColsOf(x, grad, ucol[next:], icol[next:], q, d)
		}
		lmfDots(x, us, is, d, sc[:])
		off.add(sc[:len(is)], us, is)
		link.group(acc, sc[:len(is)], ys, cf[:len(is)], smp.scale)
		lmfAxpys(x, grad, us, is, d, cf[:])
		off.sums(cf[:len(is)], us, is)
	}
	m.part[bi] = float64(0.5*gamma*reg) + float64(smp.scale*link.blockLoss(acc))
}

// blockScratch is a block's buffers for its link (heap, so that the calls
// through the interface allocate nothing).
type blockScratch struct {
	y, eta, cf [group]float64
	acc        linkSum
}

// group is the number of ratings whose scores a block computes before using
// them, so that the cache misses of their vectors overlap.
const group = 8

// predict returns eta for rating k of r of a model withMean: the plain
// dot product (the held-out metrics' order), then the offsets added left to
// right.
func (m *SparseMF) predict(x []float64, r *Ratings, k int) float64 { return predictOf(m, x, r, k) }

// predictOf is predict on parameters of type F, each entry widened to
// float64 before it is used (the prediction of the widened parameters,
// bit for bit).
func predictOf[F optim.Float](m *SparseMF, x []F, r *Ratings, k int) float64 {
	b := m.Blocks()
	n := b.N * b.D
	t := int(r.T[k])
	z := x[b.Offset+t*n : b.Offset+(t+1)*n]
	uo := int(r.User[k]) * b.D
	vo := (m.Users + int(r.Item[k])) * b.D
	var s float64
	for j, a := range z[uo : uo+b.D] {
		s += float64(float64(a) * float64(z[vo+j]))
	}
	bo := m.BiasOffset()
	return s + float64(x[bo+int(r.Item[k])]) + float64(x[bo+m.Items+int(r.T[k])]) + float64(x[bo+m.Items+m.T+int(r.User[k])]) + float64(x[len(x)-1])
}

// heldOutCheck checks x's length and the held-out ratings r against the
// model and its labels.
func heldOutCheck[F optim.Float](m *SparseMF, x []F, r *Ratings) error {
	checkLen("x", x, m.NumParams())
	if err := r.Validate(m.T, m.Users, m.Items); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if l := m.link.info().labels; !r.Has(l) {
		return fmt.Errorf("evaluate: the ratings have no %v labels", l)
	}
	return nil
}

// prefetchColsOf is prefetchCols on parameters of type F.
func prefetchColsOf[F optim.Float](x, grad []F, us, is []int32, n, d int) {
	prefetchCols((*float64)(unsafe.Pointer(&x[0])), (*float64)(unsafe.Pointer(&grad[0])), &us[0], &is[0], n, d*int(unsafe.Sizeof(x[0])))
}
