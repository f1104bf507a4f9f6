package models

import (
	"fmt"
	"math"

	"goldstone/optim"
)

// BiasModel is a static logistic model of binary ratings without
// embeddings: the score of user i's rating of item j is
// s = C + User[i] + Item[j] (User nil: no user biases), p(x) = sigmoid(x s).
// It is the reference a dynamic model is measured against: what the
// ratings' overall rate, the items' and the users' tendencies explain.
type BiasModel struct {
	C          float64
	User, Item []float64
}

// FitBiases fits a BiasModel to train by MAP: the logistic likelihood plus
// the L2 prior gamma/2 (sum a_i^2 + sum b_j^2) on the user and item biases
// (the intercept C is free). With users = 0 the model has item biases only.
// The objective is convex; it is minimised by Newton's method, each Newton
// system solved by conjugate gradients with a diagonal preconditioner
// (Hessian-vector products cost one pass over the ratings) and each step
// halved until the objective falls, until the gradient's largest entry is
// below 1e-10 per rating of the busiest bias (at most 100 Newton steps).
// Everything runs in a fixed order, every product rounded before it is
// added (no fused multiply-add): the same bits on every run and machine. gamma must
// be > 0 unless every user and item has ratings of both signs.
func FitBiases(train *Ratings, users, items int, gamma float64) (*BiasModel, error) {
	n := train.Len()
	if n == 0 {
		return nil, fmt.Errorf("fit biases: no training ratings")
	}
	if !(gamma >= 0) || math.IsInf(gamma, 0) {
		return nil, fmt.Errorf("fit biases: gamma = %v, want finite >= 0", gamma)
	}
	for k := range n {
		if int(train.Item[k]) >= items || users > 0 && int(train.User[k]) >= users {
			return nil, fmt.Errorf("fit biases: rating %d: user %d or item %d out of range", k, train.User[k], train.Item[k])
		}
	}
	f := biasFit{r: train, users: users, items: items, gamma: gamma}
	nv := 1 + users + items // v = (C, a, b)
	v := make([]float64, nv)
	g, d, w := make([]float64, nv), make([]float64, nv), make([]float64, n)
	trial := make([]float64, nv)
	cg := newCG(nv)
	obj := f.value(v)
	for range 100 {
		f.gradient(v, g, w)
		worst := 0.0
		for _, x := range g {
			worst = max(worst, math.Abs(x))
		}
		if worst <= 1e-10*float64(n) {
			break
		}
		// Solve H d = -g: H = J^T diag(w) J + diag(0, gamma, ..., gamma).
		cg.solve(d, g, func(dst, x []float64) { f.hess(dst, x, w) }, f.diag(w))
		for step, shrink := 0, 1.0; step < 60; step, shrink = step+1, shrink/2 {
			for i := range v {
				trial[i] = v[i] + float64(shrink*d[i])
			}
			if o := f.value(trial); o <= obj {
				obj = o
				copy(v, trial)
				break
			}
		}
	}
	m := &BiasModel{C: v[0], Item: append([]float64(nil), v[1+users:]...)}
	if users > 0 {
		m.User = append([]float64(nil), v[1:1+users]...)
	}
	return m, nil
}

// biasFit is the MAP objective of a BiasModel over v = (C, a, b).
type biasFit struct {
	r            *Ratings
	users, items int
	gamma        float64
}

func (f *biasFit) score(v []float64, k int) float64 {
	s := v[0] + v[1+f.users+int(f.r.Item[k])]
	if f.users > 0 {
		s += v[1+int(f.r.User[k])]
	}
	return s
}

func (f *biasFit) value(v []float64) float64 {
	var l, p float64
	for k, x := range f.r.X {
		l += softplus(-float64(x) * f.score(v, k))
	}
	for _, b := range v[1:] {
		p += float64(b * b)
	}
	return l + float64(0.5*f.gamma*p)
}

// gradient writes the gradient into g and the Hessian weights
// sigmoid(s) sigmoid(-s) of every rating into w.
func (f *biasFit) gradient(v, g, w []float64) {
	g[0] = 0
	for i, b := range v[1:] {
		g[1+i] = float64(f.gamma * b)
	}
	for k, x := range f.r.X {
		s := f.score(v, k)
		p := sigmoid(-float64(x) * s)
		c := float64(-float64(x) * p) // dl/ds
		w[k] = float64(p * (1 - p))
		f.add(g, k, c)
	}
}

// add adds c to the entries of g of rating k's intercept, item and user.
func (f *biasFit) add(g []float64, k int, c float64) {
	g[0] += c
	g[1+f.users+int(f.r.Item[k])] += c
	if f.users > 0 {
		g[1+int(f.r.User[k])] += c
	}
}

// hess sets dst = H x.
func (f *biasFit) hess(dst, x, w []float64) {
	dst[0] = 0
	for i, b := range x[1:] {
		dst[1+i] = float64(f.gamma * b)
	}
	for k := range f.r.X {
		f.add(dst, k, float64(w[k]*f.score(x, k)))
	}
}

// diag returns the diagonal of H (the preconditioner).
func (f *biasFit) diag(w []float64) []float64 {
	d := make([]float64, 1+f.users+f.items)
	for i := 1; i < len(d); i++ {
		d[i] = f.gamma
	}
	for k := range f.r.X {
		f.add(d, k, w[k])
	}
	for i, v := range d {
		if v == 0 {
			d[i] = 1
		}
	}
	return d
}

// cgSolver holds the vectors of a preconditioned conjugate-gradient solve.
type cgSolver struct{ r, z, p, q []float64 }

func newCG(n int) *cgSolver {
	return &cgSolver{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
}

// solve sets x to the solution of A x = -g (A symmetric positive
// semidefinite, applied by mul) with the diagonal preconditioner m, to a
// relative residual of 1e-12 or len(x) iterations.
func (c *cgSolver) solve(x, g []float64, mul func(dst, x []float64), m []float64) {
	clear(x)
	var rz, g2 float64
	for i := range g {
		c.r[i] = -g[i]
		c.z[i] = c.r[i] / m[i]
		c.p[i] = c.z[i]
		rz += float64(c.r[i] * c.z[i])
		g2 += float64(g[i] * g[i])
	}
	for it := 0; it < len(x) && rz > 0; it++ {
		mul(c.q, c.p)
		var pq float64
		for i := range c.p {
			pq += float64(c.p[i] * c.q[i])
		}
		if !(pq > 0) {
			return
		}
		alpha := rz / pq
		var r2, rzNew float64
		for i := range x {
			x[i] += float64(alpha * c.p[i])
			c.r[i] -= float64(alpha * c.q[i])
			c.z[i] = c.r[i] / m[i]
			r2 += float64(c.r[i] * c.r[i])
			rzNew += float64(c.r[i] * c.z[i])
		}
		if r2 <= 1e-24*g2 {
			return
		}
		beta := rzNew / rz
		rz = rzNew
		for i := range c.p {
			c.p[i] = c.z[i] + float64(beta*c.p[i])
		}
	}
}

func sigmoid(y float64) float64 {
	if y >= 0 {
		return 1 / (1 + optim.Exp(-y))
	}
	e := optim.Exp(y)
	return e / (1 + e)
}

// Evaluate scores test (users and items without training ratings have bias
// 0; indices beyond the fitted ones count as such).
func (m *BiasModel) Evaluate(test *Ratings) Metrics {
	scores := make([]float64, test.Len())
	for k := range scores {
		s := m.C
		if j := int(test.Item[k]); j < len(m.Item) {
			s += m.Item[j]
		}
		if i := int(test.User[k]); i < len(m.User) {
			s += m.User[i]
		}
		scores[k] = s
	}
	return scoreMetrics(scores, test.X)
}
