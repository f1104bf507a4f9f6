package optim

import "math"

// Small dense linear algebra of our own: products, the SVD, Cholesky
// factorisation and the Laplacian's pseudoinverse. They replace gonum's BLAS
// and LAPACK on every path whose values reach a result, because gonum's
// cannot be made to give the same bits on every build from outside: its Go
// loops are compiled with fused multiply-adds under GOAMD64=v3 and on arm64
// (Go has no per-package flag against contraction), and its amd64 assembly
// (DotUnitary, AxpyUnitary) sums in a different order than the generic Go
// used on other architectures. Every routine here does its operations in a
// fixed order with every product rounded (float64(x*y) + z) or fused on
// purpose (math.FMA, in GemmAcc's tiles, whose assembly and Go versions give
// the same bits), so its results depend only on its inputs.

// gemm computes C = alpha op(A) op(B) + beta C for beta 0 or 1, where op(A)
// is m x k and op(B) is k x n (tA, tB: transposed), serially on GemmAcc:
// every entry of C is its old value (beta 1) or zero (beta 0) plus one chain,
// in p order, of the products (alpha A_ip) B_pj (fused in GemmAcc's 4 x 4
// tiles, rounded elsewhere). work must hold m*k values when alpha != 1 (the
// scaled A) plus k*n when tB (the transposed B).
func gemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int, work []float64) {
	switch beta {
	case 0:
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
	case 1:
	default:
		panic("optim: gemm with beta other than 0 or 1")
	}
	if m == 0 || n == 0 || k == 0 {
		return
	}
	aOut, aRed := lda, 1
	if tA {
		aOut, aRed = 1, lda
	}
	if alpha != 1 {
		s := work[:m*k]
		work = work[m*k:]
		for i := 0; i < m; i++ {
			for p := 0; p < k; p++ {
				s[i*k+p] = alpha * a[i*aOut+p*aRed]
			}
		}
		a, aOut, aRed = s, k, 1
	}
	if tB {
		t := work[:k*n]
		for p := 0; p < k; p++ {
			for j := 0; j < n; j++ {
				t[p*n+j] = b[j*ldb+p]
			}
		}
		b, ldb = t, n
	}
	GemmAcc(c, ldc, a, aOut, aRed, b, ldb, m, n, k)
}

// SVD computes the singular value decomposition a = U diag(s) V^T of the
// m x n row-major matrix a, m >= n, by one-sided Jacobi rotations
// (Hestenes; Demmel and Veselic, "Jacobi's method is more accurate than QR",
// 1992): the columns of W = A V are rotated pairwise, in the cyclic order
// (0,1), (0,2), ..., (n-2,n-1), until every pair is orthogonal to a relative
// m eps (|w_p . w_q| <= m eps ||w_p|| ||w_q||, the squared norms recomputed
// at the start of every sweep and updated through its rotations; columns
// zero to working precision are not rotated), and then s_j = ||w_j||,
// u_j = w_j / s_j. It writes the left
// singular vectors as the rows of ut (n x m: ut[j*m:(j+1)*m] = u_j), the
// singular values in s (n, descending; ties keep their column order) and
// the right singular vectors as the rows of vt (n x n: V^T). Columns zero
// to working precision (s_j at most twice the tol ||A||_F below which
// columns are not rotated, or m eps s_0) get unit vectors orthogonal to the
// others (Gram-Schmidt on the standard basis, in order), so U has
// orthonormal columns even for a rank-deficient a. a is not changed; ut,
// s and vt must not overlap it. It returns false if a holds a NaN or an
// infinity or its squares overflow, or if 100 sweeps did not converge.
//
// Every operation is in a fixed order with every product rounded, so the
// result is the same bits on every build (gonum's LAPACK is not; see
// dense.go). It does not allocate.
func SVD(ut, s, vt, a []float64, m, n int) bool {
	if m < n || n < 0 {
		panic("optim: SVD of a matrix with fewer rows than columns")
	}
	ut, s, vt, a = ut[:n*m], s[:n], vt[:n*n], a[:m*n]
	for j := 0; j < n; j++ {
		w := ut[j*m : (j+1)*m]
		for i := range w {
			w[i] = a[i*n+j]
		}
	}
	setIdentity(vt, n)
	const eps = 0x1p-52
	tol := float64(max(m, 4)) * eps
	norms := s // ||w_j||^2, kept up to date through the rotations
	// A column whose norm squared is at most tiny (tol^2 ||A||_F^2) is zero
	// to working precision: rotating it against another only stirs rounding
	// noise, which never becomes orthogonal to a relative tol (a
	// rank-deficient a would not converge), so such pairs count as
	// orthogonal.
	var fro float64
	for _, x := range a {
		fro += float64(x * x)
	}
	if math.IsNaN(fro) || math.IsInf(fro, 0) {
		return false
	}
	tiny := float64(tol*tol) * fro
	ok := false
	for sweep := 0; sweep < 100 && !ok; sweep++ {
		ok = true
		for j := 0; j < n; j++ {
			norms[j] = sumSquares(ut[j*m : (j+1)*m])
		}
		for p := 0; p < n-1; p++ {
			for q := p + 1; q < n; q++ {
				wp := ut[p*m : (p+1)*m]
				wq := ut[q*m : (q+1)*m][:len(wp)]
				alpha, beta := norms[p], norms[q]
				var gamma float64
				for i, x := range wp {
					gamma += float64(x * wq[i])
				}
				if !(math.Abs(gamma) <= tol*math.Sqrt(alpha)*math.Sqrt(beta)) && alpha > tiny && beta > tiny {
					if math.IsNaN(gamma) || math.IsInf(gamma, 0) {
						return false
					}
					ok = false
					// Rotate so that w_p' . w_q' = 0; the squared norms
					// change by -+ t gamma.
					t, c, sn := jacobiRotation(alpha, beta, gamma)
					rotPair(wp, wq, c, sn)
					rotPair(vt[p*n:(p+1)*n], vt[q*n:(q+1)*n], c, sn)
					tg := float64(t * gamma)
					norms[p], norms[q] = alpha-tg, beta+tg
				}
			}
		}
	}
	if !ok {
		return false
	}
	for j := 0; j < n; j++ {
		s[j] = math.Sqrt(sumSquares(ut[j*m : (j+1)*m]))
	}
	sortSingular(ut, s, vt, m, n)
	// A column zero to working precision (norm squared at most tiny) was
	// never rotated against the others, so it is not orthogonal to them: it
	// must be replaced, not normalised. Twice tol ||A||_F covers every such
	// column whatever the rounding of the square root (a column just above
	// it was rotated; replacing it too changes A by at most 2 tol ||A||_F).
	zero := max(2*math.Sqrt(tiny), float64(m)*eps*s[0])
	for j := 0; j < n; j++ {
		w := ut[j*m : (j+1)*m]
		if s[j] > zero {
			inv := 1 / s[j]
			for i := range w {
				w[i] *= inv
			}
			continue
		}
		s[j] = max(s[j], 0)
		completeBasis(ut, j, m)
	}
	return true
}

// sumSquares is the sum of the squares of w, in order, every product rounded.
func sumSquares(w []float64) float64 {
	var ss float64
	for _, x := range w {
		ss += float64(x * x)
	}
	return ss
}

// jacobiRotation gives the rotation (cosine c, sine sn, tangent t) that
// makes two columns with squared norms alpha, beta and dot product gamma
// orthogonal (Rutishauser's formulas).
func jacobiRotation(alpha, beta, gamma float64) (t, c, sn float64) {
	zeta := (beta - alpha) / (2 * gamma)
	if math.Abs(zeta) < 1e150 {
		t = 1 / (math.Abs(zeta) + math.Sqrt(1+float64(zeta*zeta)))
	} else {
		t = 0.5 / math.Abs(zeta)
	}
	if zeta < 0 {
		t = -t
	}
	c = 1 / math.Sqrt(1+float64(t*t))
	return t, c, c * t
}

// sortSingular sorts the singular values s descending (selection sort:
// stable for ties by taking the first maximum), swapping the rows of ut
// (n x m) and vt (n x n) with the values.
func sortSingular(ut, s, vt []float64, m, n int) {
	for j := 0; j < n; j++ {
		b := j
		for k := j + 1; k < n; k++ {
			if s[k] > s[b] {
				b = k
			}
		}
		if b != j {
			s[j], s[b] = s[b], s[j]
			swapRows(ut[j*m:(j+1)*m], ut[b*m:(b+1)*m])
			swapRows(vt[j*n:(j+1)*n], vt[b*n:(b+1)*n])
		}
	}
}

// rotPair sets (x, y) <- (c x - s y, s x + c y), entry by entry.
func rotPair(x, y []float64, c, s float64) {
	y = y[:len(x)]
	for i, a := range x {
		b := y[i]
		x[i] = float64(c*a) - float64(s*b)
		y[i] = float64(s*a) + float64(c*b)
	}
}

func swapRows(a, b []float64) {
	b = b[:len(a)]
	for i := range a {
		a[i], b[i] = b[i], a[i]
	}
}

// completeBasis sets row j of u (rows of length m) to a unit vector
// orthogonal to rows 0..j-1 (assumed orthonormal): the first standard basis
// vector, in order, that keeps a norm above 1/2 after two rounds of
// Gram-Schmidt against them, or, when none does (j close to m: the residual
// norms squared of the m basis vectors sum to m - j, so only their largest
// is sure to exceed 1/m), the one with the largest residual norm, the first
// of equals.
func completeBasis(u []float64, j, m int) {
	w := u[j*m : (j+1)*m]
	best, bestSS := -1, 0.0
	for e := 0; e < m; e++ {
		ss := residual(u, w, j, e)
		if ss > 0.25 {
			normalize(w, ss)
			return
		}
		if ss > bestSS {
			best, bestSS = e, ss
		}
	}
	if best < 0 {
		panic("optim: no orthogonal complement (rows not orthonormal)")
	}
	normalize(w, residual(u, w, j, best))
}

// residual sets w to the standard basis vector e minus its projection on
// rows 0..j-1 of u (two rounds of Gram-Schmidt) and returns its norm squared.
func residual(u, w []float64, j, e int) float64 {
	m := len(w)
	clear(w)
	w[e] = 1
	for range 2 {
		for k := 0; k < j; k++ {
			v := u[k*m : (k+1)*m][:len(w)]
			var dot float64
			for i, x := range v {
				dot += float64(x * w[i])
			}
			for i, x := range v {
				w[i] -= float64(dot * x)
			}
		}
	}
	var ss float64
	for _, x := range w {
		ss += float64(x * x)
	}
	return ss
}

// normalize scales w, of norm squared ss, to unit length.
func normalize(w []float64, ss float64) {
	inv := 1 / math.Sqrt(ss)
	for i := range w {
		w[i] *= inv
	}
}

// Cholesky factors the n x n symmetric positive definite matrix a
// (row-major; only its lower triangle is read) in place as a = L L^T: on
// return the lower triangle of a holds L (the strict upper triangle is
// zeroed). It returns false, with a partly overwritten, if a is not
// positive definite to working precision (a pivot <= 0 or NaN). Each entry
// is computed in a fixed order with every product rounded, so the result is
// the same bits on every build; it does not allocate.
func Cholesky(a []float64, n int) bool {
	a = a[:n*n]
	for j := 0; j < n; j++ {
		rj := a[j*n : j*n+j]
		d := a[j*n+j]
		for _, v := range rj {
			d -= float64(v * v)
		}
		if !(d > 0) {
			return false
		}
		d = math.Sqrt(d)
		a[j*n+j] = d
		clear(a[j*n+j+1 : (j+1)*n])
		for i := j + 1; i < n; i++ {
			ri := a[i*n : i*n+j][:len(rj)]
			s := a[i*n+j]
			for k, v := range rj {
				s -= float64(ri[k] * v)
			}
			a[i*n+j] = s / d
		}
	}
	return true
}

// CholeskySolve overwrites b with the solution x of L L^T x = b for the
// factor L that Cholesky left in l (n x n): forward, then back substitution,
// each in a fixed order with every product rounded.
func CholeskySolve(l []float64, n int, b []float64) {
	l, b = l[:n*n], b[:n]
	for i := 0; i < n; i++ {
		s := b[i]
		for k, v := range l[i*n : i*n+i] {
			s -= float64(v * b[k])
		}
		b[i] = s / l[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for k := i + 1; k < n; k++ {
			s -= float64(l[k*n+i] * b[k])
		}
		b[i] = s / l[i*n+i]
	}
}

// Laplacian returns L = D - A as a dense symmetric N x N matrix, row-major.
func (g *Graph) Laplacian() []float64 {
	n := g.N
	l := make([]float64, n*n)
	for _, e := range g.Edges {
		l[e.S*n+e.S] += e.W
		l[e.T*n+e.T] += e.W
		l[e.S*n+e.T] -= e.W
		l[e.T*n+e.S] -= e.W
	}
	return l
}

// Components returns the connected components of the graph, each as its
// nodes in increasing order, ordered by their smallest node.
func (g *Graph) Components() [][]int {
	adj := adjacency(g.N, g.Edges)
	comp := make([]int, g.N)
	for i := range comp {
		comp[i] = -1
	}
	var out [][]int
	for r := 0; r < g.N; r++ {
		if comp[r] >= 0 {
			continue
		}
		c := len(out)
		comp[r] = c
		nodes := []int{r}
		for k := 0; k < len(nodes); k++ {
			for _, he := range adj[nodes[k]] {
				if comp[he.other] < 0 {
					comp[he.other] = c
					nodes = append(nodes, he.other)
				}
			}
		}
		sortInts(nodes)
		out = append(out, nodes)
	}
	return out
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// LaplacianPinv returns the Moore-Penrose pseudoinverse L^+ of the graph
// Laplacian, N x N row-major. L^+ is block diagonal over the connected
// components; for a component c of n_c nodes with Laplacian L_c, the matrix
// L_c + J/n_c (J all ones) is positive definite (the constant vector, L_c's
// null space, gets eigenvalue 1; every other eigenvector keeps its
// eigenvalue), so L_c^+ = (L_c + J/n_c)^-1 - J/n_c. The inverse is computed
// by a Cholesky factorisation and one solve per unit vector, and the result
// symmetrised, so L^+ is the same bits on every build (the eigendecomposition
// it replaces, gonum's, was not). An isolated node gets 0.
func (g *Graph) LaplacianPinv() []float64 {
	n := g.N
	lap := g.Laplacian()
	p := make([]float64, n*n)
	for _, nodes := range g.Components() {
		k := len(nodes)
		if k == 1 {
			continue
		}
		j := 1 / float64(k)
		a := make([]float64, k*k)
		for r, u := range nodes {
			for c, v := range nodes {
				a[r*k+c] = lap[u*n+v] + j
			}
		}
		if !Cholesky(a, k) {
			panic("optim: Laplacian of a connected component not positive semidefinite")
		}
		inv := make([]float64, k*k)
		col := make([]float64, k)
		for c := 0; c < k; c++ {
			clear(col)
			col[c] = 1
			CholeskySolve(a, k, col)
			for r := range col {
				inv[r*k+c] = col[r] - j
			}
		}
		for r, u := range nodes {
			for c, v := range nodes {
				p[u*n+v] = 0.5 * (inv[r*k+c] + inv[c*k+r])
			}
		}
	}
	return p
}
