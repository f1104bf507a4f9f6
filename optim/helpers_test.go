package optim

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// mfProblem is the dense dynamic Gaussian matrix factorization of the paper's
// first experiment: l = sum_t 1/2 ||X_t - U_t^T V_t||_F^2 with Z_t = (U_t, V_t),
// users in columns [0, nu), items in [nu, nu+ni). It is rotation invariant.
type mfProblem struct {
	nu, ni, d, t int
	x            [][]float64 // per t, nu x ni row-major
	res          []float64   // scratch residual
}

func newMF(rng *rand.Rand, nu, ni, d, T int) *mfProblem {
	p := &mfProblem{nu: nu, ni: ni, d: d, t: T, res: make([]float64, nu*ni)}
	for t := 0; t < T; t++ {
		x := make([]float64, nu*ni)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		p.x = append(p.x, x)
	}
	return p
}

func (p *mfProblem) blocks() Blocks { return Blocks{T: p.t, N: p.nu + p.ni, D: p.d} }

func (p *mfProblem) local(grad, x []float64) float64 {
	b := p.blocks()
	clear(grad)
	var loss float64
	d := p.d
	for t := 0; t < p.t; t++ {
		z, gz := b.Block(x, t), b.Block(grad, t)
		for i := 0; i < p.nu; i++ {
			u := z[i*d : (i+1)*d]
			for j := 0; j < p.ni; j++ {
				v := z[(p.nu+j)*d : (p.nu+j+1)*d]
				var s float64
				for k := range u {
					s += u[k] * v[k]
				}
				r := s - p.x[t][i*p.ni+j]
				p.res[i*p.ni+j] = r
				loss += 0.5 * r * r
			}
		}
		for i := 0; i < p.nu; i++ {
			u, gu := z[i*d:(i+1)*d], gz[i*d:(i+1)*d]
			for j := 0; j < p.ni; j++ {
				v, gv := z[(p.nu+j)*d:(p.nu+j+1)*d], gz[(p.nu+j)*d:(p.nu+j+1)*d]
				r := p.res[i*p.ni+j]
				for k := range u {
					gu[k] += r * v[k]
					gv[k] += r * u[k]
				}
			}
		}
	}
	return loss
}

func randVec(rng *rand.Rand, n int, scale float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = scale * rng.NormFloat64()
	}
	return x
}

// randOrth returns a random d x d orthogonal matrix (row-major) with the given determinant sign.
func randOrth(rng *rand.Rand, d int, det float64) []float64 {
	a := mat.NewDense(d, d, randVec(rng, d*d, 1))
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	if math.Signbit(mat.Det(&q)) != math.Signbit(det) {
		for i := 0; i < d; i++ {
			q.Set(i, 0, -q.At(i, 0))
		}
	}
	return append([]float64(nil), q.RawMatrix().Data...)
}

// applyMaps returns a copy of x with Z_t <- R_t Z_t (naive loops).
func applyMaps(x []float64, b Blocks, r [][]float64) []float64 {
	y := append([]float64(nil), x...)
	d := b.D
	for t := 0; t < b.T; t++ {
		z, out := b.Block(x, t), b.Block(y, t)
		for i := 0; i < b.N; i++ {
			for a := 0; a < d; a++ {
				var s float64
				for c := 0; c < d; c++ {
					s += r[t][a*d+c] * z[i*d+c]
				}
				out[i*d+a] = s
			}
		}
	}
	return y
}

func relErr(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(1e-300, math.Max(math.Abs(a), math.Abs(b)))
}

// checkGrad compares grad with central finite differences of f at x on a few
// coordinates.
func checkGrad(t *testing.T, name string, f func(x []float64) float64, x, grad []float64, idx []int, tol float64) {
	t.Helper()
	for _, i := range idx {
		old := x[i]
		h := 1e-6 * math.Max(1, math.Abs(old))
		x[i] = old + h
		fp := f(x)
		x[i] = old - h
		fm := f(x)
		x[i] = old
		fd := (fp - fm) / (2 * h)
		if math.Abs(fd-grad[i]) > tol*math.Max(1, math.Abs(fd)) {
			t.Errorf("%s: d/dx[%d]: analytic %.10g, finite difference %.10g", name, i, grad[i], fd)
		}
	}
}

var (
	testPoolsMu sync.Mutex
	testPools   = map[int]*Pool{}
)

// testPool returns a shared pool with w workers, or nil (inline) for w <= 1.
func testPool(w int) *Pool {
	if w <= 1 {
		return nil
	}
	testPoolsMu.Lock()
	defer testPoolsMu.Unlock()
	if p, ok := testPools[w]; ok {
		return p
	}
	p := NewPool(w)
	testPools[w] = p
	return p
}
