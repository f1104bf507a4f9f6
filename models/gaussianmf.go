package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"goldstone/optim"
)

// GaussianSettings are the settings of the Gaussian likelihood for explicit
// ratings (GaussianMF), the choice likelihood = "gaussian".
//
// The noise variance is a setting, not fitted: the dynamic model has more
// parameters than ratings (T (Users+Items) D against one rating per
// (user, item, bin) at most), so its training residual can be driven to 0
// and a jointly fitted MAP sigma^2 collapses towards 0. With sigma^2 fixed
// the held-out log-likelihood is an affine function of the mean squared
// error, the same for every predictor compared with it.
type GaussianSettings struct {
	NoiseVar float64 `set:"rating_noise_var" default:"1" check:">0" doc:"gaussian: variance sigma^2 of the rating noise (fixed, not fitted: it weighs the data against the prior and enters the held-out log-likelihood)"`
}

// Labels implements the pipeline's likelihood choice: explicit ratings.
func (GaussianSettings) Labels() Labels { return Explicit }

// New builds the model on spec.
func (s GaussianSettings) New(spec RatingsSpec) RatingsModel {
	return &GaussianMF{
		Train: spec.Train, Users: spec.Users, Items: spec.Items, D: spec.D, T: spec.T,
		Lambda: spec.Lambda, Coupling: spec.Coupling, Gamma: spec.Gamma, NoiseVar: s.NoiseVar,
		MinibatchSize: spec.MinibatchSize, Seed: spec.Seed, InitStd: spec.InitStd, Pool: spec.Pool,
	}
}

// GaussianMF is sparse dynamic matrix factorisation of explicit ratings
// with a Gaussian likelihood: rating y of user i for item j in bin t has
// the prediction
//
//	s = u_{t,i}.v_{t,j} + a_i + b_j + c_t + mu
//
// with a bias per user a_i, per item b_j and per bin c_t and a global mean
// mu, and
//
//	l = sum_{(t,i,j,y) in Train} [(y - s)^2 / (2 sigma^2) + log(2 pi sigma^2)/2]
//	    + Gamma/2 (sum_t ||Z_t||_F^2 + ||a||^2 + ||b||^2 + ||c||^2).
//
// The embeddings Z_t (Users user vectors followed by Items item vectors of
// length D) get the same dynamic prior as LogisticMF's (the coupling
// Graph, added by the driver) and the same symmetry: every term is
// invariant under a common orthogonal map of the columns of a Z_t, so
// Goldstone-GD and Procrustes apply unchanged. The biases and mu follow the
// blocks in x (Items item biases, T bin biases, Users user biases, then mu;
// see BiasOffset), outside Blocks(), so no gauge step touches them; mu has
// a flat prior and starts at the mean training rating, the biases at 0.
//
// Minibatches, the blocked one-pass gradient and its determinism are
// LogisticMF's (see there): each rating's residual is computed once and its
// coefficient dl/ds = (s - y)/sigma^2 is added, times the other side's
// vector, into the user's and the item's gradient; the blocks of a phase
// share no column and every sum runs in an order fixed by the data, so the
// loss and gradient are bit-identical at any worker count.
type GaussianMF struct {
	Train        *Ratings // explicit ratings (Value)
	Users, Items int
	D            int // embedding dimension
	T            int // number of time bins

	Lambda   float64      // chain coupling weight when Coupling is nil; 0 means uncoupled
	Coupling *optim.Graph // explicit coupling over the T bins; overrides Lambda
	Gamma    float64      // L2 weight of the embeddings and the biases
	NoiseVar float64      // sigma^2; 0 means 1

	MinibatchSize int    // expected minibatch size; 0 (or >= Train.Len()) means full batch
	Seed          uint64 // seed of the minibatch sequence

	InitStd float64 // std of the N(0, InitStd^2) initial entries; 0 means DefaultInitStd

	Pool *optim.Pool // runs the blocks of each phase; nil runs inline

	prepared  bool
	graph     *optim.Graph
	n         int // Users + Items
	grid      ratingGrid
	val       []float64 // the ratings in grid order
	part      []float64 // loss of every block, summed in block order
	itemSum   []float64 // sum of dl/ds per key t*Items+item
	userSum   []float64 // sum of dl/ds per key t*Users+user
	chunkCost int       // minimum target cost per block (tests lower it)
	cur       []int32   // blocks of the running phase

	// State of the current call.
	sparse  bool // add the likelihood gradient only (Problem's local loss)
	cx, cg  []float64
	smp     sampler
	next    uint64 // batch number of the next LocalLoss call
	blockFn func(c, lo, hi int)
}

var _ RatingsModel = (*GaussianMF)(nil)

// Validate reports whether the fields describe a consistent model.
func (m *GaussianMF) Validate() error {
	if m.Users <= 0 || m.Items <= 0 || m.D <= 0 || m.T <= 0 {
		return fmt.Errorf("gaussianmf: Users=%d Items=%d D=%d T=%d, want all > 0", m.Users, m.Items, m.D, m.T)
	}
	if int64(m.T)*int64(m.Users+m.Items) > math.MaxInt32 {
		return fmt.Errorf("gaussianmf: T*(Users+Items) = %d exceeds %d", int64(m.T)*int64(m.Users+m.Items), math.MaxInt32)
	}
	if m.Train == nil {
		return fmt.Errorf("gaussianmf: no training ratings")
	}
	if err := m.Train.Validate(m.T, m.Users, m.Items); err != nil {
		return fmt.Errorf("gaussianmf: training %w", err)
	}
	if !m.Train.Has(Explicit) {
		return fmt.Errorf("gaussianmf: the training ratings have no explicit values (binarized data?)")
	}
	if !(m.Lambda >= 0) || math.IsInf(m.Lambda, 0) || !(m.Gamma >= 0) || math.IsInf(m.Gamma, 0) || !(m.InitStd >= 0) ||
		!(m.NoiseVar >= 0) || math.IsInf(m.NoiseVar, 0) {
		return fmt.Errorf("gaussianmf: Lambda=%v Gamma=%v InitStd=%v NoiseVar=%v, want finite >= 0", m.Lambda, m.Gamma, m.InitStd, m.NoiseVar)
	}
	if m.MinibatchSize < 0 {
		return fmt.Errorf("gaussianmf: MinibatchSize=%d, want >= 0", m.MinibatchSize)
	}
	if m.Coupling != nil && m.Coupling.N != m.T {
		return fmt.Errorf("gaussianmf: coupling has %d nodes, want T=%d", m.Coupling.N, m.T)
	}
	return nil
}

func (m *GaussianMF) prepare() {
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
	var order []int32
	m.grid, order = newRatingGrid(m.Train, m.T, m.Users, m.Items, m.chunkCost, false)
	m.val = make([]float64, len(order))
	for p, k := range order {
		m.val[p] = float64(m.Train.Value[k])
	}
	m.part = make([]float64, len(m.grid.blocks))
	m.itemSum = make([]float64, m.T*m.Items)
	m.userSum = make([]float64, m.T*m.Users)
	m.blockFn = m.blockChunk
	m.prepared = true
}

func (m *GaussianMF) noiseVar() float64 {
	if m.NoiseVar == 0 {
		return 1
	}
	return m.NoiseVar
}

// NumParams returns T*(Users+Items)*D + Items + T + Users + 1.
func (m *GaussianMF) NumParams() int { return m.BiasOffset() + m.Items + m.T + m.Users + 1 }

// BiasOffset is the index in x of the first item bias: the number of block
// entries, T*(Users+Items)*D. The bias of item j is x[BiasOffset+j], that
// of bin t x[BiasOffset+Items+t], that of user i x[BiasOffset+Items+T+i],
// and mu is the last entry.
func (m *GaussianMF) BiasOffset() int { return m.T * (m.Users + m.Items) * m.D }

// Arrays implements RatingsModel: the item, bin and user biases and mu.
func (m *GaussianMF) Arrays() []Array {
	return []Array{{"item_bias", m.Items}, {"bin_bias", m.T}, {"user_bias", m.Users}, {"mean", 1}}
}

// Blocks returns the layout: N = Users+Items columns of length D per bin.
func (m *GaussianMF) Blocks() optim.Blocks {
	return optim.Blocks{T: m.T, N: m.Users + m.Items, D: m.D}
}

// Graph returns Coupling, or a chain with weight Lambda, or nil if Lambda is 0.
func (m *GaussianMF) Graph() *optim.Graph {
	m.prepare()
	return m.graph
}

// Init fills the blocks of x with independent N(0, InitStd^2) entries, the
// biases with 0 and mu with the mean training rating.
func (m *GaussianMF) Init(x []float64, rng *rand.Rand) {
	m.prepare()
	checkLen("x", x, m.NumParams())
	bo := m.BiasOffset()
	initNormal(x[:bo], rng, m.InitStd)
	clear(x[bo:])
	x[len(x)-1] = meanValue(m.Train)
}

// meanValue is the mean of r's values (0 without ratings), summed in order.
func meanValue(r *Ratings) float64 {
	if len(r.Value) == 0 {
		return 0
	}
	var s float64
	for _, v := range r.Value {
		s += float64(v)
	}
	return s / float64(len(r.Value))
}

// Batch returns the batch number the next LocalLoss call uses.
func (m *GaussianMF) Batch() uint64 { return m.next }

// SetBatch sets the batch number of the next LocalLoss call (to resume a run).
func (m *GaussianMF) SetBatch(b uint64) { m.next = b }

// LocalLoss returns the loss of the next minibatch (or the full batch) at x
// and overwrites grad with its gradient.
func (m *GaussianMF) LocalLoss(grad, x []float64) float64 {
	b := m.next
	m.next++
	return m.BatchLoss(grad, x, b)
}

// Problem is the training problem of m for optim.Driver: the local loss is
// the likelihood of the next minibatch and the biases' prior, added into the
// Driver's zeroed gradient buffer, and the embeddings' L2 term
// Gamma/2 ||Z||^2 is Problem.L2, applied in the Driver's fused pass.
func (m *GaussianMF) Problem() optim.Problem {
	m.prepare()
	return optim.Problem{Local: m.likelihood, Blocks: m.Blocks(), Graph: m.graph, L2: m.Gamma}
}

// likelihood is LocalLoss without the embeddings' regulariser, adding into grad.
func (m *GaussianMF) likelihood(grad, x []float64) float64 {
	b := m.next
	m.next++
	m.sparse = true
	defer func() { m.sparse = false }()
	return m.BatchLoss(grad, x, b)
}

// BatchLoss is LocalLoss on minibatch number batch; it does not advance the
// batch sequence. With full batch, batch is ignored.
func (m *GaussianMF) BatchLoss(grad, x []float64, batch uint64) float64 {
	return m.batchLoss(grad, x, batch, false)
}

// FullLoss is LocalLoss on every training rating, whatever MinibatchSize;
// it does not advance the batch sequence.
func (m *GaussianMF) FullLoss(grad, x []float64) float64 {
	return m.batchLoss(grad, x, 0, true)
}

func (m *GaussianMF) batchLoss(grad, x []float64, batch uint64, full bool) float64 {
	m.prepare()
	checkLen("x", x, m.NumParams())
	checkLen("grad", grad, m.NumParams())
	size := m.MinibatchSize
	if full {
		size = 0
	}
	m.smp = newSampler(size, m.Train.Len(), m.Seed, batch)
	m.cx, m.cg = x, grad
	for _, ph := range m.grid.phases {
		m.cur = ph
		m.Pool.Chunks(len(ph), 1, m.blockFn)
	}
	m.cur = nil
	var loss float64
	for _, v := range m.part {
		loss += v
	}
	loss += m.biasPass()
	m.cx, m.cg = nil, nil
	return loss
}

// biasPass overwrites the gradients of the biases and mu: the L2 term
// Gamma b plus, for every (t, item) and (t, user) key, the sum of its
// ratings' coefficients dl/ds (itemSum, userSum, written by the blocks), and
// for mu the sum of all of them; it returns the biases' L2 loss. Serial:
// O(T*(Items+Users)), deterministic.
func (m *GaussianMF) biasPass() float64 {
	bo, items, users := m.BiasOffset(), m.Items, m.Users
	n := items + m.T + users
	x, g := m.cx[bo:bo+n], m.cg[bo:bo+n+1]
	var reg float64
	for k, b := range x {
		g[k] = m.Gamma * b
		reg += float64(b * b)
	}
	ug := g[items+m.T : n]
	var all float64
	for t := range m.T {
		for j, s := range m.itemSum[t*items : (t+1)*items] {
			g[j] += s
			g[items+t] += s
			all += s
		}
		for i, s := range m.userSum[t*users : (t+1)*users] {
			ug[i] += s
		}
	}
	g[n] = all
	return 0.5 * m.Gamma * reg
}

// blockChunk handles block m.cur[c]: for every rating it adds dl/ds times
// the item vector to the user's gradient and dl/ds times the user vector to
// the item's gradient (and dl/ds to itemSum and userSum), and it stores the
// block's likelihood and regulariser loss in part. Without sparse, the
// first block of a user range (j = 0) and of an item range (i = 0) first
// sets the gradients of all their columns to Gamma z.
func (m *GaussianMF) blockChunk(c, _, _ int) {
	bi := m.cur[c]
	blk := &m.grid.blocks[bi]
	d, t := m.D, int(blk.t)
	x, grad := m.cx, m.cg
	gamma, smp := m.Gamma, &m.smp
	var reg float64
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
	bo, items, users := m.BiasOffset(), m.Items, m.Users
	itemBias := x[bo : bo+items]
	binBias := x[bo+items+t]
	userBias := x[bo+items+m.T : bo+items+m.T+users]
	mu := x[bo+items+m.T+users]
	isum := m.itemSum[t*items : (t+1)*items]
	usum := m.userSum[t*users : (t+1)*users]
	if blk.i == 0 {
		clear(isum[blk.ilo:blk.ihi])
	}
	if blk.j == 0 {
		clear(usum[blk.ulo:blk.uhi])
	}
	userCol0 := t * m.n            // column of user 0 in the bin
	itemCol0 := userCol0 + m.Users // column of item 0 in the bin
	nv := m.noiseVar()
	coef := smp.scale / nv // dl/ds = coef (s - y)
	ucol, icol := m.grid.ucol[blk.lo:blk.hi], m.grid.icol[blk.lo:blk.hi]
	val := m.val[blk.lo:blk.hi]
	var ub, ib [group]int32 // the kept ratings of a group (minibatch)
	var yb, sc, cf [group]float64
	var sq float64 // sum of squared residuals
	var kept int
	for next := 0; next < len(ucol); {
		var us, is []int32
		var ys []float64
		if smp.on {
			n := 0
			for ; n < group && next < len(ucol); next++ {
				if smp.keep(ucol[next], icol[next]) {
					ub[n], ib[n], yb[n] = ucol[next], icol[next], val[next]
					n++
				}
			}
			us, is, ys = ub[:n], ib[:n], yb[:n]
		} else {
			end := min(next+group, len(ucol))
			us, is, ys = ucol[next:end], icol[next:end], val[next:end]
			next = end
		}
		if q := min(group, len(ucol)-next); q > 0 { // start the reads of the next group
			prefetchCols(&x[0], &grad[0], &ucol[next], &icol[next], q, d)
		}
		lmfDots(x, us, is, d, sc[:])
		for b, e := range is {
			s := sc[b] + itemBias[int(e)-itemCol0] + binBias + userBias[int(us[b])-userCol0] + mu
			r := s - ys[b]
			sq += float64(r * r)
			cf[b] = coef * r
		}
		lmfAxpys(x, grad, us, is, d, cf[:])
		for b, e := range is {
			isum[int(e)-itemCol0] += cf[b]
			usum[int(us[b])-userCol0] += cf[b]
		}
		kept += len(is)
	}
	lik := float64(sq/(2*nv)) + float64(float64(kept)*halfLog2Pi(nv))
	m.part[bi] = float64(0.5*gamma*reg) + float64(smp.scale*lik)
}

// halfLog2Pi is log(2 pi v)/2, the normalising term of N(y; s, v).
func halfLog2Pi(v float64) float64 { return float64(0.5 * optim.Log(2*math.Pi*v)) }

// predict returns s for rating k of r (see GaussianMF).
func (m *GaussianMF) predict(x []float64, r *Ratings, k int) float64 {
	b := m.Blocks()
	z := b.Block(x, int(r.T[k]))
	uo := int(r.User[k]) * b.D
	vo := (m.Users + int(r.Item[k])) * b.D
	var s float64
	for j, a := range z[uo : uo+b.D] {
		s += float64(a * z[vo+j])
	}
	bo := m.BiasOffset()
	return s + x[bo+int(r.Item[k])] + x[bo+m.Items+int(r.T[k])] + x[bo+m.Items+m.T+int(r.User[k])] + x[len(x)-1]
}

// HeldOut implements RatingsModel: ll (the mean Gaussian log-likelihood per
// rating with the model's sigma^2), rmse and mae (root mean squared and mean
// absolute error of the prediction s, not clipped to the rating scale). All
// three take one pass, so all makes no difference.
func (m *GaussianMF) HeldOut(x []float64, r *Ratings, all bool) ([]Metric, error) {
	checkLen("x", x, m.NumParams())
	if err := r.Validate(m.T, m.Users, m.Items); err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	if !r.Has(Explicit) {
		return nil, fmt.Errorf("evaluate: the ratings have no explicit values")
	}
	var sq, abs float64
	for k := range r.Len() {
		e := float64(r.Value[k]) - m.predict(x, r, k)
		sq += float64(e * e)
		abs += math.Abs(e)
	}
	return gaussianMetrics(sq, abs, r.Len(), m.noiseVar()), nil
}

// Baseline implements RatingsModel: the global mean of the training
// ratings predicting every rating of test (ll, rmse, mae as in HeldOut).
func (m *GaussianMF) Baseline(test *Ratings) []Metric {
	mean := meanValue(m.Train)
	var sq, abs float64
	for _, v := range test.Value {
		e := float64(v) - mean
		sq += float64(e * e)
		abs += math.Abs(e)
	}
	return gaussianMetrics(sq, abs, len(test.Value), m.noiseVar())
}

// gaussianMetrics are ll, rmse and mae from the sum of squared and of
// absolute residuals of n ratings (NaN for none).
func gaussianMetrics(sq, abs float64, n int, v float64) []Metric {
	if n == 0 {
		return []Metric{{"ll", math.NaN()}, {"rmse", math.NaN()}, {"mae", math.NaN()}}
	}
	mse := sq / float64(n)
	return []Metric{{"ll", -mse/(2*v) - halfLog2Pi(v)}, {"rmse", math.Sqrt(mse)}, {"mae", abs / float64(n)}}
}

// BiasOnly returns the parameters of the bias-only predictor
// s = a_i + b_j + c_t + mu (embeddings 0) that maximise the model's own
// posterior on the training ratings: the MAP of its biases and mu with the
// embeddings fixed at 0. That is a ridge regression, (A'A + D) theta = A'y
// with A the ratings' indicator design and D = Gamma sigma^2 on the biases
// (0 on mu); it is solved by conjugate gradients with the diagonal as
// preconditioner until the residual is below 1e-13 of A'y (at most 1000
// iterations). Serial and in a fixed order: deterministic.
func (m *GaussianMF) BiasOnly() []float64 {
	if err := m.Validate(); err != nil {
		panic(err)
	}
	r := m.Train
	x := make([]float64, m.NumParams())
	if r.Len() == 0 {
		return x
	}
	bo := m.BiasOffset()
	theta := x[bo:] // item biases, bin biases, user biases, mu
	p := len(theta)
	items, bins := m.Items, m.T
	ridge := m.Gamma * m.noiseVar() // prior precision over noise precision
	// apply sets out = (A'A + D) v; ridge as the diagonal's extra on the biases.
	apply := func(out, v []float64) {
		for q := range out[:p-1] {
			out[q] = ridge * v[q]
		}
		out[p-1] = 0
		for k := range r.Len() {
			j, t, i := int(r.Item[k]), items+int(r.T[k]), items+bins+int(r.User[k])
			s := v[j] + v[t] + v[i] + v[p-1]
			out[j] += s
			out[t] += s
			out[i] += s
			out[p-1] += s
		}
	}
	rhs, diag := make([]float64, p), make([]float64, p)
	for q := range diag[:p-1] {
		diag[q] = ridge
	}
	for k := range r.Len() {
		y := float64(r.Value[k])
		for _, q := range [4]int{int(r.Item[k]), items + int(r.T[k]), items + bins + int(r.User[k]), p - 1} {
			rhs[q] += y
			diag[q]++
		}
	}
	// Preconditioned CG from theta = 0.
	res, z, dir, ad := slices.Clone(rhs), make([]float64, p), make([]float64, p), make([]float64, p)
	precond := func() {
		for q, v := range res {
			z[q] = 0
			if diag[q] > 0 {
				z[q] = v / diag[q]
			}
		}
	}
	dot := func(a, b []float64) float64 {
		var s float64
		for q, v := range a {
			s += float64(v * b[q])
		}
		return s
	}
	tol := 1e-13 * math.Sqrt(dot(rhs, rhs))
	precond()
	copy(dir, z)
	rz := dot(res, z)
	for range 1000 {
		if math.Sqrt(dot(res, res)) <= tol || rz == 0 {
			break
		}
		apply(ad, dir)
		alpha := rz / dot(dir, ad)
		for q := range theta {
			theta[q] += float64(alpha * dir[q])
			res[q] -= float64(alpha * ad[q])
		}
		precond()
		next := dot(res, z)
		beta := next / rz
		rz = next
		for q := range dir {
			dir[q] = z[q] + float64(beta*dir[q])
		}
	}
	return x
}
