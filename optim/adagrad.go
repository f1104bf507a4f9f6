package optim

import (
	"math"
	"slices"
)

// AdaGradOf is the diagonal AdaGrad method on parameters of type F
//
//	h_i += g_i^2;  x_i -= rho_s g_i / (sqrt(h_i) + Eps)
//
// with the accumulators h in F and every operation rounded to F. A zero
// Rate.Rho0 means 1e-2 and a zero Eps means 1e-8.
type AdaGradOf[F Float] struct {
	Rate Schedule
	Eps  float64

	h        []F
	rho, eps F // of the current step
}

// AdaGrad is AdaGradOf on float64 parameters.
type AdaGrad = AdaGradOf[float64]

// Init implements Method: it zeroes the accumulated squared gradients.
func (m *AdaGradOf[F]) Init(n int) {
	m.h = slices.Grow(m.h[:0], n)[:n]
	clear(m.h)
}

// Begin implements Method.
func (m *AdaGradOf[F]) Begin(step int) {
	m.rho = F(m.Rate.rate(step, DefaultAdaGradRate))
	m.eps = F(m.Eps)
	if m.eps == 0 {
		m.eps = DefaultAdaGradEps
	}
}

// Update implements Method.
func (m *AdaGradOf[F]) Update(x, g []F, off int) {
	checkStep(x, g)
	x = x[:len(g)]
	if off < 0 || off+len(g) > len(m.h) {
		panic("optim: AdaGrad.Update before Init or out of range")
	}
	rho, eps := m.rho, m.eps
	h := m.h[off : off+len(g)]
	h = h[:len(g)]
	if n := len(g) &^ 3; useAVX && n > 0 {
		if x64, ok := as64(x); ok {
			g64, _ := as64(g)
			h64, _ := as64(h)
			adagradAVX(&x64[0], &g64[0], &h64[0], n, float64(rho), float64(eps))
			x, g, h = x[n:], g[n:], h[n:]
		}
	}
	for i, gi := range g {
		hi := h[i] + F(gi*gi)
		h[i] = hi
		x[i] -= rho * gi / (F(math.Sqrt(float64(hi))) + eps)
	}
}

// adagradChainRow does what chainRow(gb, g, z, p, prev, zn, l2, wl, wr,
// true, acc, ahead) followed by m.Update(z, gb, off) does, with the same bits
// (z then holds the updated row, prev the old one): on AVX one kernel
// computes each entry's gradient and applies the update to it, reading
// every array once (the fused pass's chain chunks); the len%4 tail, and
// CPUs without AVX, take chainRow and Update. gb is scratch.
func adagradChainRow(m *AdaGrad, gb, g, z, p, prev, zn []float64, l2, wl, wr float64, acc *[8]float64, ahead, off int) {
	n := len(z)
	if off < 0 || off+n > len(m.h) {
		panic("optim: AdaGrad.Update before Init or out of range")
	}
	k := 0
	if useAVX {
		k = n &^ 3
	}
	if k > 0 {
		g, p, prev, zn := g[:n], p[:n], prev[:n], zn[:n]
		adagradChainRowAVX(&z[0], &g[0], &p[0], &prev[0], &zn[0], &m.h[off], k, l2, wl, wr, m.rho, m.eps, acc, ahead)
	}
	if k < n {
		chainRow(gb[k:n], g[k:n], z[k:n], p[k:n], prev[k:n], zn[k:n], l2, wl, wr, true, acc, ahead)
		m.Update(z[k:n], gb[k:n], off+k)
	}
}

// adagradChainRow32 is adagradChainRow in the float32 mode: one AVX kernel
// eight entries at a time, the len%8 tail (and CPUs without AVX) by
// chainRow and Update, with the same bits.
func adagradChainRow32(m *AdaGradOf[float32], gb, g, z, p, prev, zn []float32, l2, wl, wr float32, acc *[8]float64, ahead, off int) {
	n := len(z)
	if off < 0 || off+n > len(m.h) {
		panic("optim: AdaGrad.Update before Init or out of range")
	}
	k := 0
	if useAVX {
		k = n &^ 7
	}
	if k > 0 {
		g, p, prev, zn := g[:n], p[:n], prev[:n], zn[:n]
		adagradChainRow32AVX(&z[0], &g[0], &p[0], &prev[0], &zn[0], &m.h[off], k, l2, wl, wr, m.rho, m.eps, acc, ahead)
	}
	if k < n {
		chainRow(gb[k:n], g[k:n], z[k:n], p[k:n], prev[k:n], zn[k:n], l2, wl, wr, true, acc, ahead)
		m.Update(z[k:n], gb[k:n], off+k)
	}
}
