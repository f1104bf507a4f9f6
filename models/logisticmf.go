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
// The gradient is computed in two passes that write disjoint parts of grad
// without atomics. The first runs over the ratings grouped by (t, user): it
// computes every rating's score, loss and coefficient dl/ds (kept in a
// per-rating buffer) and writes the user gradients. The second runs over the
// ratings grouped by (t, item) and writes the item gradients from the stored
// coefficients. Both passes also write the regulariser gradient of their
// columns. The work is split into chunks of balanced cost whose boundaries
// depend only on the data, and partial losses are summed in chunk order.
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

	Pool *optim.Pool // runs the chunks of both passes; nil runs inline

	prepared bool
	graph    *optim.Graph
	n        int // Users + Items

	// Ratings grouped by key t*Users+user: the ratings of key k are
	// uRat[uPtr[k]:uPtr[k+1]], each the column t*N+Users+item of the item,
	// bit-complemented (^col) when x = -1. Grouped by key t*Items+item: the
	// ratings of key k are iRat[iPtr[k]:iPtr[k+1]], each the user column
	// t*N+user. uToI[p] is the position in iRat of the rating at uRat[p].
	uPtr, uRat, uToI []int32
	iPtr, iRat       []int32
	coef             []float64 // dl/ds of every rating in iRat order, written by the user pass

	uBounds, iBounds []int // chunk c covers keys bounds[c]..bounds[c+1]
	chunkCost        int   // target cost per chunk (tests lower it)
	uPart, iPart     []float64

	// State of the current call.
	sparse   bool // add the likelihood gradient only (Problem's local loss)
	cx, cg   []float64
	thr      uint64 // keep a rating when its hash < thr (when sample is true)
	sample   bool
	scale    float64
	batchKey uint64
	next     uint64 // batch number of the next LocalLoss call
	uFn, iFn func(c, lo, hi int)
}

var _ Model = (*LogisticMF)(nil)

// defaultChunkCost is the target cost of a chunk, in units of one column
// visit; a rating costs ratingCost units.
const (
	defaultChunkCost = 1 << 16
	ratingCost       = 4
)

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
	r := m.Train
	n := int32(m.n)
	users, items := int32(m.Users), int32(m.Items)
	var usrc []int32
	m.uPtr, m.uRat, usrc = group(m.T*m.Users, r.Len(), func(k int) (key, val int32) {
		t := r.T[k]
		return t*users + r.User[k], signed(t*n+users+r.Item[k], r.X[k])
	})
	var isrc []int32
	m.iPtr, m.iRat, isrc = group(m.T*m.Items, r.Len(), func(k int) (key, val int32) {
		t := r.T[k]
		return t*items + r.Item[k], t*n + r.User[k]
	})
	ipos := make([]int32, r.Len()) // position in iRat of input rating k
	for j, k := range isrc {
		ipos[k] = int32(j)
	}
	isrc = nil
	for j, k := range usrc { // reuse usrc as uToI
		usrc[j] = ipos[k]
	}
	m.uToI = usrc
	m.coef = make([]float64, r.Len())
	if m.chunkCost <= 0 {
		m.chunkCost = defaultChunkCost
	}
	m.uBounds = balance(m.uPtr, m.chunkCost)
	m.iBounds = balance(m.iPtr, m.chunkCost)
	m.uPart = make([]float64, len(m.uBounds)-1)
	m.iPart = make([]float64, len(m.iBounds)-1)
	m.uFn, m.iFn = m.userChunk, m.itemChunk
	m.prepared = true
}

func signed(col int32, x int8) int32 {
	if x < 0 {
		return ^col
	}
	return col
}

// group is a stable counting sort of n entries by key in [0, nkeys): it returns
// ptr (len nkeys+1) and the values so that the values of key k, in input
// order, are vals[ptr[k]:ptr[k+1]]; src[j] is the input position of vals[j].
func group(nkeys, n int, at func(k int) (key, val int32)) (ptr, vals, src []int32) {
	ptr = make([]int32, nkeys+1)
	for k := 0; k < n; k++ {
		key, _ := at(k)
		ptr[key+1]++
	}
	for k := 0; k < nkeys; k++ {
		ptr[k+1] += ptr[k]
	}
	cur := make([]int32, nkeys)
	copy(cur, ptr[:nkeys])
	vals = make([]int32, n)
	src = make([]int32, n)
	for k := 0; k < n; k++ {
		key, val := at(k)
		vals[cur[key]] = val
		src[cur[key]] = int32(k)
		cur[key]++
	}
	return ptr, vals, src
}

// balance splits the keys of ptr into consecutive ranges of about target cost
// (one unit per key, ratingCost per rating) and returns the boundaries, from 0
// to the number of keys.
func balance(ptr []int32, target int) []int {
	nkeys := len(ptr) - 1
	b := []int{0}
	acc := 0
	for k := 0; k < nkeys; k++ {
		acc += 1 + ratingCost*int(ptr[k+1]-ptr[k])
		if acc >= target && k+1 < nkeys {
			b = append(b, k+1)
			acc = 0
		}
	}
	return append(b, nkeys)
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
	m.Pool.Chunks(len(m.uPart), 1, m.uFn) // writes coef, read by the item pass
	m.Pool.Chunks(len(m.iPart), 1, m.iFn)
	var loss float64
	for _, v := range m.uPart {
		loss += v
	}
	for _, v := range m.iPart {
		loss += v
	}
	if m.Bias {
		loss += m.biasPass()
	}
	m.cx, m.cg = nil, nil
	return loss
}

// biasPass overwrites the bias gradients: the L2 term Gamma b plus, for
// every rating, its coefficient dl/ds (coef, written by the user pass; 0 for
// ratings outside the minibatch), summed key by key in (t, item) order; it
// returns the biases' L2 loss. Serial: O(ratings + T*Items), deterministic.
func (m *LogisticMF) biasPass() float64 {
	bo, items := m.BiasOffset(), m.Items
	x, g := m.cx[bo:], m.cg[bo:bo+items+m.T]
	var reg float64
	for k, b := range x[:items+m.T] {
		g[k] = m.Gamma * b
		reg += b * b
	}
	for k := 0; k < m.T*items; k++ {
		var s float64
		for _, c := range m.coef[m.iPtr[k]:m.iPtr[k+1]] {
			s += c
		}
		g[k%items] += s
		g[items+k/items] += s
	}
	return 0.5 * m.Gamma * reg
}

// mix64 is the splitmix64 finaliser.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// keep reports whether the rating (ucol, icol) is in the current minibatch.
func (m *LogisticMF) keep(ucol, icol int32) bool {
	return mix64(m.batchKey^(uint64(uint32(ucol))<<32|uint64(uint32(icol)))) < m.thr
}

// userBlock is the number of ratings whose scores the user pass computes
// before using them, so that the cache misses of their item vectors overlap.
const userBlock = 8

// userChunk handles the (t, user) keys of user chunk c: it writes the
// gradients of their user vectors and the coefficients of their ratings and
// stores their likelihood and regulariser loss in uPart[c].
func (m *LogisticMF) userChunk(c, _, _ int) {
	lo, hi := m.uBounds[c], m.uBounds[c+1]
	d, per := m.D, m.Users
	x, grad, coef := m.cx, m.cg, m.coef
	gamma, sample, scale, sparse := m.Gamma, m.sample, m.scale, m.sparse
	var itemBias []float64 // with Bias: x[BiasOffset:][:Items]
	if m.Bias {
		itemBias = x[m.BiasOffset() : m.BiasOffset()+m.Items]
	}
	var reg, lik float64
	var sc [userBlock]float64
	var kept [userBlock]bool
	t, i := lo/per, lo%per
	for k := lo; k < hi; k++ {
		col := t*m.n + i
		var binBias float64
		if itemBias != nil {
			binBias = x[m.BiasOffset()+m.Items+t]
		}
		itemCol0 := t*m.n + m.Users // column of item 0 in this key's bin
		if i++; i == per {
			t, i = t+1, 0
		}
		if sparse && m.uPtr[k] == m.uPtr[k+1] {
			continue
		}
		z := x[col*d : col*d+d : col*d+d]
		g := grad[col*d : col*d+d : col*d+d]
		if !sparse {
			reg += scaleNorm(g, gamma, z)
		}
		for p, end := int(m.uPtr[k]), int(m.uPtr[k+1]); p < end; p += userBlock {
			rs := m.uRat[p:min(p+userBlock, end)]
			pos := m.uToI[p : p+len(rs)]
			for b, e := range rs {
				other := e ^ (e >> 31) // ^e when e < 0
				if sample && !m.keep(int32(col), other) {
					kept[b] = false
					coef[pos[b]] = 0
					continue
				}
				kept[b] = true
				o := int(other) * d
				sc[b] = dot(z, x[o:o+d:o+d])
				if itemBias != nil {
					sc[b] += itemBias[int(other)-itemCol0] + binBias
				}
			}
			prod := 1.0 // product of the (1+ex) of the block: one log per block
			for b, e := range rs {
				if !kept[b] {
					continue
				}
				o := int(e^(e>>31)) * d
				// y = x s; loss = softplus(-y); dl/ds = -x sigmoid(-y).
				y := sc[b]
				if e < 0 {
					y = -y
				}
				// With a = |y| and ex = e^-a: softplus(-y) = log(1+ex) + max(-y, 0)
				// and sigmoid(-y) = (y >= 0 ? ex : 1) / (1+ex). The log terms of
				// a block are summed as the log of a product of factors in
				// (1, 2]: the error is a few 1e-16 absolute per rating.
				a, num, neg := y, 1.0, 0.0
				if y < 0 {
					a, neg = -y, -y
				}
				ex := math.Exp(-a)
				if y >= 0 {
					num = ex
				}
				opx := 1 + ex
				prod *= opx
				lik += neg
				cf := num / opx * scale
				if e >= 0 {
					cf = -cf
				}
				coef[pos[b]] = cf
				axpy(g, cf, x[o:o+d:o+d])
			}
			lik += math.Log(prod)
		}
	}
	m.uPart[c] = 0.5*gamma*reg + scale*lik
}

// itemChunk handles the (t, item) keys of item chunk c: it writes the
// gradients of their item vectors from the coefficients of the user pass and
// stores their regulariser loss in iPart[c].
func (m *LogisticMF) itemChunk(c, _, _ int) {
	lo, hi := m.iBounds[c], m.iBounds[c+1]
	d, per := m.D, m.Items
	x, grad, coef := m.cx, m.cg, m.coef
	gamma, sparse := m.Gamma, m.sparse
	var reg float64
	t, i := lo/per, lo%per
	for k := lo; k < hi; k++ {
		col := t*m.n + m.Users + i
		if i++; i == per {
			t, i = t+1, 0
		}
		p, end := int(m.iPtr[k]), int(m.iPtr[k+1])
		if sparse && p == end {
			continue
		}
		z := x[col*d : col*d+d : col*d+d]
		g := grad[col*d : col*d+d : col*d+d]
		if !sparse {
			reg += scaleNorm(g, gamma, z)
		}
		cs := coef[p:end]
		for b, u := range m.iRat[p:end] {
			cf := cs[b]
			if cf == 0 {
				continue
			}
			o := int(u) * d
			axpy(g, cf, x[o:o+d:o+d])
		}
	}
	m.iPart[c] = 0.5 * gamma * reg
}
