package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// recorder is a Method that records the gradient it is given and leaves x.
type recorder struct{ g []float64 }

func (r *recorder) Init(n int) { r.g = make([]float64, n) }
func (r *recorder) Begin(int)  {}
func (r *recorder) Update(x, g []float64, off int) {
	copy(r.g[off:off+len(g)], g)
}

// fusedGraphs are the couplings the fused pass distinguishes: none, a chain
// (with unequal weights) and a graph that is not a chain.
func fusedGraphs(T int) []struct {
	name string
	g    *Graph
} {
	w := make([]float64, T-1)
	for k := range w {
		w[k] = 0.5 + float64(k%3)
	}
	cyc := []Edge{{T - 1, 0, 0.7}}
	for k := 0; k+1 < T; k++ {
		cyc = append(cyc, Edge{k, k + 1, 1 + 0.1*float64(k)})
	}
	cycle, err := NewGraph(T, cyc)
	if err != nil {
		panic(err)
	}
	return []struct {
		name string
		g    *Graph
	}{{"none", nil}, {"chain", ChainWeights(w)}, {"cycle", cycle}}
}

// TestFusedGradient checks the gradient the fused pass hands to the Method
// (local + L2 + psi) against finite differences of the loss the Driver reports.
func TestFusedGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 1))
	// N*D > chainSpan, so rows are split over several chunks.
	b := Blocks{Offset: 3, T: 5, N: 130, D: 5}
	n := b.Offset + b.Len() + 4
	q := newQuad(rng, Blocks{T: b.T, N: b.N, D: b.D})
	local := func(grad, x []float64) float64 {
		clear(grad)
		l := q.local(grad[b.Offset:b.Offset+b.Len()], x[b.Offset:b.Offset+b.Len()])
		// Entries outside the blocks get a loss of their own.
		for i := range b.Offset {
			l += 0.5 * x[i] * x[i]
			grad[i] = x[i]
		}
		for i := b.Offset + b.Len(); i < n; i++ {
			l += x[i] * x[i] * x[i]
			grad[i] = 3 * x[i] * x[i]
		}
		return l
	}
	for _, gr := range fusedGraphs(b.T) {
		for _, l2 := range []float64{0, 0.3} {
			t.Run(fmt.Sprintf("%s/l2=%v", gr.name, l2), func(t *testing.T) {
				p := Problem{Local: local, Blocks: b, Graph: gr.g, L2: l2}
				x := randVec(rng, n, 1)
				rec := &recorder{}
				var loss float64
				d := &Driver{Method: rec, Pool: testPool(2)}
				if _, err := d.Run(p, x, 1, func(it *Iter) error { loss = it.Loss; return nil }); err != nil {
					t.Fatal(err)
				}
				total := func(x []float64) float64 {
					l := local(make([]float64, n), x)
					if gr.g != nil {
						l += Psi(x, b, gr.g)
					}
					var s float64
					for _, v := range x[b.Offset : b.Offset+b.Len()] {
						s += v * v
					}
					return l + 0.5*l2*s
				}
				if r := relErr(loss, total(x)); r > 1e-12 {
					t.Fatalf("Driver loss %v, direct %v", loss, total(x))
				}
				idx := []int{0, 2, 3, 4, 700, b.Offset + b.Len() - 1, n - 1}
				for k := 0; k < 20; k++ {
					idx = append(idx, rng.IntN(n))
				}
				checkGrad(t, gr.name, total, x, rec.g, idx, 2e-5) // a wrong term is off by O(0.1)
			})
		}
	}
}

// TestFusedMatchesReference: the fused pass updates x exactly (bit for bit)
// as adding the L2 gradient, then AddPsiGrad, then Step; psi and the L2 term
// agree to rounding; it leaves the gradient buffer zeroed for a local loss
// that adds into it; at any worker count, with and without the AVX kernels.
func TestFusedMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 1))
	for _, b := range []Blocks{{Offset: 2, T: 6, N: 150, D: 4}, {Offset: 1, T: 5, N: 51, D: 3}} { // rows of 600 and 153 entries (a tail)
		t.Run(fmt.Sprintf("N=%d,D=%d", b.N, b.D), func(t *testing.T) { testFusedMatchesReference(t, rng, b) })
	}
}

func testFusedMatchesReference(t *testing.T, rng *rand.Rand, b Blocks) {
	n := b.Offset + b.Len() + 3
	methods := []struct {
		name string
		m    func() Method
	}{
		{"GD", func() Method { return &GD{Rate: Constant(0.05)} }},
		{"GDClip", func() Method { return &GD{Rate: Constant(0.05), Clip: 0.5} }},
		{"AdaGrad", func() Method { return &AdaGrad{Rate: Constant(0.1)} }},
		{"Adam", func() Method { return &Adam{Rate: Schedule{Rho0: 0.05, S0: 3, Kappa: 0.5}} }},
	}
	localGrad := randVec(rng, n, 1)
	// local adds into grad: the Driver must hand it a zeroed buffer.
	local := func(grad, x []float64) float64 {
		for i := range grad {
			grad[i] += localGrad[i] * math.Sin(x[i])
		}
		return 1
	}
	x0 := randVec(rng, n, 1)
	for _, m := range methods {
		for _, gr := range fusedGraphs(b.T) {
			for _, l2 := range []float64{0, 0.25} {
				t.Run(fmt.Sprintf("%s/%s/l2=%v", m.name, gr.name, l2), func(t *testing.T) {
					const steps = 3
					ref := slices.Clone(x0)
					rm := m.m()
					rm.Init(n)
					grad := make([]float64, n)
					var refPsi, refLocal []float64
					for s := range steps {
						clear(grad)
						l := local(grad, ref)
						var sq float64
						for i := b.Offset; i < b.Offset+b.Len(); i++ {
							sq += ref[i] * ref[i]
							grad[i] += l2 * ref[i]
						}
						var psi float64
						if gr.g != nil {
							psi = AddPsiGrad(grad, ref, b, gr.g)
						}
						Step(rm, ref, grad, s)
						refPsi = append(refPsi, psi)
						refLocal = append(refLocal, l+0.5*l2*sq)
					}
					avx := useAVX
					defer func() { useAVX = avx }()
					for _, w := range []int{1, 2, 3} {
						useAVX = avx && w != 2 // the scalar loops at 2 workers
						x := slices.Clone(x0)
						var k int
						d := &Driver{Method: m.m(), Pool: testPool(w)}
						_, err := d.Run(Problem{Local: local, Blocks: b, Graph: gr.g, L2: l2}, x, steps, func(it *Iter) error {
							if relErr(it.Psi, refPsi[k]) > 1e-13 || relErr(it.Local, refLocal[k]) > 1e-13 {
								t.Errorf("%d workers, step %d: psi %v local %v, reference %v %v", w, k, it.Psi, it.Local, refPsi[k], refLocal[k])
							}
							k++
							return nil
						})
						if err != nil {
							t.Fatal(err)
						}
						for i := range x {
							if x[i] != ref[i] {
								t.Fatalf("%d workers: x[%d] = %v, reference %v", w, i, x[i], ref[i])
							}
						}
					}
				})
			}
		}
	}
}
