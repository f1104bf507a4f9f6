package dwe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"goldstone/optim"
)

// The float32 mode of the MAP model (issue 33): the parameters x, their
// gradient and the optimizer state are float32 (half the bytes of every
// parameter-sized array); the reductions that decide a result are float64.
//
//   - x = U C^T, tile by tile, on gemmNT32: every entry one chain of
//     correctly rounded float32 FMAs in k order (gemm32.go).
//   - The element-wise work in float32 (elem32.go): e^-|x|, log(1+e^-|x|)
//     and the sigmoids by a fixed sequence of correctly rounded float32
//     operations (Cephes' expf and fdlibm's logf reductions and
//     polynomials, no FMA; within 1.5-4.5 ulp of the float64 values,
//     TestElem32Accuracy), 16 entries at a time on AVX-512 and 8 on AVX2
//     (elem32_amd64.s) or in its Go twin elemRow32Go, the same bits on
//     every build. Each loss term is the float64 weight (a_i b_j, n+)
//     times the float32 softplus widened, summed in float64 in column
//     order as in the float64 mode; dl/dx is formed in float64 from the
//     widened sigmoids and rounded once to float32 for the gradient
//     products.
//   - The gradients gU += X C and gC += X^T U on gemmAcc32: per entry one
//     float32 FMA chain over the contexts (words) of a tile, the tiles in
//     order, so each gradient entry accumulates its V terms in float32.
//   - The local prior 1/(2 sigma0^2) ||Z||^2 is Problem32's L2, which the
//     Driver's fused pass adds (its norm in float64, the gradient term in
//     float32); the counts, psi and the losses stay float64.
//
// Every operation has a fixed order and rounding, so a float32 run gives
// the same bits at any number of workers and on every build (GOAMD64 v1,
// v3, v4, purego, arm64: testdata/dwe-float32.bits.json).

// DefaultAdam32 is DefaultAdam on float32 parameters.
func DefaultAdam32() *optim.AdamOf[float32] {
	return &optim.AdamOf[float32]{Rate: optim.Schedule{Rho0: 0.1, S0: 1000, Kappa: 0.7}}
}

// Init32 is Init in the float32 mode: the same draws, rounded to float32.
func (m *MAP) Init32(x []float32, rng *rand.Rand) {
	checkLen32("x", x, m.NumParams())
	for i := range x {
		x[i] = float32(m.cfg.InitStd * optim.NormFloat64(rng))
	}
}

// Problem32 is Problem in the float32 mode, for optim.DriverOf[float32]:
// the likelihood (loss in float64, gradient in float32) as the local loss,
// the local prior as L2 and the random-walk chain as the coupling. The
// Driver's gauge rounds need float64 parameters: a float32 run has none.
func (m *MAP) Problem32() optim.ProblemOf[float32] {
	return optim.ProblemOf[float32]{Local: m.lik.eval32, Blocks: m.Blocks(), Graph: m.graph, L2: 1 / m.cfg.Sigma0Sq}
}

// LocalLoss32 is LocalLoss in the float32 mode: -loglik + 1/(2 sigma0^2)
// ||x||^2 (in float64) at x, its gradient (float32) overwriting grad. The
// prior's gradient term is c x_i rounded to float32 and added in float32,
// as the Driver's fused pass adds Problem32's L2.
func (m *MAP) LocalLoss32(grad, x []float32) float64 {
	n := m.NumParams()
	checkLen32("x", x, n)
	checkLen32("grad", grad, n)
	loss := m.lik.eval32(grad, x)
	c := 1 / m.cfg.Sigma0Sq
	c32 := float32(c)
	var r float64
	for i, v := range x {
		r += float64(float64(v) * float64(v))
		grad[i] += float32(c32 * v) // rounded: no fusion on any build
	}
	return loss + float64(0.5*c*r)
}

// NegLogLik32 is NegLogLik in the float32 mode.
func (m *MAP) NegLogLik32(x []float32) float64 {
	checkLen32("x", x, m.NumParams())
	return m.lik.eval32(nil, x)
}

// Widen returns the float32 parameters x as float64 (exact): what the
// evaluation (PredictiveLogLik, the cosines, the exports) reads from a
// float32 run.
func Widen(x []float32) []float64 {
	w := make([]float64, len(x))
	for i, v := range x {
		w[i] = float64(v)
	}
	return w
}

// Trainable32 is a model the float32 mode trains (*MAP).
type Trainable32 interface {
	NumParams() int
	Resample(rng *rand.Rand, nw, nc int)
	Problem32() optim.ProblemOf[float32]
}

var _ Trainable32 = (*MAP)(nil)

// Run32 is Run in the float32 mode: it trains the float32 x (len
// Model.NumParams(), initialised by the caller, e.g. with Init32) of
// Model, which must be a Trainable32, with Method32 (nil: DefaultAdam32())
// on optim.DriverOf[float32], the same schedule and draws as Run. A Gauge
// must run on float32 parameters (optim.Gauge32: Goldstone, Procrustes),
// as the pipeline's float32 trials do.
func (tr *Trainer) Run32(ctx context.Context, x []float32, each func(it *Iter) error) error {
	m, ok := tr.Model.(Trainable32)
	if !ok {
		return errors.New("dwe trainer: the float32 mode needs a MAP model")
	}
	if _, ok := tr.Gauge.(optim.Gauge32); tr.Gauge != nil && tr.K1 > 0 && !ok {
		return fmt.Errorf("dwe trainer: the gauge step %T does not run on float32 parameters", tr.Gauge)
	}
	checkLen32("x", x, m.NumParams())
	method := tr.Method32
	if method == nil {
		method = DefaultAdam32()
	}
	d := optim.DriverOf[float32]{Method: method, Gauge: tr.Gauge, K1: tr.K1, Pool: tr.Pool}
	return runSchedule(ctx, tr, &d, m.Problem32(), x, each)
}

// runSchedule runs d on p from x for tr.Steps steps, drawing the schedule's
// randomness into tr.Model before every step (Run and Run32).
func runSchedule[F optim.Float](ctx context.Context, tr *Trainer, d *optim.DriverOf[F], p optim.ProblemOf[F], x []F, each func(it *Iter) error) error {
	if tr.Steps <= 0 {
		return nil
	}
	sched := Schedule{MinibatchSteps: tr.MinibatchSteps, BatchWords: tr.BatchWords, BatchContexts: tr.BatchContexts}
	rng := rand.New(NewSource(tr.Seed))
	sched.Draw(tr.Model, rng, 0)
	var it Iter
	_, err := d.Run(p, x, tr.Steps, func(oi *optim.Iter) error {
		it.Iter = *oi
		it.Minibatch = sched.Minibatch(oi.Step)
		if each != nil {
			if err := each(&it); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if oi.Step+1 < tr.Steps { // nothing to draw past the end
			sched.Draw(tr.Model, rng, oi.Step+1)
		}
		return nil
	})
	return err
}

// negLogLik32 is negLogLik in the float32 mode (see the top of this file):
// u (m x d), v (n x d) and the gradients gu, gv (nil: loss only) float32,
// the counts a, b, sp and the loss float64. s holds the scratch: the
// contexts transposed once per call (gemmNT32 reads them by rows), the
// float32 tile, the element-wise work's buffers, cur.
func negLogLik32(gu, gv, u, v []float32, a, b []float64, m, n, d int, sp sparseRows, col0 int32, scale float64, tb int, s *scratch) float64 {
	s.vt32 = grow32(s.vt32, n*d)
	transpose32(s.vt32, v, n, d)
	s.tile32 = grow32(s.tile32, tb*tb)
	if cap(s.cur) < tb {
		s.cur = make([]int, tb)
	}
	cur, buf := s.cur[:tb], &s.buf32
	var loss float64
	for i0 := 0; i0 < m; i0 += tb {
		i1 := min(i0+tb, m)
		mi := i1 - i0
		for r := 0; r < mi; r++ {
			cur[r] = sp.ptr[i0+r]
		}
		ub := u[i0*d : i1*d]
		for j0 := 0; j0 < n; j0 += tb {
			j1 := min(j0+tb, n)
			nj := j1 - j0
			vb := v[j0*d : j1*d]
			x := s.tile32[:mi*nj]
			gemmNT32(x, ub, s.vt32[j0:], mi, nj, d, n, buf)
			bj := b[j0:j1]
			for r := 0; r < mi; r++ {
				pos := tilePositives{sp: sp, k: cur[r], kend: sp.ptr[i0+r+1], lo: int32(j0) + col0, hi: int32(j1) + col0}
				loss = elemRow32(x[r*nj:(r+1)*nj], bj, a[i0+r], scale, &pos, loss, &s.elem32)
				cur[r] = pos.k
			}
			if gu != nil {
				gemmAcc32(gu[i0*d:i1*d], d, x, nj, 1, vb, d, mi, d, nj, buf) // gu += x v
				gemmAcc32(gv[j0*d:j1*d], d, x, 1, nj, ub, d, nj, d, mi, buf) // gv += x^T u
			}
		}
	}
	return scale * loss
}

// eval32 is eval in the float32 mode.
func (l *likelihood) eval32(grad, z []float32) float64 {
	l.z32, l.grad32 = z, grad
	l.par.Chunks(l.c.T(), 1, l.fn32)
	l.z32, l.grad32 = nil, nil
	var s float64
	for _, v := range l.losses {
		s += v
	}
	return s
}

// step32 is step in the float32 mode.
func (l *likelihood) step32(t int) float64 {
	v, d := l.c.V, l.d
	n := 2 * v * d
	zt := l.z32[t*n : (t+1)*n]
	u, c := zt[:v*d], zt[v*d:]
	var gu, gc []float32
	if l.grad32 != nil {
		gt := l.grad32[t*n : (t+1)*n]
		clear(gt)
		gu, gc = gt[:v*d], gt[v*d:]
	}
	sc := &l.c.Steps[t]
	s := l.pool.get()
	defer l.pool.put(s)
	if l.words == nil {
		return negLogLik32(gu, gc, u, c, sc.NegA, sc.NegB, v, v, d,
			sparseRows{sc.rowPtr, sc.J, sc.Pos}, 0, 1, l.tb, s)
	}
	m, nc := len(l.words), len(l.ctxs)
	s.ub32, s.vb32 = gatherRows(s.ub32, u, l.words, d), gatherRows(s.vb32, c, l.ctxs, d)
	l.gatherCounts(s, sc)
	var gub, gvb []float32
	if gu != nil {
		s.gu32, s.gv32 = grow32(s.gu32, m*d), grow32(s.gv32, nc*d)
		gub, gvb = s.gu32, s.gv32
		clear(gub)
		clear(gvb)
	}
	loss := negLogLik32(gub, gvb, s.ub32, s.vb32, s.a, s.b, m, nc, d,
		sparseRows{s.ptr, s.col, s.val}, 0, l.scale, l.tb, s)
	if gu != nil {
		scatterRows(gu, gub, l.words, d)
		scatterRows(gc, gvb, l.ctxs, d)
	}
	return loss
}

// gatherRows sets dst (resized) to the rows idx of src (rows of d).
func gatherRows[F optim.Float](dst, src []F, idx []int, d int) []F {
	if cap(dst) < len(idx)*d {
		dst = make([]F, len(idx)*d)
	}
	dst = dst[:len(idx)*d]
	for r, i := range idx {
		copy(dst[r*d:(r+1)*d], src[i*d:(i+1)*d])
	}
	return dst
}

// scatterRows copies the rows of src to the rows idx of dst.
func scatterRows[F optim.Float](dst, src []F, idx []int, d int) {
	for r, i := range idx {
		copy(dst[i*d:(i+1)*d], src[r*d:(r+1)*d])
	}
}

func checkLen32(name string, x []float32, n int) {
	if len(x) != n {
		panic(fmt.Sprintf("dwe: len(%s)=%d, want %d", name, len(x), n))
	}
}
