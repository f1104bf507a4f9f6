package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestProblemOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range []Model{
		newDenseTest(rng, 3, 4, 2, 5, false, 0.1),
		newLogisticTest(2, 50, 6, 4, 2, 5),
	} {
		p := ProblemOf(m)
		if p.Blocks != m.Blocks() || p.Graph != m.Graph() || p.Graph == nil || p.Graph.N != 5 {
			t.Errorf("%T: problem %+v", m, p)
		}
		if p.Blocks.Len() != m.NumParams() {
			t.Errorf("%T: blocks cover %d of %d params", m, p.Blocks.Len(), m.NumParams())
		}
		x := make([]float64, m.NumParams())
		m.Init(x, rng)
		// Local plus the Driver's L2 term is LocalLoss.
		g1, g2 := make([]float64, len(x)), make([]float64, len(x))
		a, b := p.Local(g1, x), m.LocalLoss(g2, x)
		var sq float64
		for i, v := range x {
			sq += v * v
			g1[i] += p.L2 * v
		}
		if a += 0.5 * p.L2 * sq; math.Abs(a-b) > 1e-13*math.Abs(b) {
			t.Errorf("%T: Local + L2 term %v != LocalLoss %v", m, a, b)
		}
		for i := range g1 {
			if math.Abs(g1[i]-g2[i]) > 1e-13*(1+math.Abs(g2[i])) {
				t.Fatalf("%T: grad[%d] %v != %v", m, i, g1[i], g2[i])
			}
		}
	}
}
